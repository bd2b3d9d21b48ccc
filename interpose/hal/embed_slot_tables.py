#!/usr/bin/env python3
"""Turns the HAL slot tables (interpose/hal/slots/*.txt, written by
generate_slot_tables.py) into the C++ data slot_tables.cpp includes: one
SlotLayout per (IREE version, vtable interface) with its methods in slot order,
and one ObjectLayout per (IREE version, object) with the byte offsets of the
members gtap reads.

    embed_slot_tables.py --output hal_slot_tables.inc slots/3.3.0.txt slots/head-....txt ...
"""
import argparse
import re
import sys


# The argument shapes gtap decodes, per method: each parameter's type must
# hold the given text (None: any type). A method whose signature has another
# shape gets variant 0 and is recorded as a call only.
QUEUE = ["iree_hal_device_t*", "iree_hal_queue_affinity_t", "iree_hal_semaphore_list_t", "iree_hal_semaphore_list_t"]
SHAPES = {
    # Device queue transfers: device, affinity, the wait and signal lists (by
    # value, on the stack), then six more, the fill's length third of them,
    # the others' fifth (IREE 3.0 to today).
    "queue_fill": [(1, QUEUE + [None] * 6)],
    "queue_update": [(1, QUEUE + [None] * 6)],
    "queue_copy": [(1, QUEUE + [None] * 6)],
    "queue_read": [(1, QUEUE + [None] * 6)],
    "queue_write": [(1, QUEUE + [None] * 6)],
    # IREE 3.0 has no flags (variant 1); later ones add them (variant 2).
    "queue_execute": [(1, QUEUE + ["iree_hal_command_buffer_t*", "iree_hal_buffer_binding_table_t"]),
                      (2, QUEUE + ["iree_hal_command_buffer_t*", "iree_hal_buffer_binding_table_t", None])],
    "queue_alloca": [(1, QUEUE + [None, "iree_hal_buffer_params_t params", "iree_device_size_t", "iree_hal_buffer_t**"]),
                     (2, QUEUE + [None, "iree_hal_buffer_params_t params", "iree_device_size_t", "flags",
                                  "iree_hal_buffer_t**"])],
    "queue_dealloca": [(1, QUEUE + ["iree_hal_buffer_t*"]), (2, QUEUE + ["iree_hal_buffer_t*", "flags"])],
    "queue_flush": [(1, ["iree_hal_device_t*", "iree_hal_queue_affinity_t"])],
    "wait_semaphores": [(1, ["iree_hal_device_t*", "iree_hal_wait_mode_t", "iree_hal_semaphore_list_t",
                             "iree_timeout_t"]),
                        (2, ["iree_hal_device_t*", "iree_hal_wait_mode_t", "iree_hal_semaphore_list_t",
                             "iree_timeout_t", "flags"])],
    "import_file": [(1, ["iree_hal_device_t*", "iree_hal_queue_affinity_t", "iree_hal_memory_access_t",
                         "iree_io_file_handle_t*", "flags", "iree_hal_file_t**"])],
    # Semaphores: the semaphore and a value first (signal adds a frontier in
    # today's IREE, wait a timeout and flags).
    "signal": [(1, ["semaphore_t*", "uint64_t"]), (1, ["semaphore_t*", "uint64_t", None])],
    "wait": [(1, ["semaphore_t*", "uint64_t", "iree_timeout_t"]),
             (1, ["semaphore_t*", "uint64_t", "iree_timeout_t", None])],
    # Command buffer commands (IREE 3.0 to today): buffer refs by value, on the stack.
    "fill_buffer": [(1, ["iree_hal_command_buffer_t*", "iree_hal_buffer_ref_t", "void*", "iree_host_size_t",
                         None])],
    "update_buffer": [(1, ["iree_hal_command_buffer_t*", "void*", "iree_host_size_t", "iree_hal_buffer_ref_t",
                           None])],
    "copy_buffer": [(1, ["iree_hal_command_buffer_t*", "iree_hal_buffer_ref_t", "iree_hal_buffer_ref_t", None])],
    # The program's callbacks, by value in two registers: a host call's
    # {fn, user_data} (IREE 3.7 to today), a buffer's release callback.
    "queue_host_call": [(1, QUEUE + ["iree_hal_host_call_t", None, "flags"])],
    "import_buffer": [(1, ["iree_hal_allocator_t*", "iree_hal_buffer_params_t*", "iree_hal_external_buffer_t*",
                           "iree_hal_buffer_release_callback_t", "iree_hal_buffer_t**"])],
    # A local executable running one workgroup (IREE's CPU drivers).
    "issue_call": [(1, ["iree_hal_local_executable_t*", "iree_host_size_t", "dispatch_state_v0_t*",
                        "workgroup_state_v0_t*", "uint32_t"])],
}


def variant(method, params):
    """Which argument layout a method has, where gtap reads its arguments:
    command_buffer dispatch takes its workgroup count in a by-value
    iree_hal_dispatch_config_t from IREE 3.7 (1), by pointer before (0);
    the methods in SHAPES are decoded when their parameters have a shape
    listed there (its variant), else not (0)."""
    if method == "dispatch" and "iree_hal_dispatch_config_t" in params:
        return 1
    args = [a.strip() for a in params.strip().strip("()").split(",")] if params.strip("() ") else []
    for number, shape in SHAPES.get(method, []):
        if len(args) == len(shape) and all(t is None or t in a for t, a in zip(shape, args)):
            return number
    return 0


def parse(path):
    version, layouts, objects, current, fields = None, [], [], None, None
    for n, line in enumerate(open(path, encoding="utf-8"), 1):
        line = line.rstrip("\n")
        if not line or line.startswith("#"):
            continue
        if line.startswith("iree "):
            version = line.split(None, 1)[1].strip()
        elif line.startswith("commit "):
            continue
        elif line.startswith("vtable "):
            parts = line.split()
            if len(parts) < 2:
                sys.exit(f"{path}:{n}: a vtable line needs an interface name")
            current = {"interface": parts[1], "count": int(parts[-1]) if parts[-1].isdigit() else None,
                       "methods": []}
            layouts.append(current)
            fields = None
        elif line.startswith("struct "):
            parts = line.split()
            if len(parts) < 2:
                sys.exit(f"{path}:{n}: a struct line needs an interface name")
            fields = []
            objects.append({"interface": parts[1], "fields": fields})
            current = None
        elif line.startswith("field "):
            parts = line.split()
            if fields is None or len(parts) != 3 or not parts[2].isdigit():
                sys.exit(f"{path}:{n}: not a field line after a struct line: {line!r}")
            fields.append((parts[1], int(parts[2])))
        else:
            m = re.match(r"(\d+) (\w+)\t([^\t]+)\t", line + "\t")
            if not m or current is None:
                sys.exit(f"{path}:{n}: not a slot line: {line!r}")
            index = int(m.group(1))
            if index != len(current["methods"]):
                sys.exit(f"{path}:{n}: slot {index} out of order")
            params = line.split("\t")[2] if line.count("\t") >= 2 else ""
            current["methods"].append((m.group(2), m.group(3).strip() == "iree_status_t", variant(m.group(2), params)))
    if version is None:
        sys.exit(f"{path}: no 'iree VERSION' line")
    for layout in layouts:
        if layout["count"] is not None and layout["count"] != len(layout["methods"]):
            sys.exit(f"{path}: vtable {layout['interface']} declares {layout['count']} slots, "
                     f"lists {len(layout['methods'])}")
    return version, layouts, objects


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--output", required=True)
    ap.add_argument("tables", nargs="+")
    a = ap.parse_args()
    out = ["// Generated by embed_slot_tables.py from interpose/hal/slots/*.txt; do not edit.", ""]
    entries, object_entries = [], []
    for k, path in enumerate(sorted(a.tables)):
        version, layouts, objects = parse(path)
        for j, obj in enumerate(objects):
            name = f"kFields_{k}_{j}"
            out.append(f"const ObjectField {name}[] = {{")
            out.extend(f'    {{"{field}", {offset}}},' for field, offset in obj["fields"])
            out.append("};")
            object_entries.append(f'    {{"{version}", "{obj["interface"]}", {name}, {len(obj["fields"])}}},')
        for j, layout in enumerate(layouts):
            name = f"kMethods_{k}_{j}"
            out.append(f"const SlotMethod {name}[] = {{")
            for method, status, var in layout["methods"]:
                out.append(f'    {{"{method}", {"true" if status else "false"}, {var}}},')
            out.append("};")
            entries.append(f'    {{"{version}", "{layout["interface"]}", {name}, {len(layout["methods"])}}},')
    out.append("")
    out.append("const SlotLayout kLayouts[] = {")
    out.extend(entries)
    out.append("};")
    out.append("")
    # Never empty: a zero-length array is not C++.
    out.append("const ObjectLayout kObjects[] = {")
    out.extend(object_entries)
    out.append('    {"", "", nullptr, 0},')
    out.append("};")
    with open(a.output, "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
