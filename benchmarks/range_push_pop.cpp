// What a named range costs the program: gtap_range_push and gtap_range_pop
// through include/gtap/gtap.h, without gtap (the looked-up functions are
// absent) and under `gtap run` (each push and pop recorded). zeInit first,
// so that under gtap a capture is recording before the loop.
#include <benchmark/benchmark.h>
#include <level_zero/ze_api.h>

#include "gtap/gtap.h"

static void BM_RangePushPop(benchmark::State& state) {
  for (auto _ : state) {
    gtap_range_push("step");
    gtap_range_pop();
  }
}
BENCHMARK(BM_RangePushPop);

// Two levels, as a program marking a step and a phase inside it does.
static void BM_NestedRangePushPop(benchmark::State& state) {
  for (auto _ : state) {
    gtap_range_push("step");
    gtap_range_push("attention");
    gtap_range_pop();
    gtap_range_pop();
  }
}
BENCHMARK(BM_NestedRangePushPop);

int main(int argc, char** argv) {
  zeInit(0);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
