#!/usr/bin/env bash
# Sets everything up, builds, captures a Level Zero workload on the simulated
# device with `gtap run --sim`, and reports on the capture.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
out=$(mktemp -d /tmp/gtap-demo.XXXXXX)
echo
echo "== gtap run --sim -o $out/demo-%p.gtap -- ze_api_counts threads 4 50000"
build/bin/gtap run --sim -o "$out/demo-%p.gtap" -- build/tests/workloads/ze_api_counts threads 4 50000
file=$(ls "$out"/demo-*.gtap)
echo
echo "== gtap info $file"
build/bin/gtap info "$file"
echo "== gtap api $file"
build/bin/gtap api "$file"
