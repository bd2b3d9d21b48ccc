#!/usr/bin/env python3
"""Added cost of gtap on a benchmark program: runs it without gtap and under
`gtap run --sim` in each requested mode, alternating the variants over several
repetitions in one go, and prints the median time per iteration of each
variant, its spread, and the difference from the baseline.

    benchmarks/run_overhead.py [--build build] [--repetitions 5]
        [--program ze_call_loop] [--modes api] [--filter REGEX]

Examples:
    benchmarks/run_overhead.py --program ze_call_loop --modes api
    benchmarks/run_overhead.py --program ze_launch_loop --modes api api,kernels api,kernels,stacks
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path


def run(cmd, env):
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True)
    return {b["name"]: b["real_time"] for b in json.loads(out.stdout)["benchmarks"]}


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
    extra = [f"--benchmark_filter={a.filter}"] if a.filter else []
    names = ["baseline"] + [f"gtap {m}" for m in a.modes]
    results = {n: {} for n in names}
    with tempfile.TemporaryDirectory() as tmp:
        for rep in range(a.repetitions):
            variants = [("baseline", [str(program)])]
            for m in a.modes:
                variants.append((f"gtap {m}", [str(gtap), "run", "--sim", "-q", "-m", m, "-o",
                                                f"{tmp}/r{rep}-{m}.gtap", "--", str(program)]))
            if rep % 2:
                variants.reverse()  # alternate the order so drift hits every variant alike
            for name, cmd in variants:
                for bench, ns in run(cmd + ["--benchmark_format=json"] + extra, env).items():
                    results[name].setdefault(bench, []).append(ns)
    for bench in results["baseline"]:
        base = statistics.median(results["baseline"][bench])
        print(f"{bench}")
        for name in names:
            v = results[name][bench]
            med = statistics.median(v)
            added = "" if name == "baseline" else f"  added {med - base:9.1f} ns"
            print(f"  {name:28} {med:10.1f} ns  ({min(v):.1f}..{max(v):.1f}){added}")


if __name__ == "__main__":
    sys.exit(main())
