// Immediate command lists in both modes. The asynchronous list chains a copy,
// two launches and a copy back with events (one launch signals nothing and is
// ordered by a barrier) and the host waits on the last event. The synchronous
// list's appends return finished, so the host reads results straight away.
// The installed headers (API 1.4) have no zeCommandListHostSynchronize, so
// the end of the asynchronous list's work is awaited through a barrier's event.
//
//   ze_immediate [ROUNDS=2 [ELEMENTS=16384]]
//
// Per round: asynchronous copy, launch scale, launch add, copy; synchronous
// fill, launch scale, launch add, copy. Then "checksum async", "checksum sync".
#include "ze_workload.h"

using namespace workload;

namespace {

constexpr uint32_t kGroupSize = 64;

enum EventIndex : uint32_t { kUploaded, kAdded, kDownloaded, kSyncAdded, kDrained, kEventCount };

}  // namespace

int main(int argc, char** argv) {
  const char* usage = "[ROUNDS [ELEMENTS]]";
  const uint32_t rounds = countArgument(argc, argv, 1, 2, usage);
  const uint32_t n = countArgument(argc, argv, 2, 1u << 14, usage);
  const size_t bytes = size_t(n) * sizeof(float);

  Report out = Report::immediate();
  Runtime rt = Runtime::open();
  Memory mem(rt.context, rt.device, out);

  float* hostIn = mem.host<float>(n);
  float* hostOut = mem.host<float>(n);
  float* dIn = mem.device<float>(n);
  float* dScaled = mem.device<float>(n);
  float* dSum = mem.device<float>(n);
  float* s = mem.shared<float>(n);
  float* sScaled = mem.shared<float>(n);
  float* sSum = mem.shared<float>(n);

  ze_event_pool_handle_t pool = rt.eventPool(kEventCount, ZE_EVENT_POOL_FLAG_HOST_VISIBLE);
  ze_event_handle_t ev[kEventCount];
  for (uint32_t i = 0; i < kEventCount; ++i) {
    ze_event_desc_t desc{ZE_STRUCTURE_TYPE_EVENT_DESC, nullptr, i, ZE_EVENT_SCOPE_FLAG_HOST, ZE_EVENT_SCOPE_FLAG_HOST};
    ZE_CHECK(zeEventCreate(pool, &desc, &ev[i]));
  }

  Kernel scale = rt.kernel("scale");
  scale.setGroupSize(kGroupSize);
  Kernel add = rt.kernel("add");
  add.setGroupSize(kGroupSize);
  const ze_group_count_t grid{groupsFor(n, kGroupSize), 1, 1};

  ze_command_list_handle_t async = rt.immediateList(ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
  ze_command_list_handle_t sync = rt.immediateList(ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS);

  Checksum asyncSum, syncSum;
  for (uint32_t r = 0; r < rounds; ++r) {
    // Asynchronous: out = 2 in + in.
    for (uint32_t i = 0; i < n; ++i) hostIn[i] = float(i % 251) * 0.125f + float(r);
    ZE_CHECK(zeCommandListAppendMemoryCopy(async, dIn, hostIn, bytes, ev[kUploaded], 0, nullptr));
    out.copy(bytes);
    scale.setArg(0, dIn);
    scale.setArg(1, dScaled);
    scale.setArg(2, 2.0f);
    scale.setArg(3, n);
    ZE_CHECK(zeCommandListAppendLaunchKernel(async, scale.handle, &grid, nullptr, 1, &ev[kUploaded]));
    out.launch(scale, grid);
    ZE_CHECK(zeCommandListAppendBarrier(async, nullptr, 0, nullptr));
    add.setArg(0, dScaled);
    add.setArg(1, dIn);
    add.setArg(2, dSum);
    add.setArg(3, n);
    ZE_CHECK(zeCommandListAppendLaunchKernel(async, add.handle, &grid, ev[kAdded], 0, nullptr));
    out.launch(add, grid);
    ZE_CHECK(zeCommandListAppendMemoryCopy(async, hostOut, dSum, bytes, ev[kDownloaded], 1, &ev[kAdded]));
    out.copy(bytes);
    ZE_CHECK(zeEventHostSynchronize(ev[kDownloaded], kForever));
    for (uint32_t i = 0; i < n; ++i) {
      float expected = 2.0f * hostIn[i] + hostIn[i];
      if (hostOut[i] != expected) wrongResult("round %u: async out[%u] = %g, expected %g", r, i, hostOut[i], expected);
    }
    asyncSum.add(hostOut, bytes);
    for (uint32_t i : {kUploaded, kAdded, kDownloaded}) ZE_CHECK(zeEventHostReset(ev[i]));

    // Synchronous: each step's result is visible as soon as its append returns.
    const float fillValue = 0.5f + float(r);
    ZE_CHECK(zeCommandListAppendMemoryFill(sync, s, &fillValue, sizeof fillValue, bytes, nullptr, 0, nullptr));
    out.fill(bytes);
    if (s[0] != fillValue || s[n - 1] != fillValue) wrongResult("round %u: synchronous fill not done on return", r);
    scale.setArg(0, s);
    scale.setArg(1, sScaled);
    scale.setArg(2, 4.0f);
    ZE_CHECK(zeCommandListAppendLaunchKernel(sync, scale.handle, &grid, nullptr, 0, nullptr));
    out.launch(scale, grid);
    if (sScaled[n - 1] != 4.0f * fillValue) wrongResult("round %u: synchronous scale not done on return", r);
    add.setArg(0, sScaled);
    add.setArg(1, s);
    add.setArg(2, sSum);
    ZE_CHECK(zeCommandListAppendLaunchKernel(sync, add.handle, &grid, ev[kSyncAdded], 0, nullptr));
    out.launch(add, grid);
    ze_result_t status = zeEventQueryStatus(ev[kSyncAdded]);
    if (status != ZE_RESULT_SUCCESS) wrongResult("round %u: synchronous launch's event not signaled (0x%x)", r, status);
    ZE_CHECK(zeEventHostReset(ev[kSyncAdded]));
    ZE_CHECK(zeCommandListAppendMemoryCopy(sync, hostOut, sSum, bytes, nullptr, 0, nullptr));
    out.copy(bytes);
    const float expected = 4.0f * fillValue + fillValue;
    for (uint32_t i = 0; i < n; ++i) {
      if (hostOut[i] != expected) wrongResult("round %u: sync out[%u] = %g, expected %g", r, i, hostOut[i], expected);
    }
    syncSum.add(hostOut, bytes);
  }
  out.checksum("async", asyncSum);
  out.checksum("sync", syncSum);

  // Nothing should be left in flight before the list goes.
  ZE_CHECK(zeCommandListAppendBarrier(async, ev[kDrained], 0, nullptr));
  ZE_CHECK(zeEventHostSynchronize(ev[kDrained], kForever));
  ZE_CHECK(zeCommandListDestroy(sync));
  ZE_CHECK(zeCommandListDestroy(async));
  ZE_CHECK(zeKernelDestroy(scale.handle));
  ZE_CHECK(zeKernelDestroy(add.handle));
  for (ze_event_handle_t e : ev) ZE_CHECK(zeEventDestroy(e));
  ZE_CHECK(zeEventPoolDestroy(pool));
  mem.free({hostIn, hostOut, dIn, dScaled, dSum, s, sScaled, sSum});
  rt.close();
  return 0;
}
