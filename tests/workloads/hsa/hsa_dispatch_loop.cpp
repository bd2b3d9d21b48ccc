// A dispatch-rate benchmark: one tiny kernel (one work-item, an atomic
// increment) dispatched DISPATCHES times. Packets go in batches of BATCH: the
// program reserves BATCH slots, writes the packets (only the last carries a
// completion signal, and the barrier bit, so it completes after all the
// others), rings the doorbell once, and waits on that signal.
//
//   hsa_dispatch_loop [DISPATCHES=10000 [BATCH=1]]
//
// Unlike the other workloads it prints one line per run, not per packet:
// "dispatches N", then "checksum counter HEX" (the counter, which must equal
// DISPATCHES); the elapsed time of the dispatch loop goes to stderr. Its
// memory (the counter, the kernarg segment) is not reported. With
// tests/support/op_counters.c preloaded, the loop's heap allocations and lock
// acquisitions go to stderr too ("op_counts hsa-dispatch-batch ..." or, with
// BATCH 1, "op_counts hsa-dispatch-wait ...").
#include "hsa_workload.h"
#include "hsa_workload_args.h"
#include "../op_counters.h"

#include <algorithm>

using namespace workload;

int main(int argc, char** argv) {
  const char* usage = "[DISPATCHES [BATCH]]";
  const uint32_t dispatches = countArgument(argc, argv, 1, 10000, usage);
  const uint32_t batch = countArgument(argc, argv, 2, 1, usage, 65536);
  noMoreArguments(argc, argv, 2, usage);

  Report silent = Report::held();  // allocations are not part of this output
  Report out = Report::immediate();
  Runtime rt;
  rt.open(Runtime::Load::kFromMemory);
  Memory mem(silent);

  const Kernel tiny = rt.kernel("tiny", sizeof(hsa_tiny_args));
  uint64_t* counter = mem.allocate<uint64_t>(rt.hostPool, 1);
  *counter = 0;
  auto* args = mem.kernarg(rt.kernargPool, tiny, hsa_tiny_args{counter});

  uint32_t queueSize = 64;
  while (queueSize < batch) queueSize *= 2;
  Queue queue(rt, queueSize);
  hsa_signal_t done = createSignal(1);
  const hsa_signal_t none{0};
  const hsa_kernel_dispatch_packet_t plain = dispatchPacket1d(tiny, 1, 1, args, none);
  const hsa_kernel_dispatch_packet_t closing =
      dispatchPacket1d(tiny, 1, 1, args, done, Fences{true, HSA_FENCE_SCOPE_SYSTEM, HSA_FENCE_SCOPE_SYSTEM});

  op_counts counted = op_counts_now();
  const uint64_t start = hostNowNs();
  for (uint32_t written = 0; written < dispatches;) {
    const uint32_t count = std::min(batch, dispatches - written);
    hsa_signal_store_relaxed(done, 1);
    const uint64_t first = queue.reserve(count);
    for (uint32_t i = 0; i + 1 < count; ++i) queue.write(first + i, plain);
    queue.write(first + count - 1, closing);
    queue.ring(first + count - 1);
    waitComplete(done);
    written += count;
  }
  const uint64_t elapsed = hostNowNs() - start;
  op_counts_report(batch > 1 ? "hsa-dispatch-batch" : "hsa-dispatch-wait", counted);

  if (*counter != dispatches)
    wrongResult("the counter is %llu after %u dispatches", static_cast<unsigned long long>(*counter), dispatches);
  out.dispatches(dispatches);
  Checksum sum;
  sum.add(counter, sizeof *counter);
  out.checksum("counter", sum);
  std::fprintf(stderr, "hsa_dispatch_loop: %u dispatches in batches of %u: %llu ns, %llu ns per dispatch\n",
               dispatches, batch, static_cast<unsigned long long>(elapsed),
               static_cast<unsigned long long>(elapsed / dispatches));

  HSA_CHECK(hsa_signal_destroy(done));
  queue.destroy();
  mem.free({counter, args});
  rt.close();
  return 0;
}
