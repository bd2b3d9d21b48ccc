#!/usr/bin/env python3
"""Lists the HSA API table entries gtap wraps, read from the installed
hsa_api_trace.h: every `decltype(NAME)* NAME_fn;` field of CoreApiTable and
AmdExtTable, in table order. Writes one X-macro line per entry:

    GTAP_HSA_ENTRY(TABLE_TYPE, NAME, ID, HOOKED)

where ID is gtap's function id within the HSA range (core entries first, then
the AMD extension's) and HOOKED is 1 for the names listed in the hooks file
(interpose/hsa/hooks.cpp defines `hooks::NAME` for those), else 0.
"""
import argparse
import re
import sys


def table_entries(header_text, table):
    match = re.search(r"struct\s+%s\s*\{(.*?)\n\};" % table, header_text, re.S)
    if not match:
        sys.exit(f"generate_entries.py: no struct {table} in the header")
    names = re.findall(r"decltype\((\w+)\)\s*\*\s*(\w+)_fn\s*;", match.group(1))
    for name, field in names:
        if name != field:
            sys.exit(f"generate_entries.py: {table}: field {field}_fn holds {name}")
    if not names:
        sys.exit(f"generate_entries.py: {table} has no entries")
    return [n for n, _ in names]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--header", required=True, help="hsa/hsa_api_trace.h")
    parser.add_argument("--hooks", required=True, help="file listing the hooked names, one per line")
    parser.add_argument("--output", required=True)
    args = parser.parse_args()

    with open(args.header, encoding="utf-8") as f:
        text = f.read()
    with open(args.hooks, encoding="utf-8") as f:
        hooked = {line.split("#")[0].strip() for line in f} - {""}

    lines = [f"// Generated from {args.header} by generate_entries.py; do not edit."]
    seen = set()
    next_id = 0
    for table in ("CoreApiTable", "AmdExtTable"):
        for name in table_entries(text, table):
            lines.append(f"GTAP_HSA_ENTRY({table}, {name}, {next_id}, {1 if name in hooked else 0})")
            seen.add(name)
            next_id += 1
    missing = sorted(hooked - seen)
    if missing:
        sys.exit("generate_entries.py: hooked functions not in the tables: " + ", ".join(missing))
    content = "\n".join(lines) + "\n"
    try:
        with open(args.output, encoding="utf-8") as f:
            if f.read() == content:
                return
    except FileNotFoundError:
        pass
    with open(args.output, "w", encoding="utf-8") as f:
        f.write(content)


if __name__ == "__main__":
    main()
