// Vector add the way most HSA programs start: find the GPU, its kernarg
// region and a fine-grained system pool, load the code object from memory,
// and for each dispatch write one kernel dispatch packet into a queue, ring
// the doorbell and wait on the packet's completion signal.
//
//   hsa_vector_add [DISPATCHES=4 [ELEMENTS=65536]]
//
// Lines: alloc host (a, b, c from the fine-grained pool), alloc host (the
// kernarg segment, hsa_memory_allocate from the kernarg region); per
// dispatch "dispatch vector_add ELEMENTS 1 1 256 1 1"; "checksum c"; the frees.
#include "hsa_workload.h"
#include "hsa_workload_args.h"

using namespace workload;

namespace {

constexpr uint32_t kGroupSize = 256;

}  // namespace

int main(int argc, char** argv) {
  const char* usage = "[DISPATCHES [ELEMENTS]]";
  const uint32_t dispatches = countArgument(argc, argv, 1, 4, usage, 100000);
  const uint32_t n = countArgument(argc, argv, 2, 1u << 16, usage);
  noMoreArguments(argc, argv, 2, usage);

  Report out = Report::immediate();
  Runtime rt;
  rt.open(Runtime::Load::kFromMemory);
  Memory mem(out);

  const Kernel vectorAdd = rt.kernel("vector_add", sizeof(hsa_vector_add_args));
  float* a = mem.allocate<float>(rt.hostPool, n);
  float* b = mem.allocate<float>(rt.hostPool, n);
  float* c = mem.allocate<float>(rt.hostPool, n);
  // The classic kernarg path: hsa_memory_allocate from the kernarg region.
  auto* kernarg = static_cast<hsa_vector_add_args*>(
      static_cast<void*>(mem.allocate<uint8_t>(rt.kernargRegion, "host", vectorAdd.kernargSize)));
  std::memset(kernarg, 0, vectorAdd.kernargSize);
  *kernarg = hsa_vector_add_args{a, b, c, n};

  Queue queue(rt, 64);
  hsa_signal_t done = createSignal(1);

  Checksum sum;
  for (uint32_t d = 0; d < dispatches; ++d) {
    for (uint32_t i = 0; i < n; ++i) {
      a[i] = 0.5f * float(i) + float(d);
      b[i] = 0.25f * float(i % 97) - float(d);
      c[i] = -1.0f;
    }
    hsa_signal_store_relaxed(done, 1);
    const hsa_kernel_dispatch_packet_t packet = dispatchPacket1d(vectorAdd, n, kGroupSize, kernarg, done);
    queue.submit(packet);
    out.dispatch(vectorAdd.name, packet);
    waitComplete(done);
    for (uint32_t i = 0; i < n; ++i) {
      if (c[i] != a[i] + b[i]) wrongResult("dispatch %u: c[%u] = %g, expected %g", d, i, c[i], a[i] + b[i]);
    }
    sum.add(c, size_t(n) * sizeof(float));
  }
  out.checksum("c", sum);

  HSA_CHECK(hsa_signal_destroy(done));
  queue.destroy();
  mem.free({a, b, c, kernarg});
  rt.close();
  return 0;
}
