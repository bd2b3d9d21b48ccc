#!/usr/bin/env python3
"""Replay capture and replay, measured against runs without gtap in the same
go (variants alternate over the repetitions; medians are reported):

  1. capture overhead: wall time of each workload under `gtap run
     --mode=replay` (and with the profiling modes too) over its time alone;
  2. bytes stored per MiB uploaded from host memory, with every upload
     different and with the same bytes uploaded again (content dedup);
  3. the cost replay's host-memory page comparison adds to a submission, per
     MiB of shared memory the program holds;
  4. replay speed: `gtap replay --sim` of each capture over the program's
     own run time.

    benchmarks/replay_overhead.py [--build build] [--repetitions 5]
"""
import argparse
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

WORKLOADS = [("ze_vector_add", ["8", "262144"]), ("ze_pipeline", []), ("ze_multithread", ["4", "16", "65536"]),
             ("ze_immediate", ["8", "65536"])]


def timed(cmd, env):
    start = time.perf_counter()
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True)
    return time.perf_counter() - start, out.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=str(Path(__file__).resolve().parent.parent / "build"))
    ap.add_argument("--repetitions", type=int, default=5)
    a = ap.parse_args()
    build = Path(a.build)
    gtap = str(build / "bin" / "gtap")
    sim = next((build / "lib").rglob("libze_gtap_sim.so"))
    env = dict(os.environ, ZE_ENABLE_ALT_DRIVERS=str(sim))
    load = str(build / "benchmarks" / "ze_replay_load")
    with tempfile.TemporaryDirectory() as tmp:
        print("1. capture overhead (wall time, median of %d)" % a.repetitions)
        print(f"{'workload':<16}{'alone':>10}{'replay':>10}{'ratio':>8}{'+profile':>10}{'ratio':>8}"
              f"{'replay it':>11}{'ratio':>8}")
        for name, args in WORKLOADS:
            prog = [str(build / "tests" / "workloads" / name)] + args
            t = {"alone": [], "replay": [], "all": [], "replayed": []}
            for rep in range(a.repetitions):
                t["alone"].append(timed(prog, env)[0])
                f = f"{tmp}/{name}-{rep}.gtap"
                t["replay"].append(timed([gtap, "run", "--sim", "-q", "-m", "replay", "-o", f, "--"] + prog, env)[0])
                g = f"{tmp}/{name}-{rep}-all.gtap"
                t["all"].append(timed([gtap, "run", "--sim", "-q", "-m", "api,kernels,memory,replay", "-o", g, "--"]
                                      + prog, env)[0])
                t["replayed"].append(timed([gtap, "replay", "--sim", f], env)[0])
            m = {k: statistics.median(v) for k, v in t.items()}
            print(f"{name:<16}{m['alone']*1e3:>8.1f}ms{m['replay']*1e3:>8.1f}ms{m['replay']/m['alone']:>8.2f}"
                  f"{m['all']*1e3:>8.1f}ms{m['all']/m['alone']:>8.2f}{m['replayed']*1e3:>9.1f}ms"
                  f"{m['replayed']/m['alone']:>8.2f}")

        print("\n2. bytes stored per MiB uploaded from host memory (64 uploads of 1 MiB)")
        for kind in ("distinct", "repeat"):
            sizes, alone, captured = [], [], []
            for rep in range(a.repetitions):
                alone.append(float(timed([load, "upload", "64", kind], env)[1].split()[0]))
                f = f"{tmp}/upload-{kind}-{rep}.gtap"
                captured.append(float(timed([gtap, "run", "--sim", "-q", "-m", "replay", "-o", f, "--", load,
                                             "upload", "64", kind], env)[1].split()[0]))
                sizes.append(os.path.getsize(f))
            print(f"  {kind:<9} {statistics.median(sizes)/64/1024:>8.1f} KiB per MiB; per upload "
                  f"{statistics.median(alone)*1e6:.0f} us alone, {statistics.median(captured)*1e6:.0f} us captured")

        print("\n3. added time per submission (one changed page) by shared memory held")
        for mib in ("1", "16", "64"):
            alone, captured = [], []
            for rep in range(a.repetitions):
                alone.append(float(timed([load, "submit", "200", mib], env)[1].split()[0]))
                f = f"{tmp}/submit-{mib}-{rep}.gtap"
                captured.append(float(timed([gtap, "run", "--sim", "-q", "-m", "replay", "-o", f, "--", load,
                                             "submit", "200", mib], env)[1].split()[0]))
            d = statistics.median(captured) - statistics.median(alone)
            print(f"  {mib:>3} MiB: {statistics.median(alone)*1e6:>8.1f} us alone, "
                  f"{statistics.median(captured)*1e6:>8.1f} us captured: +{d*1e6:.1f} us "
                  f"({d*1e6/int(mib):.1f} us per MiB)")


if __name__ == "__main__":
    main()
