#!/usr/bin/env python3
"""Added cost per intercepted Level Zero call: runs ze_call_loop without gtap
and under `gtap run` (mode api), interleaved, several times, and prints the
median ns/call of each, the spread, and the difference.

    benchmarks/run_call_overhead.py [--build build] [--repetitions 5]
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
    a = ap.parse_args()
    build = Path(a.build)
    gtap = build / "bin" / "gtap"
    loop = build / "benchmarks" / "ze_call_loop"
    sim = next((build / "lib").rglob("libze_gtap_sim.so"))
    env = dict(os.environ, ZE_ENABLE_ALT_DRIVERS=str(sim))
    results = {"baseline": {}, "gtap api": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for rep in range(a.repetitions):
            variants = [("baseline", [str(loop)]),
                        ("gtap api", [str(gtap), "run", "--sim", "-q", "-o", f"{tmp}/r{rep}.gtap", "--", str(loop)])]
            if rep % 2:
                variants.reverse()  # interleave so drift hits both alike
            for name, cmd in variants:
                for bench, ns in run(cmd + ["--benchmark_format=json"], env).items():
                    results[name].setdefault(bench, []).append(ns)
    print(f"{'benchmark':44} {'baseline ns':>12} {'gtap ns':>10} {'added ns':>9}  spread (min..max gtap)")
    for bench in results["baseline"]:
        b = statistics.median(results["baseline"][bench])
        g = statistics.median(results["gtap api"][bench])
        lo, hi = min(results["gtap api"][bench]), max(results["gtap api"][bench])
        print(f"{bench:44} {b:12.2f} {g:10.2f} {g - b:9.2f}  {lo:.2f}..{hi:.2f}")


if __name__ == "__main__":
    sys.exit(main())
