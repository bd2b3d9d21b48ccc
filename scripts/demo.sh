#!/usr/bin/env bash
# Sets everything up, builds, captures a Level Zero workload on the simulated
# device with `gtap run --sim`, and reports on the capture.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
out=$(mktemp -d /tmp/gtap-demo.XXXXXX)
run() { echo; echo "== $*"; "$@"; }
run build/bin/gtap run --sim -m api,kernels,memory,stacks -o "$out/demo.gtap" -- build/tests/workloads/ze_pipeline
run build/bin/gtap summary "$out/demo.gtap"
run build/bin/gtap kernels "$out/demo.gtap"
run build/bin/gtap memory "$out/demo.gtap"
run build/bin/gtap explain --top 2 "$out/demo.gtap"
run build/bin/gtap export --format=chrome -o "$out/demo.json" "$out/demo.gtap"
echo "Timeline: $out/demo.json (open it in ui.perfetto.dev or speedscope)"
