#!/usr/bin/env python3
"""Lists the HSA API table entries gtap wraps, read from the installed
hsa_api_trace.h: every `decltype(NAME)* NAME_fn;` field of CoreApiTable and
AmdExtTable, in table order. Writes one X-macro line per entry:

    GTAP_HSA_ENTRY(TABLE_TYPE, NAME, ID, HOOKED, SLOT_BEFORE_5_6, SLOT_FROM_5_6)

where ID is gtap's function id within the HSA range (core entries first, then
the AMD extension's) and HOOKED is 1 for the names listed in the hooks file
(interpose/hsa/hooks/*.cpp define `hooks::NAME` for those), else 0.

The two SLOT values are the entry's index (after the version) in the two
layouts ROCr's tables have had, whatever headers gtap is built with; -1 where
the entry has no place. The core table never changed order (ROCr 5.0 to 6.2:
the same 125 entries). The AMD extension table did once: ROCr 5.6 put
hsa_amd_memory_async_copy_on_engine and hsa_amd_memory_copy_engine_status
right after hsa_amd_memory_async_copy (ROCR-Runtime src/inc/hsa_api_trace.h,
rocm-5.5.0 against rocm-5.6.0), moving every later entry two places, while the
table's major version stayed 1; every other change (5.5, 5.6, 6.0, 6.1, 6.2)
appended entries.
"""

# ROCr 5.6's insertion into AmdExtTable: these entries, in this order, follow
# hsa_amd_memory_async_copy from 5.6 on.
INSERTED_5_6 = ["hsa_amd_memory_async_copy_on_engine", "hsa_amd_memory_copy_engine_status"]
INSERTED_AFTER = "hsa_amd_memory_async_copy"


def slots(table, names):
    """(slot before 5.6, slot from 5.6) for each name, in header order."""
    if table != "AmdExtTable":
        return [(i, i) for i in range(len(names))]
    if INSERTED_AFTER not in names:
        sys.exit(f"generate_entries.py: AmdExtTable lacks {INSERTED_AFTER}")
    anchor = names.index(INSERTED_AFTER)
    present = [n for n in INSERTED_5_6 if n in names]
    if present and names[anchor + 1:anchor + 1 + len(INSERTED_5_6)] != INSERTED_5_6:
        sys.exit("generate_entries.py: AmdExtTable's copy-engine entries are not where ROCr 5.6 put them")
    result = []
    for i, name in enumerate(names):
        if present:  # headers of ROCr 5.6 or later
            if name in INSERTED_5_6:
                result.append((-1, i))
            else:
                result.append((i - len(INSERTED_5_6) if i > anchor else i, i))
        else:  # older headers
            result.append((i, i + len(INSERTED_5_6) if i > anchor else i))
    return result

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
        names = table_entries(text, table)
        for name, (before, since) in zip(names, slots(table, names)):
            lines.append(f"GTAP_HSA_ENTRY({table}, {name}, {next_id}, {1 if name in hooked else 0}, {before}, {since})")
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
