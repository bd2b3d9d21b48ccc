// A pipeline of dependent kernels in one regular command list, ordered by
// events instead of barriers, executed several times. The event pool has no
// kernel-timestamp flag, as most programs' pools do not. Between executions
// the list resets its own internal events (zeCommandListAppendEventReset) and
// the host resets the ones it waits on (zeEventHostReset).
//
//   ze_pipeline [EXECUTIONS=3 [ELEMENTS=32768]]
//
//   x   --copy-->  dx --scale(3)--> dy --+
//   1.5 --fill-->  dw -------------------+--add--> dz --reduce_partial--> dpartial
//   dz --copy--> z,  dpartial --copy--> partial
//
// Per execution, in append order: copy, fill, launch scale, launch add,
// launch reduce_partial, copy, copy. Then "checksum z" and "checksum partial".
#include "ze_workload.h"

using namespace workload;

namespace {

constexpr uint32_t kGroupSize = 128;
constexpr float kFactor = 3.0f;
constexpr float kFillValue = 1.5f;

enum EventIndex : uint32_t { kCopiedX, kFilledW, kScaled, kAdded, kReduced, kCopiedZ, kCopiedPartial, kEventCount };

}  // namespace

int main(int argc, char** argv) {
  const char* usage = "[EXECUTIONS [ELEMENTS]]";
  const uint32_t executions = countArgument(argc, argv, 1, 3, usage);
  const uint32_t n = countArgument(argc, argv, 2, 1u << 15, usage);
  const uint32_t groups = groupsFor(n, kGroupSize);
  const size_t bytes = size_t(n) * sizeof(float);
  const size_t partialBytes = size_t(groups) * sizeof(float);

  Report out = Report::immediate();
  Runtime rt = Runtime::open();
  Memory mem(rt.context, rt.device, out);

  float* x = mem.host<float>(n);
  float* z = mem.host<float>(n);
  float* partial = mem.host<float>(groups);
  float* dx = mem.device<float>(n);
  float* dw = mem.device<float>(n);
  float* dy = mem.device<float>(n);
  float* dz = mem.device<float>(n);
  float* dpartial = mem.device<float>(groups);

  Kernel scale = rt.kernel("scale");
  scale.setGroupSize(kGroupSize);
  scale.setArg(0, dx);
  scale.setArg(1, dy);
  scale.setArg(2, kFactor);
  scale.setArg(3, n);
  Kernel add = rt.kernel("add");
  add.setGroupSize(kGroupSize);
  add.setArg(0, dy);
  add.setArg(1, dw);
  add.setArg(2, dz);
  add.setArg(3, n);
  Kernel reduce = rt.kernel("reduce_partial");
  reduce.setGroupSize(kGroupSize);
  reduce.setArg(0, dz);
  reduce.setArg(1, dpartial);
  reduce.setArg(2, n);
  ZE_CHECK(zeKernelSetArgumentValue(reduce.handle, 3, kGroupSize * sizeof(float), nullptr));  // local memory

  ze_event_pool_handle_t pool = rt.eventPool(kEventCount, ZE_EVENT_POOL_FLAG_HOST_VISIBLE);
  ze_event_handle_t ev[kEventCount];
  for (uint32_t i = 0; i < kEventCount; ++i) {
    // Only the last two are waited on by the host; the rest stay on the device.
    ze_event_scope_flags_t scope = i >= kCopiedZ ? ZE_EVENT_SCOPE_FLAG_HOST : ZE_EVENT_SCOPE_FLAG_DEVICE;
    ze_event_desc_t desc{ZE_STRUCTURE_TYPE_EVENT_DESC, nullptr, i, scope, scope};
    ZE_CHECK(zeEventCreate(pool, &desc, &ev[i]));
  }

  ze_command_queue_handle_t queue = rt.queue();
  ze_command_list_handle_t list = rt.list();
  Report recorded = Report::held();
  const ze_group_count_t grid{groups, 1, 1};
  ZE_CHECK(zeCommandListAppendMemoryCopy(list, dx, x, bytes, ev[kCopiedX], 0, nullptr));
  recorded.copy(bytes);
  ZE_CHECK(zeCommandListAppendMemoryFill(list, dw, &kFillValue, sizeof kFillValue, bytes, ev[kFilledW], 0, nullptr));
  recorded.fill(bytes);
  ZE_CHECK(zeCommandListAppendLaunchKernel(list, scale.handle, &grid, ev[kScaled], 1, &ev[kCopiedX]));
  recorded.launch(scale, grid);
  ze_event_handle_t addInputs[] = {ev[kScaled], ev[kFilledW]};
  ZE_CHECK(zeCommandListAppendLaunchKernel(list, add.handle, &grid, ev[kAdded], 2, addInputs));
  recorded.launch(add, grid);
  ZE_CHECK(zeCommandListAppendLaunchKernel(list, reduce.handle, &grid, ev[kReduced], 1, &ev[kAdded]));
  recorded.launch(reduce, grid);
  ZE_CHECK(zeCommandListAppendMemoryCopy(list, z, dz, bytes, ev[kCopiedZ], 1, &ev[kAdded]));
  recorded.copy(bytes);
  ZE_CHECK(zeCommandListAppendMemoryCopy(list, partial, dpartial, partialBytes, ev[kCopiedPartial], 1, &ev[kReduced]));
  recorded.copy(partialBytes);
  // Once everything has finished, return the internal events to unsignaled
  // so the next execution waits on fresh signals.
  ze_event_handle_t finished[] = {ev[kCopiedZ], ev[kCopiedPartial]};
  ZE_CHECK(zeCommandListAppendBarrier(list, nullptr, 2, finished));
  for (uint32_t i = kCopiedX; i <= kReduced; ++i) ZE_CHECK(zeCommandListAppendEventReset(list, ev[i]));
  ZE_CHECK(zeCommandListClose(list));

  ze_fence_desc_t fdesc{ZE_STRUCTURE_TYPE_FENCE_DESC, nullptr, 0};
  ze_fence_handle_t fence = nullptr;
  ZE_CHECK(zeFenceCreate(queue, &fdesc, &fence));

  Checksum zSum, partialSum;
  for (uint32_t e = 0; e < executions; ++e) {
    for (uint32_t i = 0; i < n; ++i) x[i] = 0.01f * float(i % 1000) + float(e);
    ZE_CHECK(zeCommandQueueExecuteCommandLists(queue, 1, &list, fence));
    recorded.replayInto(out);
    ZE_CHECK(zeEventHostSynchronize(ev[kCopiedZ], kForever));
    ZE_CHECK(zeEventHostSynchronize(ev[kCopiedPartial], kForever));
    ZE_CHECK(zeFenceHostSynchronize(fence, kForever));
    ZE_CHECK(zeFenceReset(fence));
    for (uint32_t i = kCopiedX; i <= kReduced; ++i) {
      ze_result_t status = zeEventQueryStatus(ev[i]);
      if (status != ZE_RESULT_NOT_READY) wrongResult("execution %u: event %u not reset by the list (0x%x)", e, i, status);
    }
    ZE_CHECK(zeEventHostReset(ev[kCopiedZ]));
    ZE_CHECK(zeEventHostReset(ev[kCopiedPartial]));

    for (uint32_t g = 0; g < groups; ++g) {
      float expectedSum = 0.0f;
      for (uint32_t i = g * kGroupSize; i < n && i < (g + 1) * kGroupSize; ++i) {
        float scaled = kFactor * x[i];
        float expected = scaled + kFillValue;
        if (z[i] != expected) wrongResult("execution %u: z[%u] = %g, expected %g", e, i, z[i], expected);
        expectedSum += expected;
      }
      if (partial[g] != expectedSum)
        wrongResult("execution %u: partial[%u] = %g, expected %g", e, g, partial[g], expectedSum);
    }
    zSum.add(z, bytes);
    partialSum.add(partial, partialBytes);
  }
  out.checksum("z", zSum);
  out.checksum("partial", partialSum);

  ZE_CHECK(zeFenceDestroy(fence));
  ZE_CHECK(zeCommandListDestroy(list));
  ZE_CHECK(zeCommandQueueDestroy(queue));
  for (ze_event_handle_t e : ev) ZE_CHECK(zeEventDestroy(e));
  ZE_CHECK(zeEventPoolDestroy(pool));
  for (Kernel* k : {&scale, &add, &reduce}) ZE_CHECK(zeKernelDestroy(k->handle));
  mem.free({x, z, partial, dx, dw, dy, dz, dpartial});
  rt.close();
  return 0;
}
