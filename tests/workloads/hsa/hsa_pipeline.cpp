// A pipeline of dependent work on one queue, ordered the HSA way: signals,
// barrier packets and the barrier bit, with device memory fed from host
// staging buffers by the copy engine. The code object is loaded from a file
// descriptor (hsa_code_object_reader_create_from_file).
//
//   hsa_pipeline [ITERATIONS=3 [ELEMENTS=32768]]
//
//   hw --hsa_memory_copy--> dw
//   hx --async copy (copied)--> dx
//   [barrier-AND on copied] dx --scale(3)--> dy --add(+dw, barrier bit, signals added)--> dz
//   [barrier-OR on added, copied] dz --reduce_partial (dynamic group memory, signals reduced)--> dpartial
//   dz --async copy after reduced--> hz,  dpartial --async copy after reduced--> hpartial  (signal back = 2)
//
// The five packets are written together and the doorbell rung once. Fences:
// the first packet acquires at system scope (the copy engine wrote its input),
// the last releases at system scope (the copy engine reads its output), the
// others use agent scope.
//
// Lines: the allocations (host: hx, hw, hz, hpartial; device: dx, dw, dy, dz,
// dpartial; host: three kernarg segments from the kernarg pool); per
// iteration copy, copy, barrier and, dispatch scale, dispatch add,
// barrier or, dispatch reduce_partial, copy, copy; "checksum z",
// "checksum partial"; the frees.
#include "hsa_workload.h"
#include "hsa_workload_args.h"

using namespace workload;

namespace {

constexpr uint32_t kGroupSize = 128;
constexpr float kFactor = 3.0f;

}  // namespace

int main(int argc, char** argv) {
  const char* usage = "[ITERATIONS [ELEMENTS]]";
  const uint32_t iterations = countArgument(argc, argv, 1, 3, usage, 100000);
  const uint32_t n = countArgument(argc, argv, 2, 1u << 15, usage);
  noMoreArguments(argc, argv, 2, usage);
  const uint32_t groups = (n + kGroupSize - 1) / kGroupSize;
  const size_t bytes = size_t(n) * sizeof(float);
  const size_t partialBytes = size_t(groups) * sizeof(float);

  Report out = Report::immediate();
  Runtime rt;
  rt.open(Runtime::Load::kFromFile);
  Memory mem(out);

  const Kernel scale = rt.kernel("scale", sizeof(hsa_scale_args));
  const Kernel add = rt.kernel("add", sizeof(hsa_add_args));
  const Kernel reduce = rt.kernel("reduce_partial", sizeof(hsa_reduce_partial_args));

  float* hx = mem.allocate<float>(rt.hostPool, n);
  float* hw = mem.allocate<float>(rt.hostPool, n);
  float* hz = mem.allocate<float>(rt.hostPool, n);
  float* hpartial = mem.allocate<float>(rt.hostPool, groups);
  float* dx = mem.allocate<float>(rt.devicePool, n);
  float* dw = mem.allocate<float>(rt.devicePool, n);
  float* dy = mem.allocate<float>(rt.devicePool, n);
  float* dz = mem.allocate<float>(rt.devicePool, n);
  float* dpartial = mem.allocate<float>(rt.devicePool, groups);
  // The host staging buffers are the CPU's; the GPU reaches fine-grained
  // system memory by default, but a portable program says so.
  for (void* p : {static_cast<void*>(hx), static_cast<void*>(hw), static_cast<void*>(hz),
                  static_cast<void*>(hpartial)}) {
    HSA_CHECK(hsa_amd_agents_allow_access(1, &rt.gpu, nullptr, p));
  }
  auto* scaleArgs = mem.kernarg(rt.kernargPool, scale, hsa_scale_args{dx, dy, kFactor, n});
  auto* addArgs = mem.kernarg(rt.kernargPool, add, hsa_add_args{dy, dw, dz, n});
  auto* reduceArgs = mem.kernarg(rt.kernargPool, reduce, hsa_reduce_partial_args{dz, dpartial, n});

  Queue queue(rt, 64);
  hsa_signal_t copied = createSignal(1);
  hsa_signal_t added = createSignal(1);
  hsa_signal_t reduced = createSignal(1);
  hsa_signal_t back = createSignal(2);
  const hsa_signal_t none{0};

  const Fences first{false, HSA_FENCE_SCOPE_SYSTEM, HSA_FENCE_SCOPE_AGENT};
  const Fences middle{false, HSA_FENCE_SCOPE_AGENT, HSA_FENCE_SCOPE_AGENT};
  const Fences afterPrevious{true, HSA_FENCE_SCOPE_AGENT, HSA_FENCE_SCOPE_AGENT};
  const Fences last{false, HSA_FENCE_SCOPE_AGENT, HSA_FENCE_SCOPE_SYSTEM};

  Checksum zSum, partialSum;
  for (uint32_t it = 0; it < iterations; ++it) {
    for (uint32_t i = 0; i < n; ++i) {
      hx[i] = 0.01f * float(i % 1000) + float(it);
      hw[i] = 1.5f + 0.125f * float(i % 7);
      hz[i] = -1.0f;
    }
    for (uint32_t g = 0; g < groups; ++g) hpartial[g] = -1.0f;
    hsa_signal_store_relaxed(copied, 1);
    hsa_signal_store_relaxed(added, 1);
    hsa_signal_store_relaxed(reduced, 1);
    hsa_signal_store_screlease(back, 2);

    HSA_CHECK(hsa_memory_copy(dw, hw, bytes));
    out.copy(bytes);
    HSA_CHECK(hsa_amd_memory_async_copy(dx, rt.gpu, hx, rt.cpu, bytes, 0, nullptr, copied));
    out.copy(bytes);

    const hsa_barrier_and_packet_t waitCopy = barrierPacket(false, {copied}, none, first);
    const hsa_kernel_dispatch_packet_t scalePacket = dispatchPacket1d(scale, n, kGroupSize, scaleArgs, none, middle);
    const hsa_kernel_dispatch_packet_t addPacket = dispatchPacket1d(add, n, kGroupSize, addArgs, added, afterPrevious);
    // A barrier-OR packet (same layout as the AND packet barrierPacket returns).
    const hsa_barrier_and_packet_t waitAdd = barrierPacket(true, {added, copied}, none, middle);
    const hsa_kernel_dispatch_packet_t reducePacket =
        dispatchPacket1d(reduce, n, kGroupSize, reduceArgs, reduced, last, kGroupSize * sizeof(float));
    const uint64_t firstIndex = queue.reserve(5);
    queue.write(firstIndex, waitCopy);
    out.barrierAnd();
    queue.write(firstIndex + 1, scalePacket);
    out.dispatch(scale.name, scalePacket);
    queue.write(firstIndex + 2, addPacket);
    out.dispatch(add.name, addPacket);
    queue.write(firstIndex + 3, waitAdd);
    out.barrierOr();
    queue.write(firstIndex + 4, reducePacket);
    out.dispatch(reduce.name, reducePacket);
    queue.ring(firstIndex + 4);

    HSA_CHECK(hsa_amd_memory_async_copy(hz, rt.cpu, dz, rt.gpu, bytes, 1, &reduced, back));
    out.copy(bytes);
    HSA_CHECK(hsa_amd_memory_async_copy(hpartial, rt.cpu, dpartial, rt.gpu, partialBytes, 1, &reduced, back));
    out.copy(partialBytes);
    waitComplete(back);

    for (uint32_t g = 0; g < groups; ++g) {
      float expectedSum = 0.0f;
      for (uint32_t i = g * kGroupSize; i < n && i < (g + 1) * kGroupSize; ++i) {
        const float scaled = kFactor * hx[i];
        const float expected = scaled + hw[i];
        if (hz[i] != expected) wrongResult("iteration %u: z[%u] = %g, expected %g", it, i, hz[i], expected);
        expectedSum += expected;
      }
      if (hpartial[g] != expectedSum)
        wrongResult("iteration %u: partial[%u] = %g, expected %g", it, g, hpartial[g], expectedSum);
    }
    zSum.add(hz, bytes);
    partialSum.add(hpartial, partialBytes);
  }
  out.checksum("z", zSum);
  out.checksum("partial", partialSum);

  for (hsa_signal_t s : {copied, added, reduced, back}) HSA_CHECK(hsa_signal_destroy(s));
  queue.destroy();
  mem.free({hx, hw, hz, hpartial, dx, dw, dy, dz, dpartial, scaleArgs, addArgs, reduceArgs});
  rt.close();
  return 0;
}
