#!/usr/bin/env python3
"""Writes gtap's slot table for one IREE version: for every
`iree_hal_<iface>_vtable_t` struct declared in IREE's HAL headers, the
function-pointer members in declaration order, which is their slot order
(slot N sits at byte offset 8*N of the vtable on 64-bit targets).

Usage:
    generate_slot_tables.py --iree-src DIR --version NAME [--commit SHA] [--output FILE]

DIR is an IREE source root, its runtime/src/iree directory, or the
runtime/src/iree/hal directory itself. Every header under hal/ is scanned.
A member that is itself a vtable struct (the HAL semaphore vtable embeds
`iree_async_semaphore_vtable_t async;` at offset 0) is flattened in place;
such structs are looked up in the headers under runtime/src/iree.

Output format (one file per IREE version, default slots/<NAME>.txt next to
this script):

    # comment lines start with '#'
    iree <NAME>
    commit <SHA or unknown>
    vtable <iface> <C struct name> <header path relative to runtime/src> <slot count>
    <slot> <method>\t<return type>\t(<C parameter list>)[\tvia <member> <C struct name>]
    ...
    struct <iface> <C struct name> <header path relative to runtime/src>
    field <member> <byte offset>
    ...

`<iface>` is the struct name without `iree_hal_` and `_vtable_t`. The
optional last field names the embedded struct a flattened slot comes from.
Vtables are listed sorted by iface; slots in order.

The `struct` lines give the byte offsets (x86-64) of the object members gtap
reads directly: iree_hal_local_executable_t's dispatch_ptrs, export_count and
export_names (IREE's CPU drivers after 3.11). Offsets are counted from the
members' types; a member of a type whose size is not known here, an array or
a preprocessor line ends the count, and members past it are not listed. A
struct with none of those members listed has no `struct` line.

Anything in a vtable body that is neither a function pointer
`RET (API_PTR* NAME)(PARAMS);` nor an embedded `iree_*_vtable_t NAME;` is an
error: a slot table that silently skipped a member would give wrong offsets.
"""
import argparse
import os
import re
import subprocess
import sys

PROG = "generate_slot_tables.py"


def fail(msg):
    sys.exit(f"{PROG}: error: {msg}")


def resolve_roots(src):
    """Returns (iree_dir, hal_dir): runtime/src/iree and its hal/ child."""
    src = os.path.abspath(src)
    candidates = [
        os.path.join(src, "runtime", "src", "iree"),
        os.path.join(src, "src", "iree"),
        src,
        os.path.dirname(src),
    ]
    for iree_dir in candidates:
        hal = os.path.join(iree_dir, "hal")
        if os.path.isfile(os.path.join(hal, "resource.h")) and os.path.isfile(
                os.path.join(hal, "device.h")):
            return iree_dir, hal
    fail(f"{src}: no IREE HAL headers (hal/resource.h, hal/device.h) found")


def strip_comments(text):
    """Removes // and /* */ comments, keeping string literals and newlines."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "/" and i + 1 < n and text[i + 1] == "/":
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c == "/" and i + 1 < n and text[i + 1] == "*":
            j = text.find("*/", i + 2)
            if j < 0:
                fail("unterminated /* comment")
            out.append("\n" * text.count("\n", i, j))
            i = j + 2
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


STRUCT_OPEN = re.compile(r"\bstruct\s+(iree_\w+_vtable_t)\s*\{")


def struct_bodies(text):
    """Yields (struct name, body text, line number) for each vtable struct."""
    for m in STRUCT_OPEN.finditer(text):
        depth, i = 1, m.end()
        while depth and i < len(text):
            if text[i] == "{":
                depth += 1
            elif text[i] == "}":
                depth -= 1
            i += 1
        if depth:
            fail(f"struct {m.group(1)}: no closing brace")
        yield m.group(1), text[m.end():i - 1], text.count("\n", 0, m.start()) + 1


def split_members(body):
    """Splits a struct body at top-level ';'."""
    members, depth, start = [], 0, 0
    for i, c in enumerate(body):
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c in "{}":
            raise ValueError("nested braces")
        elif c == ";" and depth == 0:
            members.append(body[start:i])
            start = i + 1
    if body[start:].strip():
        raise ValueError(f"trailing text without ';': {body[start:].strip()!r}")
    return members


def squash(s):
    s = " ".join(s.split())
    s = re.sub(r"\(\s+", "(", s)
    s = re.sub(r"\s+\)", ")", s)
    return s


FUNC_PTR = re.compile(
    r"^(?P<ret>[\w\s\*]+?)\s*\(\s*(?:IREE_API_PTR\s*)?\*\s*(?P<name>\w+)\s*\)\s*"
    r"\((?P<params>.*)\)$", re.S)
EMBEDDED = re.compile(r"^(?:struct\s+)?(?P<type>iree_\w+_vtable_t)\s+(?P<name>\w+)$")


class Index:
    """All vtable structs declared in the headers under runtime/src/iree."""

    def __init__(self, iree_dir):
        self.iree_dir = iree_dir
        self.src_dir = os.path.dirname(iree_dir)
        self.structs = {}  # name -> (body, header path relative to src_dir, line)
        for root, dirs, files in os.walk(iree_dir):
            dirs.sort()
            for f in sorted(files):
                if not f.endswith(".h"):
                    continue
                path = os.path.join(root, f)
                with open(path, encoding="utf-8", errors="replace") as fh:
                    raw = fh.read()
                if "_vtable_t" not in raw:
                    continue
                text = strip_comments(raw)
                rel = os.path.relpath(path, self.src_dir)
                for name, body, line in struct_bodies(text):
                    if name in self.structs and squash(self.structs[name][0]) != squash(body):
                        fail(f"{name} is declared differently in {self.structs[name][1]} and {rel}")
                    self.structs.setdefault(name, (body, rel, line))

    def slots(self, name, via=None, seen=()):
        """Returns [(method, return type, params, via)] for struct `name`."""
        if name in seen:
            fail(f"{name} embeds itself")
        if name not in self.structs:
            fail(f"{name} is embedded but not declared in any header under {self.iree_dir}")
        body, rel, line = self.structs[name]
        where = f"{rel}:{line}: {name}"
        if re.search(r"^\s*#", body, re.M):
            fail(f"{where}: preprocessor lines inside the vtable; the slot layout "
                 "would depend on build options")
        try:
            members = split_members(body)
        except ValueError as e:
            fail(f"{where}: {e}")
        out = []
        for raw in members:
            member = raw.strip()
            if not member:
                fail(f"{where}: empty member (stray ';')")
            m = FUNC_PTR.match(member)
            if m:
                ret = squash(m.group("ret"))
                params = squash(m.group("params"))
                out.append((m.group("name"), ret, f"({params})", via))
                continue
            m = EMBEDDED.match(squash(member))
            if m:
                inner = m.group("type")
                label = m.group("name") if via is None else f"{via}.{m.group('name')}"
                out.extend(self.slots(inner, via=(label, inner), seen=seen + (name,)))
                continue
            fail(f"{where}: member not understood: {squash(member)!r}")
        if not out:
            fail(f"{where}: no slots")
        return out


# Object members gtap reads, per struct: (struct, iface, header under runtime/src/iree, members).
OBJECT_FIELDS = [
    ("iree_hal_local_executable_t", "local_executable", os.path.join("hal", "local", "local_executable.h"),
     ("dispatch_ptrs", "export_count", "export_names")),
]
# (size, alignment) of the member types that come before them; pointers are 8.
TYPE_SIZES = {
    "iree_hal_resource_t": (16, 8),  # ref count (4, padded to 8) and the vtable pointer
    "iree_allocator_t": (16, 8),     # self and ctl
    "iree_host_size_t": (8, 8),
    "uint64_t": (8, 8),
    "int64_t": (8, 8),
    "uint32_t": (4, 4),
    "int32_t": (4, 4),
}
MEMBER = re.compile(r"^(?P<type>(?:const\s+)?(?:struct\s+)?\w+(?:\s*\*\s*(?:const\s*)?)*)\s*(?P<name>\w+)$")


def object_fields(iree_dir):
    """Yields (iface, struct, header relative to runtime/src, [(member, offset)])."""
    for struct, iface, header, wanted in OBJECT_FIELDS:
        path = os.path.join(iree_dir, header)
        if not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = strip_comments(fh.read())
        m = re.search(r"\bstruct\s+" + struct + r"\s*\{", text)
        if not m:
            fail(f"{header}: {struct} not found")
        end = text.find("}", m.end())
        body = text[m.end():end]
        if "{" in body:
            fail(f"{header}: {struct}: nested braces")
        found, offset = [], 0
        for raw in body.split(";"):
            member = squash(raw)
            if not member:
                continue
            if member.startswith("#"):
                break  # the layout past here depends on build options
            mm = MEMBER.match(member)
            if not mm:
                break  # an array, a function pointer, a bit field: sizes not counted here
            kind = mm.group("type")
            if "*" in kind:
                size, align = 8, 8
            elif kind in TYPE_SIZES:
                size, align = TYPE_SIZES[kind]
            else:
                break
            offset = (offset + align - 1) // align * align
            if mm.group("name") in wanted:
                found.append((mm.group("name"), offset))
            offset += size
        if found:
            yield iface, struct, os.path.relpath(path, os.path.dirname(iree_dir)), found


def git_commit(path):
    try:
        r = subprocess.run(["git", "-C", path, "rev-parse", "HEAD"], capture_output=True,
                           text=True, check=True)
        return r.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--iree-src", required=True,
                        help="IREE source root, runtime/src/iree, or runtime/src/iree/hal")
    parser.add_argument("--version", required=True, help="name of the IREE version (file name)")
    parser.add_argument("--commit", help="IREE commit the sources come from (default: git HEAD of DIR)")
    parser.add_argument("--output", help="output file (default: slots/<version>.txt next to this script)")
    args = parser.parse_args()
    if not re.fullmatch(r"[\w.+-]+", args.version):
        fail(f"--version {args.version!r}: use letters, digits, '.', '+', '-', '_'")

    iree_dir, hal_dir = resolve_roots(args.iree_src)
    commit = args.commit or git_commit(iree_dir) or "unknown"
    index = Index(iree_dir)
    hal_prefix = os.path.relpath(hal_dir, index.src_dir) + os.sep
    names = sorted(n for n, (_, rel, _) in index.structs.items()
                   if re.fullmatch(r"iree_hal_\w+_vtable_t", n) and rel.startswith(hal_prefix))
    for required in ("iree_hal_resource_vtable_t", "iree_hal_device_vtable_t",
                     "iree_hal_command_buffer_vtable_t", "iree_hal_semaphore_vtable_t"):
        if required not in names:
            fail(f"{required} not found under {hal_dir}")

    lines = [
        f"# gtap HAL slot table: IREE {args.version} ({commit})",
        "# Generated by interpose/hal/generate_slot_tables.py from the IREE HAL headers.",
        "# vtable <iface> <struct> <header> <slot count>",
        "# <slot> <method>\\t<return type>\\t(<parameters>)[\\tvia <member> <embedded struct>]",
        f"iree {args.version}",
        f"commit {commit}",
    ]
    for name in sorted(names, key=lambda n: n[len("iree_hal_"):-len("_vtable_t")]):
        slots = index.slots(name)
        seen = {}
        for i, (method, _, _, _) in enumerate(slots):
            if method in seen:
                fail(f"{name}: method {method} in slots {seen[method]} and {i}")
            seen[method] = i
        iface = name[len("iree_hal_"):-len("_vtable_t")]
        lines.append(f"vtable {iface} {name} {index.structs[name][1]} {len(slots)}")
        for i, (method, ret, params, via) in enumerate(slots):
            line = f"{i} {method}\t{ret}\t{params}"
            if via:
                line += f"\tvia {via[0]} {via[1]}"
            lines.append(line)
    for iface, struct, rel, fields in object_fields(iree_dir):
        lines.append("# struct <iface> <struct> <header>, then field <member> <byte offset>: object members gtap reads")
        lines.append(f"struct {iface} {struct} {rel}")
        lines.extend(f"field {name} {offset}" for name, offset in fields)
    content = "\n".join(lines) + "\n"

    output = args.output or os.path.join(os.path.dirname(os.path.abspath(__file__)), "slots",
                                         f"{args.version}.txt")
    os.makedirs(os.path.dirname(os.path.abspath(output)), exist_ok=True)
    with open(output, "w", encoding="utf-8") as f:
        f.write(content)
    print(f"{PROG}: {output}: {len(names)} vtables, "
          f"{sum(1 for l in lines if l[:1].isdigit())} slots")


if __name__ == "__main__":
    main()
