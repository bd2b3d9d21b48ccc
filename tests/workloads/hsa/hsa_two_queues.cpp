// Work split over two queues on the GPU and ordered across them as HIP's
// runtime orders two streams: a barrier packet on one queue waits for the
// completion signal of a dispatch on the other. The memory is what such
// programs use: fine-grained system memory the device reads directly and the
// host rewrites between dispatches, device memory fed and read back by the
// copy engine, and a plain malloc'd host buffer locked for the copy engine
// (hsa_amd_memory_lock), as HIP stages pageable memory. Kernels come from
// their own code object (replay_kernels.c): a struct passed by value inside
// the kernarg segment, scalars, buffers, and a hidden argument
// (hidden_global_offset_x) the program fills itself, as HIP's runtime does.
//
//   hsa_two_queues [ITERATIONS=3 [ELEMENTS=4096]]
//
// Each iteration, after the host resets every signal to 1:
//   host: first inputs -> host (fine-grained),  x -> staging (locked)
//   staging --async copy (copied)--> dx
//   queue 2: [barrier-AND on scaled, copied] combine(da, dx, bias) -> db (combined)
//   queue 1: scale_offset(host, {scale, offset, n}, global offset 0) -> da (scaled)
//   host: waits for scaled, then second inputs -> host
//   queue 1: [barrier-OR on combined, blended] blend(db, host, weight) -> dc (blended)
//   dc --async copy after blended (c_back)--> hc
//   db --async copy after combined (b_back)--> staging
//   host: waits for c_back and b_back with hsa_amd_signal_wait_any, checks hc and staging
// Queue 2's packets are written before the dispatch they wait for, so the
// barrier-AND really waits on the other queue. blended is the completion
// signal of the dispatch behind the barrier-OR, so only combined (queue 2)
// can open it; the OR still names a signal of each queue.
//
// Lines: the allocations (host: host, hc; device: da, dx, db, dc), lock
// (staging), the allocations of the three kernarg segments (host); per
// iteration copy, barrier and, dispatch combine, dispatch scale_offset,
// barrier or, dispatch blend, copy, copy; "checksum b", "checksum c"; unlock
// (staging); the frees.
#include "hsa_workload.h"
#include "hsa_replay_args.h"

using namespace workload;

namespace {

constexpr uint32_t kGroupSize = 256;
constexpr float kBias = 1.5f;
constexpr float kWeight = 0.5f;

// Inputs, chosen so that every result is exact in float whatever the order of
// rounding (contracted or not).
float firstInput(uint32_t i, uint32_t it) { return 0.25f * float((i * 7 + it) % 64); }
float secondInput(uint32_t i, uint32_t it) { return float((i + 3 * it) % 32) - 8.0f; }
float xInput(uint32_t i) { return float(int(i % 13) - 6); }
hsa_scale_offset_params paramsOf(uint32_t it, uint32_t n) {
  return {0.5f + float(it % 4), int32_t(it % 5) - 2, n};
}

// Waits until every signal drops below 1, taking them as they come.
void waitAll(std::vector<hsa_signal_t> pending) {
  while (!pending.empty()) {
    std::vector<hsa_signal_condition_t> conditions(pending.size(), HSA_SIGNAL_CONDITION_LT);
    std::vector<hsa_signal_value_t> values(pending.size(), 1);
    hsa_signal_value_t satisfying = 0;
    const uint32_t i = hsa_amd_signal_wait_any(uint32_t(pending.size()), pending.data(), conditions.data(),
                                               values.data(), kForever, HSA_WAIT_STATE_BLOCKED, &satisfying);
    if (i >= pending.size())
      setupFailed("hsa_amd_signal_wait_any on %zu signals returned %u", pending.size(), unsigned(i));
    // The wait orders no memory: an acquiring load before reading what the copy wrote.
    if (hsa_signal_load_scacquire(pending[i]) < 1) pending.erase(pending.begin() + i);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const char* usage = "[ITERATIONS [ELEMENTS]]";
  const uint32_t iterations = countArgument(argc, argv, 1, 3, usage, 100000);
  const uint32_t n = countArgument(argc, argv, 2, 4096, usage);
  noMoreArguments(argc, argv, 2, usage);
  const size_t bytes = size_t(n) * sizeof(float);

  Report out = Report::immediate();
  Runtime rt;
  rt.open(Runtime::Load::kFromMemory);
  Memory mem(out);

  const Kernel scaleOffset = rt.kernel("scale_offset", sizeof(hsa_scale_offset_args));
  const Kernel combine = rt.kernel("combine", sizeof(hsa_combine_args));
  const Kernel blend = rt.kernel("blend", sizeof(hsa_blend_args));

  float* host = mem.allocate<float>(rt.hostPool, n);
  float* hc = mem.allocate<float>(rt.hostPool, n);
  float* da = mem.allocate<float>(rt.devicePool, n);
  float* dx = mem.allocate<float>(rt.devicePool, n);
  float* db = mem.allocate<float>(rt.devicePool, n);
  float* dc = mem.allocate<float>(rt.devicePool, n);
  // As HIP does: the GPU may use the host buffers, the CPU (whose side the
  // copy engine works for) the device ones.
  for (void* p : {static_cast<void*>(host), static_cast<void*>(hc)})
    HSA_CHECK(hsa_amd_agents_allow_access(1, &rt.gpu, nullptr, p));
  for (void* p : {static_cast<void*>(da), static_cast<void*>(dx), static_cast<void*>(db), static_cast<void*>(dc)})
    HSA_CHECK(hsa_amd_agents_allow_access(1, &rt.cpu, nullptr, p));

  // Pageable memory the runtime never allocated, locked for the GPU; copies
  // use the address the lock gives the agent.
  const size_t stagingBytes = (bytes + 4095) / 4096 * 4096;
  auto* staging = static_cast<float*>(std::aligned_alloc(4096, stagingBytes));
  if (staging == nullptr) setupFailed("cannot allocate %zu bytes of host memory", stagingBytes);
  void* stagingForGpu = nullptr;
  HSA_CHECK(hsa_amd_memory_lock(staging, bytes, &rt.gpu, 1, &stagingForGpu));
  out.lock(bytes);

  auto* scaleArgs =
      mem.kernarg(rt.kernargPool, scaleOffset, hsa_scale_offset_args{host, da, paramsOf(0, n), 0});
  auto* combineArgs = mem.kernarg(rt.kernargPool, combine, hsa_combine_args{da, dx, db, kBias, n});
  auto* blendArgs = mem.kernarg(rt.kernargPool, blend, hsa_blend_args{db, host, dc, kWeight, n});

  Queue queue1(rt, 64);
  Queue queue2(rt, 64);
  // Idle until the host arms them.
  hsa_signal_t copied = createSignal(0);
  hsa_signal_t scaled = createSignal(0);
  hsa_signal_t combined = createSignal(0);
  hsa_signal_t blended = createSignal(0);
  hsa_signal_t cBack = createSignal(0);
  hsa_signal_t bBack = createSignal(0);
  const hsa_signal_t none{0};

  Checksum bSum, cSum;
  for (uint32_t it = 0; it < iterations; ++it) {
    for (uint32_t i = 0; i < n; ++i) {
      host[i] = firstInput(i, it);
      staging[i] = xInput(i);
      hc[i] = -1.0f;
    }
    const hsa_scale_offset_params params = paramsOf(it, n);
    scaleArgs->params = params;
    scaleArgs->hidden_global_offset_x = 0;
    for (hsa_signal_t s : {copied, scaled, combined, blended, cBack, bBack}) hsa_signal_store_screlease(s, 1);

    HSA_CHECK(hsa_amd_memory_async_copy(dx, rt.gpu, stagingForGpu, rt.cpu, bytes, 0, nullptr, copied));
    out.copy(bytes);

    const hsa_barrier_and_packet_t waitScaled = barrierPacket(false, {scaled, copied}, none);
    const hsa_kernel_dispatch_packet_t combinePacket = dispatchPacket1d(combine, n, kGroupSize, combineArgs, combined);
    const uint64_t first2 = queue2.reserve(2);
    queue2.write(first2, waitScaled);
    out.barrierAnd();
    queue2.write(first2 + 1, combinePacket);
    out.dispatch(combine.name, combinePacket);
    queue2.ring(first2 + 1);

    const hsa_kernel_dispatch_packet_t scalePacket = dispatchPacket1d(scaleOffset, n, kGroupSize, scaleArgs, scaled);
    queue1.submit(scalePacket);
    out.dispatch(scaleOffset.name, scalePacket);

    // scale_offset has read the first inputs: the device reads the second
    // ones from the same memory.
    waitComplete(scaled);
    for (uint32_t i = 0; i < n; ++i) host[i] = secondInput(i, it);

    // A barrier-OR packet (same layout as the AND packet barrierPacket returns).
    const hsa_barrier_and_packet_t waitCombined = barrierPacket(true, {combined, blended}, none);
    const hsa_kernel_dispatch_packet_t blendPacket = dispatchPacket1d(blend, n, kGroupSize, blendArgs, blended);
    const uint64_t first1 = queue1.reserve(2);
    queue1.write(first1, waitCombined);
    out.barrierOr();
    queue1.write(first1 + 1, blendPacket);
    out.dispatch(blend.name, blendPacket);
    queue1.ring(first1 + 1);

    HSA_CHECK(hsa_amd_memory_async_copy(hc, rt.cpu, dc, rt.gpu, bytes, 1, &blended, cBack));
    out.copy(bytes);
    HSA_CHECK(hsa_amd_memory_async_copy(stagingForGpu, rt.cpu, db, rt.gpu, bytes, 1, &combined, bBack));
    out.copy(bytes);
    waitAll({cBack, bBack});

    for (uint32_t i = 0; i < n; ++i) {
      const float a = params.scale * firstInput(i, it) + float(params.offset);
      const float b = a * xInput(i) + kBias;
      const float c = b + kWeight * secondInput(i, it);
      if (staging[i] != b) wrongResult("iteration %u: b[%u] = %g, expected %g", it, i, staging[i], b);
      if (hc[i] != c) wrongResult("iteration %u: c[%u] = %g, expected %g", it, i, hc[i], c);
    }
    bSum.add(staging, bytes);
    cSum.add(hc, bytes);
  }
  out.checksum("b", bSum);
  out.checksum("c", cSum);

  for (hsa_signal_t s : {copied, scaled, combined, blended, cBack, bBack}) HSA_CHECK(hsa_signal_destroy(s));
  queue1.destroy();
  queue2.destroy();
  HSA_CHECK(hsa_amd_memory_unlock(staging));
  out.unlock(bytes);
  std::free(staging);
  mem.free({host, hc, da, dx, db, dc, scaleArgs, combineArgs, blendArgs});
  rt.close();
  return 0;
}
