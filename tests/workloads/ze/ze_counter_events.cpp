// Counter-based events the way SYCL runtimes use them on current drivers: one
// event from a counter-based pool (ZE_experimental_event_pool_counter_based)
// is the signal event of every call on an in-order immediate list, never
// reset; each call re-arms it, and the host waits on it once per round, for
// the last call. Headers without the extension (Debian 12's, API 1.5) get an
// ordinary event signalled by the last call of a round and reset after it.
// "events counter-based" or "events regular" says which ran.
//
//   ze_counter_events [ROUNDS=3 [ELEMENTS=16384]]
//
// Per round: copy in, launch spin, launch scale, copy out, wait; then
// "checksum counter_events" and "checksum marks".
#include "ze_workload.h"

using namespace workload;

namespace {

constexpr uint32_t kGroupSize = 64;
constexpr uint64_t kSpinNs = 200'000;  // per work-group
constexpr uint32_t kSpinGroups = 2;

#ifdef ZE_EVENT_POOL_COUNTER_BASED_EXP_NAME
constexpr bool kCounterBased = true;
#else
constexpr bool kCounterBased = false;
#endif

}  // namespace

int main(int argc, char** argv) {
  const char* usage = "[ROUNDS [ELEMENTS]]";
  const uint32_t rounds = countArgument(argc, argv, 1, 3, usage);
  const uint32_t n = countArgument(argc, argv, 2, 1u << 14, usage);
  const size_t bytes = size_t(n) * sizeof(float);

  Report out = Report::immediate();
  Runtime rt = Runtime::open();
  Memory mem(rt.context, rt.device, out);
  float* hostIn = mem.host<float>(n);
  float* hostOut = mem.host<float>(n);
  uint32_t* marks = mem.host<uint32_t>(kSpinGroups);
  float* dIn = mem.device<float>(n);
  float* dOut = mem.device<float>(n);

  Kernel spin = rt.kernel("spin");
  spin.setGroupSize(1);
  spin.setArg(0, kSpinNs);
  spin.setArg(1, marks);
  Kernel scale = rt.kernel("scale");
  scale.setGroupSize(kGroupSize);
  const ze_group_count_t grid{groupsFor(n, kGroupSize), 1, 1};
  const ze_group_count_t spinGrid{kSpinGroups, 1, 1};

  auto listDesc = typed<ze_command_queue_desc_t>(ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC);
  listDesc.ordinal = rt.computeOrdinal;
  listDesc.mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS;
  ze_event_pool_desc_t poolDesc{ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, nullptr, ZE_EVENT_POOL_FLAG_HOST_VISIBLE, 1};
#ifdef ZE_EVENT_POOL_COUNTER_BASED_EXP_NAME
  // Counter-based events need an in-order list.
  listDesc.flags = ZE_COMMAND_QUEUE_FLAG_IN_ORDER;
  ze_event_pool_counter_based_exp_desc_t counterDesc{ZE_STRUCTURE_TYPE_COUNTER_BASED_EVENT_POOL_EXP_DESC, nullptr,
                                                     ZE_EVENT_POOL_COUNTER_BASED_EXP_FLAG_IMMEDIATE};
  poolDesc.pNext = &counterDesc;
#endif
  ze_command_list_handle_t list = nullptr;
  ZE_CHECK(zeCommandListCreateImmediate(rt.context, rt.device, &listDesc, &list));
  ze_event_pool_handle_t pool = nullptr;
  ze_device_handle_t dev = rt.device;
  ZE_CHECK(zeEventPoolCreate(rt.context, &poolDesc, 1, &dev, &pool));
  ze_event_desc_t eventDesc{ZE_STRUCTURE_TYPE_EVENT_DESC, nullptr, 0, ZE_EVENT_SCOPE_FLAG_HOST,
                            ZE_EVENT_SCOPE_FLAG_HOST};
  ze_event_handle_t done = nullptr;
  ZE_CHECK(zeEventCreate(pool, &eventDesc, &done));
  std::printf("events %s\n", kCounterBased ? "counter-based" : "regular");
  // Every call signals the counter-based event; an ordinary one only the last.
  ze_event_handle_t each = kCounterBased ? done : nullptr;

  Checksum sum;
  for (uint32_t r = 0; r < rounds; ++r) {
    for (uint32_t i = 0; i < n; ++i) hostIn[i] = float(i % 89) * 0.5f + float(r);
    ZE_CHECK(zeCommandListAppendMemoryCopy(list, dIn, hostIn, bytes, each, 0, nullptr));
    out.copy(bytes);
    ZE_CHECK(zeCommandListAppendLaunchKernel(list, spin.handle, &spinGrid, each, 0, nullptr));
    out.launch(spin, spinGrid);
    scale.setArg(0, dIn);
    scale.setArg(1, dOut);
    scale.setArg(2, 2.0f);
    scale.setArg(3, n);
    ZE_CHECK(zeCommandListAppendLaunchKernel(list, scale.handle, &grid, each, 0, nullptr));
    out.launch(scale, grid);
    ZE_CHECK(zeCommandListAppendMemoryCopy(list, hostOut, dOut, bytes, done, 0, nullptr));
    out.copy(bytes);
    // The event stands for its last call: the copy out, and so, in order, the round.
    ZE_CHECK(zeEventHostSynchronize(done, kForever));
    if (!kCounterBased) ZE_CHECK(zeEventHostReset(done));
    for (uint32_t i = 0; i < n; ++i) {
      float expected = 2.0f * hostIn[i];
      if (hostOut[i] != expected) wrongResult("round %u: out[%u] = %g, expected %g", r, i, hostOut[i], expected);
    }
    sum.add(hostOut, bytes);
  }
  out.checksum("counter_events", sum);
  Checksum markSum;
  for (uint32_t g = 0; g < kSpinGroups; ++g) {
    if (marks[g] != g + 1) wrongResult("spin group %u did not run", g);
  }
  markSum.add(marks, kSpinGroups * sizeof(uint32_t));
  out.checksum("marks", markSum);

  ZE_CHECK(zeCommandListDestroy(list));
  ZE_CHECK(zeEventDestroy(done));
  ZE_CHECK(zeEventPoolDestroy(pool));
  ZE_CHECK(zeKernelDestroy(spin.handle));
  ZE_CHECK(zeKernelDestroy(scale.handle));
  mem.free({hostIn, hostOut, marks, dIn, dOut});
  rt.close();
  return 0;
}
