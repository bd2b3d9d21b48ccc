// Level Zero the way SYCL runtimes and compute-benchmarks use it on current
// loaders: drivers found with zeInitDrivers, work on an asynchronous immediate
// command list without events, and the host waiting for the list itself with
// zeCommandListHostSynchronize after each round. Headers without those
// functions (Debian 12's, API 1.5) get zeInit + zeDriverGet and a barrier's
// event to wait on; "sync list" or "sync event" says which ran.
//
//   ze_host_sync [ROUNDS=3 [ELEMENTS=16384]]
//
// Per round: copy in, launch scale, launch add, copy out, wait; then
// "checksum host_sync".
#include "ze_workload.h"

using namespace workload;

namespace {

constexpr uint32_t kGroupSize = 64;

#if defined(ZE_API_VERSION_CURRENT_M) && ZE_API_VERSION_CURRENT_M >= ZE_MAKE_VERSION(1, 10)
constexpr bool kNewEntryPoints = true;
#else
constexpr bool kNewEntryPoints = false;
#endif

}  // namespace

int main(int argc, char** argv) {
  const char* usage = "[ROUNDS [ELEMENTS]]";
  const uint32_t rounds = countArgument(argc, argv, 1, 3, usage);
  const uint32_t n = countArgument(argc, argv, 2, 1u << 14, usage);
  const size_t bytes = size_t(n) * sizeof(float);

  Report out = Report::immediate();
  Runtime rt = Runtime::open(kNewEntryPoints);
  Memory mem(rt.context, rt.device, out);
  float* hostIn = mem.host<float>(n);
  float* hostOut = mem.host<float>(n);
  float* dIn = mem.device<float>(n);
  float* dScaled = mem.device<float>(n);
  float* dSum = mem.device<float>(n);

  Kernel scale = rt.kernel("scale");
  scale.setGroupSize(kGroupSize);
  Kernel add = rt.kernel("add");
  add.setGroupSize(kGroupSize);
  const ze_group_count_t grid{groupsFor(n, kGroupSize), 1, 1};
  ze_command_list_handle_t list = rt.immediateList(ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);

  ze_event_pool_handle_t pool = nullptr;
  ze_event_handle_t done = nullptr;
  if (!kNewEntryPoints) {
    pool = rt.eventPool(1, ZE_EVENT_POOL_FLAG_HOST_VISIBLE);
    ze_event_desc_t desc{ZE_STRUCTURE_TYPE_EVENT_DESC, nullptr, 0, ZE_EVENT_SCOPE_FLAG_HOST, ZE_EVENT_SCOPE_FLAG_HOST};
    ZE_CHECK(zeEventCreate(pool, &desc, &done));
  }

  Checksum sum;
  for (uint32_t r = 0; r < rounds; ++r) {
    for (uint32_t i = 0; i < n; ++i) hostIn[i] = float(i % 97) * 0.25f + float(r);
    ZE_CHECK(zeCommandListAppendMemoryCopy(list, dIn, hostIn, bytes, nullptr, 0, nullptr));
    out.copy(bytes);
    scale.setArg(0, dIn);
    scale.setArg(1, dScaled);
    scale.setArg(2, 3.0f);
    scale.setArg(3, n);
    ZE_CHECK(zeCommandListAppendLaunchKernel(list, scale.handle, &grid, nullptr, 0, nullptr));
    out.launch(scale, grid);
    add.setArg(0, dScaled);
    add.setArg(1, dIn);
    add.setArg(2, dSum);
    add.setArg(3, n);
    ZE_CHECK(zeCommandListAppendLaunchKernel(list, add.handle, &grid, nullptr, 0, nullptr));
    out.launch(add, grid);
    ZE_CHECK(zeCommandListAppendMemoryCopy(list, hostOut, dSum, bytes, nullptr, 0, nullptr));
    out.copy(bytes);
#if defined(ZE_API_VERSION_CURRENT_M) && ZE_API_VERSION_CURRENT_M >= ZE_MAKE_VERSION(1, 10)
    ZE_CHECK(zeCommandListHostSynchronize(list, kForever));
    std::printf("sync list\n");
#else
    ZE_CHECK(zeCommandListAppendBarrier(list, done, 0, nullptr));
    ZE_CHECK(zeEventHostSynchronize(done, kForever));
    ZE_CHECK(zeEventHostReset(done));
    std::printf("sync event\n");
#endif
    for (uint32_t i = 0; i < n; ++i) {
      float expected = 3.0f * hostIn[i] + hostIn[i];
      if (hostOut[i] != expected) wrongResult("round %u: out[%u] = %g, expected %g", r, i, hostOut[i], expected);
    }
    sum.add(hostOut, bytes);
  }
  out.checksum("host_sync", sum);

  ZE_CHECK(zeCommandListDestroy(list));
  if (done) ZE_CHECK(zeEventDestroy(done));
  if (pool) ZE_CHECK(zeEventPoolDestroy(pool));
  ZE_CHECK(zeKernelDestroy(scale.handle));
  ZE_CHECK(zeKernelDestroy(add.handle));
  mem.free({hostIn, hostOut, dIn, dScaled, dSum});
  rt.close();
  return 0;
}
