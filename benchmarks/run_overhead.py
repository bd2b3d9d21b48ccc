#!/usr/bin/env python3
"""Added cost of gtap on a benchmark program: runs it without gtap and under
`gtap run --sim` in each requested mode, alternating the variants over several
repetitions in one go, and prints the median time per iteration of each
variant, its spread, the difference from the baseline, and the ratio to it.

A benchmark that reports a counter `dispatches_per_iteration` (hsa_dispatch_loop)
is shown per dispatch: its time per iteration divided by that counter.

HSA programs (named hsa_*) run on the simulated HSA runtime: the baseline
gets LD_LIBRARY_PATH with the directory of the build's
libhsa-runtime64.so.1, as `gtap run --sim` sets for the others.

    benchmarks/run_overhead.py [--build build] [--repetitions 5]
        [--program ze_call_loop] [--modes api] [--filter REGEX]

Examples:
    benchmarks/run_overhead.py --program ze_call_loop --modes api
    benchmarks/run_overhead.py --program ze_launch_loop --modes api api,kernels api,kernels,stacks
    benchmarks/run_overhead.py --program hsa_dispatch_loop --modes api api,kernels api,kernels,stacks
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path


# Benchmarks whose times are per dispatch, not per iteration.
per_dispatch = set()


def run(cmd, env):
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True)
    times = {}
    for b in json.loads(out.stdout)["benchmarks"]:
        if b.get("error_occurred"):
            sys.exit(f"{b['name']}: {b.get('error_message', 'failed')} ({' '.join(cmd)})")
        if "dispatches_per_iteration" in b:
            per_dispatch.add(b["name"])
            times[b["name"]] = b["real_time"] / b["dispatches_per_iteration"]
        else:
            times[b["name"]] = b["real_time"]
    return times


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=str(Path(__file__).resolve().parent.parent / "build"))
    ap.add_argument("--repetitions", type=int, default=5)
    ap.add_argument("--program", default="ze_call_loop")
    ap.add_argument("--modes", nargs="+", default=["api"])
    ap.add_argument("--filter", default="")
    a = ap.parse_args()
    build = Path(a.build)
    gtap = build / "bin" / "gtap"
    program = build / "benchmarks" / a.program
    sim = next((build / "lib").rglob("libze_gtap_sim.so"))
    env = dict(os.environ, ZE_ENABLE_ALT_DRIVERS=str(sim))
    baseline_env = env
    if a.program.startswith("hsa_"):
        hsa_sim = next((build / "lib").rglob("libhsa-runtime64.so.1")).parent
        paths = [str(hsa_sim)] + [p for p in os.environ.get("LD_LIBRARY_PATH", "").split(":") if p]
        baseline_env = dict(env, LD_LIBRARY_PATH=":".join(paths))
    extra = [f"--benchmark_filter={a.filter}"] if a.filter else []
    names = ["baseline"] + [f"gtap {m}" for m in a.modes]
    results = {n: {} for n in names}
    with tempfile.TemporaryDirectory() as tmp:
        for rep in range(a.repetitions):
            variants = [("baseline", [str(program)], baseline_env)]
            for m in a.modes:
                variants.append((f"gtap {m}", [str(gtap), "run", "--sim", "-q", "-m", m, "-o",
                                                f"{tmp}/r{rep}-{m}.gtap", "--", str(program)], env))
            if rep % 2:
                variants.reverse()  # alternate the order so drift hits every variant alike
            for name, cmd, variant_env in variants:
                for bench, ns in run(cmd + ["--benchmark_format=json"] + extra, variant_env).items():
                    results[name].setdefault(bench, []).append(ns)
    for bench in results["baseline"]:
        base = statistics.median(results["baseline"][bench])
        print(f"{bench}" + ("  (ns per dispatch)" if bench in per_dispatch else ""))
        for name in names:
            v = results[name][bench]
            med = statistics.median(v)
            added = "" if name == "baseline" else f"  added {med - base:9.1f} ns  x{med / base:.2f}"
            print(f"  {name:28} {med:10.1f} ns  ({min(v):.1f}..{max(v):.1f}){added}")


if __name__ == "__main__":
    sys.exit(main())
