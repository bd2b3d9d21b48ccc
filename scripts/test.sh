#!/usr/bin/env bash
# Installs what is needed, builds, runs every test, then fuzzes the capture
# reader for a bounded time on a corpus of real small captures.
# Usage: scripts/test.sh            (FUZZ_SECONDS=60 by default; 0 skips fuzzing)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
(cd build && ctest --output-on-failure -j "$(nproc)")

# The interposer core's lock-free buffers under ThreadSanitizer: threads
# recording while the writer drains every millisecond from a 1 MiB pool.
cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGTAP_BUILD_BENCHMARKS=OFF \
  -DCMAKE_CXX_FLAGS=-fsanitize=thread -DCMAKE_C_FLAGS=-fsanitize=thread \
  -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread >/dev/null
cmake --build build-tsan -j "$(nproc)" --target core_stress_test
tsan_out=$(mktemp -d)
GTAP_OUTPUT="$tsan_out/stress-%p.gtap" GTAP_QUIET=1 GTAP_FLUSH_MS=1 GTAP_BUFFER_MB=1 \
  TSAN_OPTIONS=halt_on_error=1 build-tsan/bin/core_stress_test
rm -rf "$tsan_out"

fuzz_seconds=${FUZZ_SECONDS:-60}
if [ "$fuzz_seconds" -gt 0 ]; then
  CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DGTAP_FUZZ_ONLY=ON \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS="-fsanitize=address,undefined" >/dev/null
  cmake --build build-fuzz -j "$(nproc)"
  seeds=build-fuzz/seeds
  rm -rf "$seeds" build-fuzz/corpus && mkdir -p "$seeds" build-fuzz/corpus
  for mode in direct table threads; do
    args=("$mode"); [ "$mode" = threads ] && args=(threads 2 200)
    build/bin/gtap run --sim -q -o "$seeds/$mode.gtap" -- build/tests/workloads/ze_api_counts "${args[@]}" >/dev/null
  done
  build/bin/gtap run --sim -q -m api,kernels,memory,stacks -o "$seeds/profile.gtap" -- \
    build/tests/workloads/ze_vector_add 2 1024 >/dev/null
  build/bin/gtap run --sim -q -m api,kernels,memory,stacks -o "$seeds/hsa.gtap" -- \
    build/tests/workloads/hsa_pipeline 1 1024 >/dev/null
  echo "fuzzing the capture reader for ${fuzz_seconds}s on $(ls "$seeds" | wc -l) seed captures"
  build-fuzz/bin/capture_reader_fuzzer -max_total_time="$fuzz_seconds" -rss_limit_mb=2048 \
    -print_final_stats=1 build-fuzz/corpus "$seeds" 2>&1 | tail -n 12
  # AMDGPU code-object metadata, seeded with the clang-built fixtures.
  mkdir -p build-fuzz/corpus-codeobject
  echo "fuzzing the code-object reader for $((fuzz_seconds / 2))s"
  build-fuzz/bin/code_object_fuzzer -max_total_time=$((fuzz_seconds / 2)) -rss_limit_mb=2048 \
    -print_final_stats=1 build-fuzz/corpus-codeobject build/readers/codeobject/fixtures 2>&1 | tail -n 4
fi
echo "all tests passed"
