#!/usr/bin/env bash
# Sets everything up, builds, captures a Level Zero workload on the simulated
# device with `gtap run --sim`, reports on the capture (a flame graph of its
# device time by call path among them, and one down to a kernel's source
# lines by instruction sampling), then replays its device
# work without the program, verifies it and benchmarks it; then captures an
# HSA workload on the simulated HSA runtime and reports on both captures.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
out=$(mktemp -d /tmp/gtap-demo.XXXXXX)
run() { echo; echo "== $*"; "$@"; }
run build/bin/gtap run --sim -m api,kernels,memory,stacks,replay -o "$out/demo.gtap" -- build/tests/workloads/ze_pipeline
run build/bin/gtap summary "$out/demo.gtap"
run build/bin/gtap kernels "$out/demo.gtap"
run build/bin/gtap memory "$out/demo.gtap"
run build/bin/gtap explain --top 2 "$out/demo.gtap"
run build/bin/gtap export --format=chrome -o "$out/demo.json" "$out/demo.gtap"
echo "Timeline: $out/demo.json (open it in ui.perfetto.dev or speedscope)"
run build/bin/gtap flame "$out/demo.gtap" -o -
run build/bin/gtap flame "$out/demo.gtap" -o "$out/flame.html"
echo "Flame graph: $out/flame.html (open it in a browser: the graph under a heatmap of the run)"
# Down to the kernel's instructions: where inside hot_loop the device spent its time.
run build/bin/gtap run --sim -m api,stacks,samples --sample-period-us 50 -o "$out/hot.gtap" -- build/tests/workloads/ze_hot_line
run build/bin/gtap kernels --instructions 'hot_*' "$out/hot.gtap"
run build/bin/gtap flame "$out/hot.gtap" -o -
run build/bin/gtap dump "$out/demo.gtap" | tail -12
run build/bin/gtap replay --sim --verify "$out/demo.gtap"
run build/bin/gtap bench --sim --iterations 5 "$out/demo.gtap"
run build/bin/gtap run --sim -m api,kernels,memory,stacks -o "$out/hsa.gtap" -- build/tests/workloads/hsa_pipeline
run build/bin/gtap summary "$out/hsa.gtap"
run build/bin/gtap kernels --by=shape "$out/hsa.gtap" "$out/demo.gtap"
run build/bin/gtap executables "$out/hsa.gtap"
