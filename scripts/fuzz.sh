#!/usr/bin/env bash
# Builds the fuzz targets into build-fuzz/ (clang; every library they link
# instrumented), makes seed captures with the workloads of build/ (run
# scripts/build.sh first), then runs each target for its share of SECONDS.
# Usage: scripts/fuzz.sh [SECONDS [TARGET...]]    (docs/testing.md)
#   SECONDS  total fuzzing time, split between the targets (default 160)
#   TARGET   capture_reader_fuzzer, replay_dump_fuzzer, replay_validate_fuzzer,
#            code_object_fuzzer (default: all, each for its share)
# Findings are left in build-fuzz/findings/; the corpora grow in build-fuzz/corpus/.
set -euo pipefail
cd "$(dirname "$0")/.."
total=${1:-160}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(capture_reader_fuzzer replay_dump_fuzzer replay_validate_fuzzer code_object_fuzzer)

CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DGTAP_FUZZ_ONLY=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-fuzz -j "$(nproc)" --target "${targets[@]}" uncompress_capture

# Seeds: a small capture of every mode and runtime, each also with its chunks
# uncompressed so that mutations reach the decoders.
seeds=$PWD/build-fuzz/seeds
work=build/tests/workloads
rm -rf "$seeds" && mkdir -p "$seeds/files"
capture() {  # NAME MODES [gtap run options] -- PROGRAM ARGS...
  local name=$1 modes=$2
  shift 2
  build/bin/gtap run --sim -q -m "$modes" -o "$seeds/$name.gtap" "$@" >/dev/null
}
for how in direct table threads; do
  args=("$how"); [ "$how" = threads ] && args=(threads 2 20)
  capture "api-$how" api -- "$work/ze_api_counts" "${args[@]}"
done
capture ze-kernels kernels -- "$work/ze_vector_add" 2 256
capture ze-memory memory -- "$work/ze_vector_add" 2 256
capture ze-stacks api,stacks -- "$work/ze_vector_add" 1 256
capture ze-profile api,kernels,memory,stacks -- "$work/ze_pipeline" 2 256
capture ze-flame api,kernels,stacks -- "$work/ze_flame" 1
capture ze-immediate api,kernels,memory -- "$work/ze_immediate" 2 256
capture replay replay -- "$work/ze_vector_add" 2 256
capture replay-scopes replay,api,kernels -- "$work/ze_scopes" 2 256
capture replay-struct replay -- "$work/ze_struct_args" 2 256
capture replay-threads replay -- "$work/ze_multithread" 2 2 256
# Payloads in an external file: kept next to the seeds, so that replay's
# file checks pass and mutations reach its reads.
"$work/ze_mapped_input" --make "$seeds/files/input.bin" 20000
capture replay-file replay --file-policy reference --file-validation digest -- "$work/ze_mapped_input" "$seeds/files/input.bin"
capture replay-ranges replay --file-policy capture-ranges -- "$work/ze_mapped_input" "$seeds/files/input.bin"
capture hsa api,kernels,memory,stacks -- "$work/hsa_pipeline" 1 256
capture hsa-counters api,kernels --counters GRBM_COUNT,GRBM_GUI_ACTIVE,SQ_WAVES --metrics-interval 1 -- "$work/hsa_pipeline" 1 256
capture hal api,kernels,memory -- "$work/hal_fixture" 20 2
LD_LIBRARY_PATH=$PWD/build/lib/gtap/sim/hsa capture hal-on-hsa api,kernels -- "$work/hal_on_hsa" 2
for f in "$seeds"/*.gtap; do
  build-fuzz/bin/uncompress_capture "$f" "${f%.gtap}.raw.gtap"
done
# A merged file (gtap merge) of two uncompressed captures.
build/bin/gtap merge -o "$seeds/merged.gtap" "$seeds/ze-kernels.raw.gtap" "$seeds/hsa.raw.gtap" 2>/dev/null

mkdir -p build-fuzz/findings
weight() {
  case $1 in
    capture_reader_fuzzer) echo 5 ;;
    replay_dump_fuzzer | replay_validate_fuzzer) echo 4 ;;
    *) echo 3 ;;
  esac
}
sum=0
for t in "${targets[@]}"; do sum=$((sum + $(weight "$t"))); done
for t in "${targets[@]}"; do
  seconds=$((total * $(weight "$t") / sum))
  corpus=build-fuzz/corpus/$t
  mkdir -p "$corpus"
  from=$seeds
  if [ "$t" = code_object_fuzzer ]; then
    # The real AMDGPU code objects of the reader's tests and the simulated
    # HSA runtime's (host shared objects with the same metadata note).
    from=build-fuzz/seeds-code-objects
    rm -rf "$from" && mkdir -p "$from"
    find build/readers/codeobject/fixtures build/lib/gtap/sim/hsa/kernels -maxdepth 1 -type f \
      \( -name '*.hsaco' -o -name '*.so' \) -exec cp {} "$from"/ \; 2>/dev/null || true
  fi
  echo "fuzzing $t for ${seconds}s ($(ls "$from" | wc -l) seeds)"
  # Inputs are at most a few hundred KiB; a capture that makes a reader hold
  # more than 2 GiB or take 10 s is a finding.
  build-fuzz/bin/"$t" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
    -artifact_prefix=build-fuzz/findings/"$t"- -print_final_stats=1 "$corpus" "$from" \
    >build-fuzz/"$t".log 2>&1 || { tail -n 60 build-fuzz/"$t".log; exit 1; }
  grep -E '^INFO: Loaded [0-9]+ modules|^#[0-9]+[[:space:]]+(INITED|DONE)|stat::number_of_executed_units|stat::average_exec_per_sec' \
    build-fuzz/"$t".log
done
