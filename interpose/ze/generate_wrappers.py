#!/usr/bin/env python3
"""Generates gtap's Level Zero wrappers from the installed API headers.

Reads ze_api.h, zet_api.h, zes_api.h (every exported function) and
ze_ddi.h, zet_ddi.h, zes_ddi.h (the proc-address tables), and writes one C++
source with:
  - the function name table registered with gtap's core,
  - an exported wrapper per function (begin record, real call, end record),
  - wrappers for every *GetProcAddrTable that put gtap's wrappers in the table,
  - a sorted name -> wrapper table for dlsym and extension-address lookups,
and a header of function ids with a GTAP_ZE_HAVE_<name> macro per function,
so hand-written hooks of newer functions compile only against headers that
have them. A hook listed with a trailing `?` is optional: dropped when the
headers lack the function. A new header version is a rebuild, not an edit.

With --sim-functions it also writes the dispatch tables of the simulated
driver in tests/sim/ze (see emit_sim_driver).
"""
import argparse
import re
import sys
from pathlib import Path

API_FILES = [("ze_api.h", "levelZero"), ("zet_api.h", "levelZeroTools"), ("zes_api.h", "levelZeroSysman")]
DDI_FILES = ["ze_ddi.h", "zet_ddi.h", "zes_ddi.h"]

FUNC_RE = re.compile(r"ZE_APIEXPORT\s+(\w+)\s+ZE_APICALL\s+(\w+)\s*\((.*?)\);", re.S)
GETTER_RE = re.compile(r"ZE_DLLEXPORT\s+ze_result_t\s+ZE_APICALL\s+(ze\w*Get\w*ProcAddrTable)\s*\((.*?)\);", re.S)
TABLE_RE = re.compile(r"typedef\s+struct\s+_(\w+_dditable_t)\s*\{(.*?)\}\s*\w+;", re.S)
FIELD_RE = re.compile(r"(\w+)_pfn(\w+)_t\s+(pfn\w+)\s*;")


def strip_comments(text):
    text = re.sub(r"///<[^\n]*", "", text)
    text = re.sub(r"//[^\n]*", "", text)
    return re.sub(r"/\*.*?\*/", "", text, flags=re.S)


def split_params(text):
    text = " ".join(strip_comments(text).split())
    if text in ("", "void"):
        return []
    params, depth, cur = [], 0, ""
    for ch in text:
        if ch == "," and depth == 0:
            params.append(cur.strip())
            cur = ""
            continue
        depth += ch in "([" and 1 or 0
        depth -= ch in ")]" and 1 or 0
        cur += ch
    params.append(cur.strip())
    out = []
    for p in params:
        if "(" in p or "[" in p:
            sys.exit(f"unsupported parameter form: {p!r}")
        m = re.match(r"^(.*?)(\w+)$", p)
        if not m or not m.group(1).strip():
            sys.exit(f"cannot split parameter: {p!r}")
        out.append((m.group(1).strip(), m.group(2)))
    return out


def parse_api(include_dir):
    functions = []
    for name, api in API_FILES:
        text = (include_dir / name).read_text()
        for ret, fname, params in FUNC_RE.findall(text):
            functions.append({"name": fname, "ret": ret, "params": split_params(params), "api": api})
    return functions


def parse_ddi(include_dir):
    tables, getters = {}, []
    for name in DDI_FILES:
        text = (include_dir / name).read_text()
        for tname, body in TABLE_RE.findall(text):
            tables[tname] = [(f"{prefix}{rest}", field) for prefix, rest, field in FIELD_RE.findall(body)]
        for gname, params in GETTER_RE.findall(text):
            p = split_params(params)
            table_type = p[1][0].rstrip("*").strip()
            getters.append({"name": gname, "params": p, "table": table_type.removesuffix("_t") + "_t"})
    return tables, getters


def api_of(name):
    if name.startswith("zet"):
        return "levelZeroTools"
    if name.startswith("zes"):
        return "levelZeroSysman"
    return "levelZero"


# Level Zero calls that change nothing the device computes (queries, hints,
# residency): replay does not need them. Every other ze* call without a hook
# writes an `unsupported` replay record, so replay refuses a capture it
# cannot reproduce instead of skipping work.
NEUTRAL_PATTERN = re.compile(r"Get|Query|Suggest|CanAccessPeer|BuildLog")
NEUTRAL = {
    "zeInit", "zeInitDrivers", "zeContextMakeMemoryResident", "zeContextEvictMemory",
    "zeContextMakeImageResident", "zeContextEvictImage", "zeCommandListAppendMemoryPrefetch",
    "zeCommandListAppendMemAdvise", "zeKernelSetCacheConfig", "zeKernelSchedulingHintExp",
    "zeContextSystemBarrier", "zeDriverRTASFormatCompatibilityCheckExp",
}


# Entry points the runtime calls while it initialises (or that start it): a
# call to one of these from a runtime library not seen yet makes gtap look at
# the libraries loaded since (a layer, a driver).
RESCAN = {"zeInit", "zeInitDrivers", "zesInit", "zeDriverGetExtensionFunctionAddress"}


def replay_unsupported(name, hooked):
    if not name.startswith("ze") or name.startswith(("zet", "zes")) or name in hooked or name in NEUTRAL:
        return False
    if name.endswith("ProcAddrTable"):
        return False
    return name.startswith("zeCommandListAppend") or not NEUTRAL_PATTERN.search(name)


def emit(functions, tables, getters, hooked):
    known = {f["name"] for f in functions}
    for g in getters:
        if g["name"] not in known:
            functions.append({"name": g["name"], "ret": "ze_result_t", "params": g["params"], "api": api_of(g["name"])})
    index = {f["name"]: i for i, f in enumerate(functions)}
    getter_by_name = {g["name"]: g for g in getters}
    out = []
    w = out.append
    w("// Generated by interpose/ze/generate_wrappers.py from the Level Zero headers. Do not edit.")
    w("#include <level_zero/ze_api.h>")
    w("#include <level_zero/ze_ddi.h>")
    w("#include <level_zero/zes_api.h>")
    w("#include <level_zero/zes_ddi.h>")
    w("#include <level_zero/zet_api.h>")
    w("#include <level_zero/zet_ddi.h>")
    w('#include "call_scope.h"')
    w('#include "internal_error.h"')
    w('#include "ze_runtime.h"')
    w("")
    w("#define GTAP_EXPORT __attribute__((visibility(\"default\")))")
    w("")
    # Function ids are kZeFunctionBase + index, below the HSA front end's base.
    if len(functions) > 4096:
        sys.exit(f"generate_wrappers.py: {len(functions)} Level Zero functions do not fit below "
                 "kHsaFunctionBase (4096) in interpose/core/functions.h")
    w("namespace gtap::ze {")
    w(f"const size_t kFunctionCount = {len(functions)};")
    w("// The loader's entry point of each function, by index (resolveAll fills it).")
    w(f"void* g_real[{len(functions)}];")
    w("static_assert(core::kZeFunctionBase + kFunctionCount <= core::kHsaFunctionBase);")
    w("const core::FunctionInfo kFunctions[] = {")
    for f in functions:
        w(f'    {{"{f["name"]}", core::ApiKind::{f["api"]}}},')
    w("};")
    w("}  // namespace gtap::ze")
    w("")
    w("namespace gtap::ze {")
    w("// Hand-written hooks (hooks/*.cpp): each makes the real call itself.")
    for f in functions:
        if f["name"] in hooked:
            decl = ", ".join(f"{t} {n}" for t, n in f["params"])
            types = ", ".join(t for t, _ in f["params"])
            w(f"{f['ret']} hook_{f['name']}(core::RealCall<{f['ret']}(ZE_APICALL*)({types})>& real, "
              f"core::CallScope& scope, {decl});")
    w("void replayUnsupported(const core::CallScope& scope, const char* name);")
    w("}  // namespace gtap::ze")
    w("")
    w('extern "C" {')
    for f in functions:
        i = index[f["name"]]
        decl = ", ".join(f"{t} {n}" for t, n in f["params"])
        types = ", ".join(t for t, _ in f["params"])
        args = ", ".join(n for _, n in f["params"])
        w(f"GTAP_EXPORT {f['ret']} ZE_APICALL {f['name']}({decl}) {{")
        w(f"  using Fn = {f['ret']}(ZE_APICALL*)({types});")
        w(f"  auto real = reinterpret_cast<Fn>(gtap::ze::realFunction({i}));")
        w("  if (!real) return ZE_RESULT_ERROR_UNINITIALIZED;")
        # A call from the loader, a layer or a driver (the loader filling its
        # own tables while it initialises) is the runtime's, never the
        # program's, whatever set or did not set the guard bit before it.
        rescan = "true" if f["name"] in RESCAN or f["name"].endswith("ProcAddrTable") else "false"
        w(f"  if (__builtin_expect(gtap::ze::calledByRuntime(__builtin_return_address(0), {rescan}), 0))")
        w(f"    return real({args});")
        w(f"  gtap::core::CallScope scope(gtap::core::kGuardZe, gtap::core::kZeFunctionBase + {i});")
        if f["name"] in hooked:
            # The hook's own work may fail; the program's call may not.
            hook_args = ", ".join(["call", "scope"] + [n for _, n in f["params"]])
            w(f"  gtap::core::RealCall<Fn> call(real);")
            w(f"  {f['ret']} result;")
            w(f"  try {{")
            w(f"    result = gtap::ze::hook_{f['name']}({hook_args});")
            w(f"  }} GTAP_CATCH_INTERNAL {{")
            recover_args = ", ".join([f'"the Level Zero hook of {f["name"]}"'] + [n for _, n in f["params"]])
            w(f"    result = call.recover({recover_args});")
            w(f"  }}")
        else:
            w(f"  {f['ret']} result = real({args});")
            if replay_unsupported(f["name"], hooked):
                w(f'  if (result == ZE_RESULT_SUCCESS) gtap::ze::replayUnsupported(scope, "{f["name"]}");')
        g = getter_by_name.get(f["name"])
        if g:
            table_var = f["params"][1][1]
            w(f"  if (result == ZE_RESULT_SUCCESS && {table_var} && !scope.nested()) {{")
            for fn_name, field in tables[g["table"]]:
                if fn_name in index:
                    w(f"    if ({table_var}->{field}) {table_var}->{field} = &{fn_name};")
            w("  }")
        w("  scope.end(static_cast<int32_t>(result));")
        w("  return result;")
        w("}")
        w("")
    w('}  // extern "C"')
    w("")
    w("namespace gtap::ze {")
    w("const NamedWrapper kWrappers[] = {")
    for f in sorted(functions, key=lambda f: f["name"]):
        w(f'    {{"{f["name"]}", {index[f["name"]]}, reinterpret_cast<void*>(&{f["name"]})}},')
    w("};")
    w("const size_t kWrapperCount = sizeof(kWrappers) / sizeof(kWrappers[0]);")
    w("}  // namespace gtap::ze")
    return "\n".join(out) + "\n", len(functions)


VERSION_RE = re.compile(r"^(\d+)\.(\d+)$")


def read_sim_functions(path, names):
    """The simulated driver's list: `name [since]`, `name?` when optional.

    Returns (name, major, minor, optional) for every function the headers
    declare; an optional name the headers lack is dropped."""
    out = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        words = line.split("#")[0].split()
        if not words:
            continue
        name, optional = words[0].removesuffix("?"), words[0].endswith("?")
        since = words[1] if len(words) > 1 else "1.0"
        m = VERSION_RE.match(since)
        if len(words) > 2 or not m:
            sys.exit(f"{path}:{number}: expected `name[?] [major.minor]`, found {line.strip()!r}")
        if name not in names:
            if optional:
                continue
            sys.exit(f"{path}:{number}: {name} is not declared by these Level Zero headers")
        out.append((name, int(m.group(1)), int(m.group(2)), optional))
    return out


def emit_sim_driver(implemented, tables, getters, source_name):
    """The simulated driver's *GetProcAddrTable functions and their catalogue.

    Every table the headers define is exported. A caller at least as new as
    the headers has a table at least as large: it is cleared first, so every
    entry the driver does not implement is null (the loader answers
    ZE_RESULT_ERROR_UNSUPPORTED_FEATURE for it). Then each implemented entry
    is filled when the caller's version has it; an older caller's table has
    no room for entries introduced after its version."""
    since = {name: (major, minor) for name, major, minor, _ in implemented}
    placed = set()
    header = ["// Generated by interpose/ze/generate_wrappers.py from " + source_name +
              " and the Level Zero headers. Do not edit.", "#pragma once", ""]
    header.append("// The functions the driver implements (sim::<name>), the optional ones")
    header.append("// (in the list with `?`) apart, as these headers have them.")
    for macro, want in (("GTAP_SIM_ZE_FUNCTIONS", False), ("GTAP_SIM_ZE_OPTIONAL_FUNCTIONS", True)):
        names = [n for n, _, _, optional in implemented if optional == want]
        header.append(f"#define {macro}(X)" + "".join(f" \\\n  X({n})" for n in names))
    header += [f"#define GTAP_SIM_ZE_HAVE_{n} 1" for n, _, _, optional in implemented if optional]
    entries = []
    source = ["// Generated by interpose/ze/generate_wrappers.py from " + source_name +
              " and the Level Zero headers. Do not edit.",
              '#include "tables.h"', "", 'extern "C" {', ""]
    for g in getters:
        table = g["table"]
        source.append(f"ZE_DLLEXPORT ze_result_t ZE_APICALL {g['name']}(ze_api_version_t version, {table}* table) {{")
        source.append("  if (ze_result_t r = sim::tables::begin(version, table); r != ZE_RESULT_SUCCESS) return r;")
        for fn_name, field in tables[table]:
            entries.append(f"X({g['name']}, {table}, {field}, {fn_name})")
            if fn_name in since:
                major, minor = since[fn_name]
                source.append(f"  sim::tables::fill(table->{field}, GTAP_SIM_ENTRY({fn_name}), version, "
                              f"ZE_MAKE_VERSION({major}, {minor}));")
                placed.add(fn_name)
        source.append("  return ZE_RESULT_SUCCESS;")
        source.append("}")
        source.append("")
    source.append('}  // extern "C"')
    header += ["", "// Every entry of every table: getter, table type, field, function.",
               "#define GTAP_SIM_ZE_TABLE_ENTRIES(X)" + "".join(f" \\\n  {e}" for e in entries)]
    unplaced = sorted(set(since) - placed)
    if unplaced:
        sys.exit(f"{source_name}: no dispatch table in these headers has {unplaced}")
    return "\n".join(header) + "\n", "\n".join(source) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--include-dir", required=True, type=Path)
    ap.add_argument("--output", type=Path, help="write libgtap.so's wrappers")
    ap.add_argument("--exports", type=Path, help="also write the list of exported names")
    ap.add_argument("--hooks", type=Path, help="file naming the functions with hand-written hooks")
    ap.add_argument("--ids", type=Path, help="also write a header of function ids (enum ZeFn)")
    ap.add_argument("--sim-functions", type=Path, help="the simulated driver's list of implemented functions")
    ap.add_argument("--sim-header", type=Path, help="write the simulated driver's function lists here")
    ap.add_argument("--sim-tables", type=Path, help="write the simulated driver's table getters here")
    a = ap.parse_args()
    sim_args = (a.sim_functions, a.sim_header, a.sim_tables)
    if any(sim_args) and not all(sim_args):
        ap.error("--sim-functions, --sim-header and --sim-tables go together")
    if not a.output and not a.sim_functions:
        ap.error("nothing to write: give --output or --sim-functions")
    functions = parse_api(a.include_dir)
    tables, getters = parse_ddi(a.include_dir)
    missing = [g["table"] for g in getters if g["table"] not in tables]
    if missing:
        sys.exit(f"tables not found in ddi headers: {missing}")
    names = {f["name"] for f in functions} | {g["name"] for g in getters}
    hooked = set()
    if a.hooks:
        listed = {l.split("#")[0].strip() for l in a.hooks.read_text().splitlines()} - {""}
        hooked = {n for n in listed if not n.endswith("?")}
        hooked |= {n[:-1].strip() for n in listed if n.endswith("?") and n[:-1].strip() in names}
    if hooked - names:
        sys.exit(f"hooks name unknown functions: {sorted(hooked - names)}")
    if a.sim_functions:
        implemented = read_sim_functions(a.sim_functions, names)
        header, source = emit_sim_driver(implemented, tables, getters, a.sim_functions.name)
        a.sim_header.write_text(header)
        a.sim_tables.write_text(source)
        print(f"generated the simulated driver's {len(getters)} tables, {len(implemented)} functions filled",
              file=sys.stderr)
    if not a.output:
        return
    text, count = emit(functions, tables, getters, hooked)
    a.output.write_text(text)
    if a.ids:
        lines = ["// Generated by interpose/ze/generate_wrappers.py. Do not edit.", "#pragma once", "#include <cstdint>",
                 "namespace gtap::ze {", "enum class ZeFn : uint32_t {"]
        lines += [f"  {f['name']} = {i}," for i, f in enumerate(functions)]
        lines += ["};", "}  // namespace gtap::ze", ""]
        lines += [f"#define GTAP_ZE_HAVE_{f['name']} 1" for f in functions] + [""]
        a.ids.write_text("\n".join(lines))
    if a.exports:
        a.exports.write_text("".join(f"{f['name']}\n" for f in functions))
    print(f"generated {count} Level Zero wrappers", file=sys.stderr)


if __name__ == "__main__":
    main()
