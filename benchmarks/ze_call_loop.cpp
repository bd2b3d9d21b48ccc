// A tight loop of one cheap Level Zero call (zeDriverGetApiVersion on the
// simulated driver). Run as is for the baseline and under gtap for the cost of
// interception; run_call_overhead.py runs both, interleaved, in one go.
#include <benchmark/benchmark.h>
#include <level_zero/ze_api.h>

#include <cstdio>
#include <cstdlib>

namespace {

ze_driver_handle_t driver() {
  static ze_driver_handle_t d = [] {
    if (zeInit(ZE_INIT_FLAG_GPU_ONLY) != ZE_RESULT_SUCCESS) {
      std::fprintf(stderr, "zeInit failed: is ZE_ENABLE_ALT_DRIVERS set to the simulated driver?\n");
      std::exit(1);
    }
    uint32_t n = 1;
    ze_driver_handle_t h = nullptr;
    zeDriverGet(&n, &h);
    return h;
  }();
  return d;
}

// Registered first, so it runs before zeInit: the loader answers
// ZE_RESULT_ERROR_UNINITIALIZED itself in a few ns, which isolates gtap's own
// cost from the driver's.
void BM_LoaderOnlyCall(benchmark::State& state) {
  ze_api_version_t v;
  for (auto _ : state) {
    benchmark::DoNotOptimize(zeDriverGetApiVersion(nullptr, &v));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_LoaderOnlyCall)->MinTime(0.5);

void BM_ZeDriverGetApiVersion(benchmark::State& state) {
  ze_driver_handle_t d = driver();
  ze_api_version_t v;
  for (auto _ : state) {
    benchmark::DoNotOptimize(zeDriverGetApiVersion(d, &v));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ZeDriverGetApiVersion)->MinTime(0.5);

}  // namespace

BENCHMARK_MAIN();
