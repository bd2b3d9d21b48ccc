#!/usr/bin/env bash
# Installs what is needed, builds, runs every test, then fuzzes the readers
# for a bounded time on seeds of real small captures.
# Usage: scripts/test.sh            (FUZZ_SECONDS=160 by default; 0 skips fuzzing)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh -DGTAP_WERROR=ON
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

# The readers' fuzz targets, each for its share of FUZZ_SECONDS (docs/testing.md).
fuzz_seconds=${FUZZ_SECONDS:-160}
if [ "$fuzz_seconds" -gt 0 ]; then
  scripts/fuzz.sh "$fuzz_seconds"
fi
echo "all tests passed"
