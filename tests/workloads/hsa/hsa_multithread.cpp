// Several host threads sharing one runtime and executable, each with its own
// queue, memory, kernarg segment and completion signal, dispatching at the
// same time.
//
//   hsa_multithread [THREADS=4 [DISPATCHES=8 [ELEMENTS=16384]]]
//
// Thread t sets acc[i] = i + 1000 t and inc[i] = t + 1, then writes
// DISPATCHES vector_add packets computing acc = acc + inc in place, each with
// the barrier bit, each ringing the doorbell, all decrementing one signal
// that starts at DISPATCHES; it waits once, for the signal to drop below 1,
// and expects acc[i] = i + 1000 t + DISPATCHES (t + 1).
// Lines are printed after the threads have joined, thread by thread: per
// thread alloc host (acc, inc, the kernarg segment), DISPATCHES
// "dispatch vector_add ELEMENTS 1 1 64 1 1", "checksum threadT", the frees.
#include "hsa_workload.h"
#include "hsa_workload_args.h"

#include <thread>

using namespace workload;

namespace {

constexpr uint32_t kGroupSize = 64;

struct ThreadWork {
  uint32_t index;
  uint32_t dispatches;
  uint32_t n;
  Report report = Report::held();
};

void runThread(const Runtime& rt, const Kernel& vectorAdd, ThreadWork& work) {
  Report& out = work.report;
  Memory mem(out);
  float* acc = mem.allocate<float>(rt.hostPool, work.n);
  float* inc = mem.allocate<float>(rt.hostPool, work.n);
  for (uint32_t i = 0; i < work.n; ++i) {
    acc[i] = float(i + 1000 * work.index);
    inc[i] = float(work.index + 1);
  }
  auto* args = mem.kernarg(rt.kernargPool, vectorAdd, hsa_vector_add_args{acc, inc, acc, work.n});

  Queue queue(rt, 64);
  hsa_signal_t done = createSignal(work.dispatches);
  const Fences ordered{true, HSA_FENCE_SCOPE_SYSTEM, HSA_FENCE_SCOPE_SYSTEM};
  for (uint32_t d = 0; d < work.dispatches; ++d) {
    const hsa_kernel_dispatch_packet_t packet = dispatchPacket1d(vectorAdd, work.n, kGroupSize, args, done, ordered);
    queue.submit(packet);  // waits for room when the ring is full
    out.dispatch(vectorAdd.name, packet);
  }
  waitComplete(done);

  for (uint32_t i = 0; i < work.n; ++i) {
    const float expected = float(i + 1000 * work.index + work.dispatches * (work.index + 1));
    if (acc[i] != expected) wrongResult("thread %u: acc[%u] = %g, expected %g", work.index, i, acc[i], expected);
  }
  Checksum sum;
  sum.add(acc, size_t(work.n) * sizeof(float));
  out.checksum("thread" + std::to_string(work.index), sum);

  HSA_CHECK(hsa_signal_destroy(done));
  queue.destroy();
  mem.free({acc, inc, args});
}

}  // namespace

int main(int argc, char** argv) {
  const char* usage = "[THREADS [DISPATCHES [ELEMENTS]]]";
  // At most 64 threads (the GPU has 128 queues) and values that stay exact in a float.
  const uint32_t threads = countArgument(argc, argv, 1, 4, usage, 64);
  const uint32_t dispatches = countArgument(argc, argv, 2, 8, usage, 10000);
  const uint32_t n = countArgument(argc, argv, 3, 16384, usage, 1u << 20);
  noMoreArguments(argc, argv, 3, usage);

  Runtime rt;
  rt.open(Runtime::Load::kFromMemory);
  const Kernel vectorAdd = rt.kernel("vector_add", sizeof(hsa_vector_add_args));
  std::vector<ThreadWork> work;
  work.reserve(threads);
  for (uint32_t t = 0; t < threads; ++t) work.push_back({t, dispatches, n});
  std::vector<std::thread> pool;
  for (uint32_t t = 0; t < threads; ++t) {
    pool.emplace_back(runThread, std::cref(rt), std::cref(vectorAdd), std::ref(work[t]));
  }
  for (auto& th : pool) th.join();
  for (const auto& w : work) w.report.print();
  rt.close();
  return 0;
}
