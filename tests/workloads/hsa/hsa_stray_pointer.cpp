// A program that hands the device memory it never got from the runtime: the
// result buffer of vector_add is ordinary heap memory (std::vector), which
// the simulated runtime lets kernels write (all its memory is host memory;
// on ROCr the pointer would have to be registered or locked). A replay of
// such a capture cannot know where that memory is, so gtap's capture says so
// and replay refuses it.
//
//   hsa_stray_pointer [ELEMENTS]
//
// Lines: as hsa_vector_add's, for one dispatch.
#include "hsa_workload.h"
#include "hsa_workload_args.h"

using namespace workload;

int main(int argc, char** argv) {
  const char* usage = "[ELEMENTS]";
  const uint32_t n = countArgument(argc, argv, 1, 1024, usage);
  noMoreArguments(argc, argv, 1, usage);

  Report out = Report::immediate();
  Runtime rt;
  rt.open(Runtime::Load::kFromMemory);
  Memory mem(out);

  const Kernel vectorAdd = rt.kernel("vector_add", sizeof(hsa_vector_add_args));
  float* a = mem.allocate<float>(rt.hostPool, n);
  float* b = mem.allocate<float>(rt.hostPool, n);
  std::vector<float> c(n, -1.0f);  // not the runtime's memory
  auto* kernarg = static_cast<hsa_vector_add_args*>(
      static_cast<void*>(mem.allocate<uint8_t>(rt.kernargRegion, "host", vectorAdd.kernargSize)));
  std::memset(kernarg, 0, vectorAdd.kernargSize);
  *kernarg = hsa_vector_add_args{a, b, c.data(), n};
  for (uint32_t i = 0; i < n; ++i) {
    a[i] = float(i);
    b[i] = 2.0f;
  }

  Queue queue(rt, 64);
  hsa_signal_t done = createSignal(1);
  const hsa_kernel_dispatch_packet_t packet = dispatchPacket1d(vectorAdd, n, 64, kernarg, done);
  queue.submit(packet);
  out.dispatch(vectorAdd.name, packet);
  waitComplete(done);
  for (uint32_t i = 0; i < n; ++i)
    if (c[i] != a[i] + b[i]) wrongResult("c[%u] = %g, expected %g", i, c[i], a[i] + b[i]);
  Checksum sum;
  sum.add(c.data(), size_t(n) * sizeof(float));
  out.checksum("c", sum);

  HSA_CHECK(hsa_signal_destroy(done));
  queue.destroy();
  mem.free({a, b, kernarg});
  rt.close();
  return 0;
}
