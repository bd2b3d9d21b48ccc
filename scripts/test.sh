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
# recording while the writer drains every millisecond from a 1 MiB pool; and
# the readers' files read on several threads, their output copied in order.
cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGTAP_BUILD_BENCHMARKS=OFF \
  -DCMAKE_CXX_FLAGS=-fsanitize=thread -DCMAKE_C_FLAGS=-fsanitize=thread \
  -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread >/dev/null
cmake --build build-tsan -j "$(nproc)" --target core_stress_test parallel_test
TSAN_OPTIONS=halt_on_error=1 build-tsan/bin/parallel_test
tsan_out=$(mktemp -d)
GTAP_OUTPUT="$tsan_out/stress-%p.gtap" GTAP_QUIET=1 GTAP_FLUSH_MS=1 GTAP_BUFFER_MB=1 GTAP_MODE=api,replay \
  TSAN_OPTIONS=halt_on_error=1 build-tsan/bin/core_stress_test
rm -rf "$tsan_out"

# The readers' unit tests under AddressSanitizer and UndefinedBehaviorSanitizer
# (docs/testing.md). Not built, to keep CI within its time: export_tests (its
# one source takes longer to compile than the rest of the exporters, which
# unit_tests exercises through the record exports), hsa_table_test (it needs
# all of libgtap.so, a fifth of the build) and core_stress_test (run under
# ThreadSanitizer above). Tests of unbuilt gtest programs lose their label;
# core_stress is a plain test, so it is left out by name.
asan_flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGTAP_BUILD_BENCHMARKS=OFF \
  "-DCMAKE_CXX_FLAGS=$asan_flags" "-DCMAKE_C_FLAGS=$asan_flags" \
  "-DCMAKE_EXE_LINKER_FLAGS=$asan_flags" "-DCMAKE_SHARED_LINKER_FLAGS=$asan_flags" >/dev/null
cmake --build build-asan -j "$(nproc)" --target unit_tests fuzz_regression_tests codeobject_tests symbolize_tests \
  hsa_replayer_tests parallel_test
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan -L '^unit$' -E '^core_stress$' \
  --output-on-failure --no-tests=error -j "$(nproc)"

# The readers' fuzz targets, each for its share of FUZZ_SECONDS (docs/testing.md).
fuzz_seconds=${FUZZ_SECONDS:-160}
if [ "$fuzz_seconds" -gt 0 ]; then
  scripts/fuzz.sh "$fuzz_seconds"
fi
echo "all tests passed"
