// Kernel dispatches on an AQL queue of the simulated HSA runtime: one-work-item
// `tiny` kernels (an atomic increment), written as packets, a doorbell, and a
// wait on a completion signal. Run as is for the baseline
// (LD_LIBRARY_PATH=<build>/lib/gtap/sim/hsa) and under `gtap run --sim`
// (api; api,kernels; api,kernels,stacks) by run_overhead.py.
//
// Every benchmark reports a plain counter `dispatches_per_iteration`;
// run_overhead.py divides the time per iteration by it, so what it prints is
// time per dispatch. The console shows the same as `time_per_dispatch` (in
// seconds: "1.5u" is 1.5 µs).
//
//   BM_DispatchAndWait       one packet with a completion signal, the doorbell,
//                            a blocking wait: one dispatch's round trip.
//   BM_DispatchBatch/64      64 packets, one doorbell; only the last carries
//                            the completion signal and the barrier bit (so it
//                            completes after the others), and the program
//                            waits on it.
//   BM_Doorbell/1, /64       as the two above, but only the doorbell store
//                            (hsa_signal_store_screlease) is timed, not the
//                            writes or the wait: the cost on the program's
//                            thread of handing packets over, without the
//                            latency of their completion.
//
// The set-up (runtime, agents, pools, code object, executable, queue, signal,
// kernarg segment) is made once, outside the timed loops, and torn down
// (hsa_shut_down) after the last benchmark.
#include <benchmark/benchmark.h>

#include <chrono>

#include "hsa_workload.h"
#include "hsa_workload_args.h"

namespace {

using namespace workload;

constexpr uint32_t kQueueSize = 256;

struct Setup {
  Report silent = Report::held();  // allocation lines: not this program's output
  Runtime rt;
  Memory* mem = nullptr;
  Queue* queue = nullptr;
  Kernel tiny;
  uint64_t* counter = nullptr;
  hsa_tiny_args* args = nullptr;
  hsa_signal_t done{};
  hsa_kernel_dispatch_packet_t plain{};    // no completion signal
  hsa_kernel_dispatch_packet_t closing{};  // `done`, barrier bit set

  Setup() {
    rt.open(Runtime::Load::kFromMemory);
    mem = new Memory(silent);
    tiny = rt.kernel("tiny", sizeof(hsa_tiny_args));
    counter = mem->allocate<uint64_t>(rt.hostPool, 1);
    *counter = 0;
    args = mem->kernarg(rt.kernargPool, tiny, hsa_tiny_args{counter});
    queue = new Queue(rt, kQueueSize);
    done = createSignal(1);
    plain = dispatchPacket1d(tiny, 1, 1, args, hsa_signal_t{0});
    closing = dispatchPacket1d(tiny, 1, 1, args, done, Fences{true, HSA_FENCE_SCOPE_SYSTEM, HSA_FENCE_SCOPE_SYSTEM});
  }

  void close() {
    HSA_CHECK(hsa_signal_destroy(done));
    queue->destroy();
    delete queue;
    mem->free({counter, args});
    delete mem;
    rt.close();
  }

  // Writes `count` packets (the last one `closing`) from the next free slot;
  // returns the last one's index, for the doorbell.
  uint64_t write(uint32_t count) {
    hsa_signal_store_relaxed(done, 1);
    const uint64_t first = queue->reserve(count);
    for (uint32_t i = 0; i + 1 < count; ++i) queue->write(first + i, plain);
    queue->write(first + count - 1, closing);
    return first + count - 1;
  }
};

Setup* g_setup = nullptr;

Setup& setup() {
  if (g_setup == nullptr) g_setup = new Setup();
  return *g_setup;
}

// The counters run_overhead.py and the console read; and a check that every
// dispatch ran (the kernel increments the counter once per dispatch).
void finish(benchmark::State& state, Setup& s, uint64_t before, uint32_t perIteration) {
  const uint64_t expected = before + uint64_t(state.iterations()) * perIteration;
  if (*s.counter != expected) {
    state.SkipWithError("the counter does not match the dispatches");
    return;
  }
  state.SetItemsProcessed(int64_t(state.iterations()) * perIteration);
  state.counters["dispatches_per_iteration"] = perIteration;
  state.counters["time_per_dispatch"] =
      benchmark::Counter(perIteration, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// Write, ring, wait: the host's time for one dispatch from first write to
// observed completion.
void BM_DispatchAndWait(benchmark::State& state) {
  Setup& s = setup();
  const uint64_t before = *s.counter;
  for (auto _ : state) {
    s.queue->ring(s.write(1));
    waitComplete(s.done);
  }
  finish(state, s, before, 1);
}
BENCHMARK(BM_DispatchAndWait)->UseRealTime()->MinTime(1.0);

// `range(0)` packets per doorbell and per wait.
void BM_DispatchBatch(benchmark::State& state) {
  Setup& s = setup();
  const auto batch = uint32_t(state.range(0));
  const uint64_t before = *s.counter;
  for (auto _ : state) {
    s.queue->ring(s.write(batch));
    waitComplete(s.done);
  }
  finish(state, s, before, batch);
}
BENCHMARK(BM_DispatchBatch)->Arg(64)->UseRealTime()->MinTime(1.0);

// Only the doorbell store is timed: with gtap's intercept queue it is where
// gtap sees the packets, records them, swaps their completion signals and
// registers its completion handlers, before the runtime takes them.
void BM_Doorbell(benchmark::State& state) {
  Setup& s = setup();
  const auto batch = uint32_t(state.range(0));
  const uint64_t before = *s.counter;
  for (auto _ : state) {
    const uint64_t last = s.write(batch);
    const auto start = std::chrono::steady_clock::now();
    s.queue->ring(last);
    const auto end = std::chrono::steady_clock::now();
    state.SetIterationTime(std::chrono::duration<double>(end - start).count());
    waitComplete(s.done);
  }
  finish(state, s, before, batch);
}
// Fixed iteration counts: with a minimum (manual) time, the untimed waits
// would make the baseline of /64 run for a minute or more (its doorbell is
// 0.3-1.3 µs of an iteration's 15-20 µs).
BENCHMARK(BM_Doorbell)->Arg(1)->UseManualTime()->Iterations(100000);
BENCHMARK(BM_Doorbell)->Arg(64)->UseManualTime()->Iterations(10000);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  if (g_setup != nullptr) g_setup->close();  // hsa_shut_down: gtap's OnUnload sees every record
  return 0;
}
