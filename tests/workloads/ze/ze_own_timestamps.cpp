// A program that times its own kernels: its event pool has the
// kernel-timestamp flag, some launches signal those events, and it converts
// zeEventQueryKernelTimestamp ticks to nanoseconds with the device's
// timerResolution (cycles per second in the 1.2 properties), masking with
// kernelTimestampValidBits. Other launches signal nothing, leaving room for a
// tool to add events of its own; the program's timings must not change.
//
//   ze_own_timestamps [ROUNDS=3 [ELEMENTS=16384]]
//
// Per round (a regular list executed once per round): copy, launch scale,
// launch add, launch spin, copy, then "timestamp scale NS" and
// "timestamp spin NS". After the rounds, on an immediate list: launch spin,
// launch scale, "timestamp spin NS". Then "checksum sum" and "checksum marks".
// Each duration must be positive, at most the host time around its
// submission, and, for spin, at least the time it busy-waits.
#include "ze_workload.h"

using namespace workload;

namespace {

constexpr uint32_t kGroupSize = 64;
constexpr uint64_t kSpinNs = 200'000;  // per work-group
constexpr uint32_t kSpinGroups = 2;

enum EventIndex : uint32_t { kScaleDone, kSpinDone, kImmediateSpinDone, kImmediateDrained, kEventCount };

struct DeviceClock {
  uint64_t ticksPerSecond;
  uint64_t kernelMask;

  uint64_t ns(uint64_t ticks) const {
    return static_cast<uint64_t>(static_cast<unsigned __int128>(ticks) * 1'000'000'000u / ticksPerSecond);
  }
  uint64_t durationNs(const ze_kernel_timestamp_data_t& t) const { return ns((t.kernelEnd - t.kernelStart) & kernelMask); }
};

DeviceClock deviceClock(ze_device_handle_t device) {
  auto props = typed<ze_device_properties_t>(ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2);
  ZE_CHECK(zeDeviceGetProperties(device, &props));
  const uint32_t bits = props.kernelTimestampValidBits;
  if (props.timerResolution == 0 || bits == 0 || bits > 64)
    wrongResult("device clock: timerResolution %llu, kernelTimestampValidBits %u",
                static_cast<unsigned long long>(props.timerResolution), bits);
  return {props.timerResolution, bits == 64 ? ~0ull : (1ull << bits) - 1};
}

// Reads the kernel timestamp of `event`, checks it against the host time
// `wallNs` that enclosed the work and the least time `minimumNs` the kernel
// takes, and reports it.
void checkTimestamp(const DeviceClock& clock, ze_event_handle_t event, const Kernel& kernel, uint64_t wallNs,
                    uint64_t minimumNs, Report& out) {
  ze_kernel_timestamp_result_t ts{};
  ZE_CHECK(zeEventQueryKernelTimestamp(event, &ts));
  const uint64_t global = clock.durationNs(ts.global);
  const uint64_t context = clock.durationNs(ts.context);
  // A start and an end each truncated to whole ticks: up to two ticks short.
  const uint64_t slackNs = 2 * clock.ns(1) + 2;
  for (uint64_t d : {global, context}) {
    if (d == 0 || d > wallNs || d + slackNs < minimumNs)
      wrongResult("%s: device duration %llu ns (global %llu, context %llu), host wall time %llu ns, at least %llu ns",
                  kernel.name.c_str(), static_cast<unsigned long long>(d), static_cast<unsigned long long>(global),
                  static_cast<unsigned long long>(context), static_cast<unsigned long long>(wallNs),
                  static_cast<unsigned long long>(minimumNs));
  }
  out.timestamp(kernel.name, global);
}

}  // namespace

int main(int argc, char** argv) {
  const char* usage = "[ROUNDS [ELEMENTS]]";
  const uint32_t rounds = countArgument(argc, argv, 1, 3, usage);
  const uint32_t n = countArgument(argc, argv, 2, 1u << 14, usage);
  const size_t bytes = size_t(n) * sizeof(float);

  Report out = Report::immediate();
  Runtime rt = Runtime::open();
  const DeviceClock clock = deviceClock(rt.device);
  Memory mem(rt.context, rt.device, out);

  float* hostIn = mem.host<float>(n);
  float* hostOut = mem.host<float>(n);
  float* dIn = mem.device<float>(n);
  float* dScaled = mem.device<float>(n);
  float* dSum = mem.device<float>(n);
  uint32_t* marks = mem.shared<uint32_t>(kSpinGroups);

  ze_event_pool_handle_t pool =
      rt.eventPool(kEventCount, ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP | ZE_EVENT_POOL_FLAG_HOST_VISIBLE);
  ze_event_handle_t ev[kEventCount];
  for (uint32_t i = 0; i < kEventCount; ++i) {
    ze_event_desc_t desc{ZE_STRUCTURE_TYPE_EVENT_DESC, nullptr, i, ZE_EVENT_SCOPE_FLAG_HOST, ZE_EVENT_SCOPE_FLAG_HOST};
    ZE_CHECK(zeEventCreate(pool, &desc, &ev[i]));
  }

  Kernel scale = rt.kernel("scale");
  scale.setGroupSize(kGroupSize);
  scale.setArg(0, dIn);
  scale.setArg(1, dScaled);
  scale.setArg(2, 0.75f);
  scale.setArg(3, n);
  Kernel add = rt.kernel("add");
  add.setGroupSize(kGroupSize);
  add.setArg(0, dScaled);
  add.setArg(1, dIn);
  add.setArg(2, dSum);
  add.setArg(3, n);
  Kernel spin = rt.kernel("spin");
  spin.setGroupSize(1);
  spin.setArg(0, kSpinNs);
  spin.setArg(1, marks);
  const ze_group_count_t grid{groupsFor(n, kGroupSize), 1, 1};
  const ze_group_count_t spinGrid{kSpinGroups, 1, 1};

  ze_command_queue_handle_t queue = rt.queue();
  ze_command_list_handle_t list = rt.list();
  Report recorded = Report::held();
  ZE_CHECK(zeCommandListAppendMemoryCopy(list, dIn, hostIn, bytes, nullptr, 0, nullptr));
  recorded.copy(bytes);
  ZE_CHECK(zeCommandListAppendBarrier(list, nullptr, 0, nullptr));
  ZE_CHECK(zeCommandListAppendLaunchKernel(list, scale.handle, &grid, ev[kScaleDone], 0, nullptr));
  recorded.launch(scale, grid);
  ZE_CHECK(zeCommandListAppendLaunchKernel(list, add.handle, &grid, nullptr, 1, &ev[kScaleDone]));
  recorded.launch(add, grid);
  ZE_CHECK(zeCommandListAppendLaunchKernel(list, spin.handle, &spinGrid, ev[kSpinDone], 0, nullptr));
  recorded.launch(spin, spinGrid);
  ZE_CHECK(zeCommandListAppendBarrier(list, nullptr, 0, nullptr));
  ZE_CHECK(zeCommandListAppendMemoryCopy(list, hostOut, dSum, bytes, nullptr, 0, nullptr));
  recorded.copy(bytes);
  ZE_CHECK(zeCommandListClose(list));

  ze_fence_desc_t fdesc{ZE_STRUCTURE_TYPE_FENCE_DESC, nullptr, 0};
  ze_fence_handle_t fence = nullptr;
  ZE_CHECK(zeFenceCreate(queue, &fdesc, &fence));

  Checksum sum, markSum;
  for (uint32_t r = 0; r < rounds; ++r) {
    for (uint32_t i = 0; i < n; ++i) hostIn[i] = float(i % 509) + 0.5f * float(r);
    std::memset(marks, 0, kSpinGroups * sizeof(uint32_t));
    const uint64_t submitted = hostNowNs();
    ZE_CHECK(zeCommandQueueExecuteCommandLists(queue, 1, &list, fence));
    ZE_CHECK(zeFenceHostSynchronize(fence, kForever));
    const uint64_t wallNs = hostNowNs() - submitted;
    recorded.replayInto(out);
    ZE_CHECK(zeFenceReset(fence));
    checkTimestamp(clock, ev[kScaleDone], scale, wallNs, 0, out);
    checkTimestamp(clock, ev[kSpinDone], spin, wallNs, kSpinGroups * kSpinNs, out);
    ZE_CHECK(zeEventHostReset(ev[kScaleDone]));
    ZE_CHECK(zeEventHostReset(ev[kSpinDone]));

    for (uint32_t i = 0; i < n; ++i) {
      float scaled = 0.75f * hostIn[i];
      float expected = scaled + hostIn[i];
      if (hostOut[i] != expected) wrongResult("round %u: out[%u] = %g, expected %g", r, i, hostOut[i], expected);
    }
    for (uint32_t g = 0; g < kSpinGroups; ++g) {
      if (marks[g] != g + 1) wrongResult("round %u: spin group %u did not run", r, g);
    }
    sum.add(hostOut, bytes);
    markSum.add(marks, kSpinGroups * sizeof(uint32_t));
  }

  // The same on an immediate list: a timed launch followed by an untimed one.
  ze_command_list_handle_t immediate = rt.immediateList(ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
  std::memset(marks, 0, kSpinGroups * sizeof(uint32_t));
  const uint64_t submitted = hostNowNs();
  ZE_CHECK(zeCommandListAppendLaunchKernel(immediate, spin.handle, &spinGrid, ev[kImmediateSpinDone], 0, nullptr));
  out.launch(spin, spinGrid);
  ZE_CHECK(zeEventHostSynchronize(ev[kImmediateSpinDone], kForever));
  const uint64_t wallNs = hostNowNs() - submitted;
  ZE_CHECK(zeCommandListAppendLaunchKernel(immediate, scale.handle, &grid, nullptr, 0, nullptr));
  out.launch(scale, grid);
  ZE_CHECK(zeCommandListAppendBarrier(immediate, ev[kImmediateDrained], 0, nullptr));
  ZE_CHECK(zeEventHostSynchronize(ev[kImmediateDrained], kForever));
  checkTimestamp(clock, ev[kImmediateSpinDone], spin, wallNs, kSpinGroups * kSpinNs, out);
  for (uint32_t g = 0; g < kSpinGroups; ++g) {
    if (marks[g] != g + 1) wrongResult("immediate: spin group %u did not run", g);
  }
  markSum.add(marks, kSpinGroups * sizeof(uint32_t));
  out.checksum("sum", sum);
  out.checksum("marks", markSum);

  ZE_CHECK(zeCommandListDestroy(immediate));
  ZE_CHECK(zeFenceDestroy(fence));
  ZE_CHECK(zeCommandListDestroy(list));
  ZE_CHECK(zeCommandQueueDestroy(queue));
  for (ze_event_handle_t e : ev) ZE_CHECK(zeEventDestroy(e));
  ZE_CHECK(zeEventPoolDestroy(pool));
  for (Kernel* k : {&scale, &add, &spin}) ZE_CHECK(zeKernelDestroy(k->handle));
  mem.free({hostIn, hostOut, dIn, dScaled, dSum, marks});
  rt.close();
  return 0;
}
