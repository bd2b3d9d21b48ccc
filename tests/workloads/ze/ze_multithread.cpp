// Several host threads sharing one context and module, each with its own
// kernel object, command queue, command lists and fence, submitting at the
// same time.
//
//   ze_multithread [THREADS=4 [KERNELS=8 [ELEMENTS=4096]]]
//
// Thread t uploads buf[i] = i + 1000 t, adds 1, 2, ..., KERNELS with one
// add_u32 launch each, and downloads the result (i + 1000 t + KERNELS(KERNELS+1)/2).
// Lines are printed after the threads have joined, thread by thread: per
// thread its allocations, copy, KERNELS launches, copy, "checksum threadT",
// frees.
#include "ze_workload.h"

#include <thread>

using namespace workload;

namespace {

constexpr uint32_t kGroupSize = 64;

struct ThreadWork {
  uint32_t index;
  uint32_t kernels;
  uint32_t n;
  Report report = Report::held();
};

void runThread(const Runtime& rt, ThreadWork& work) {
  Report& out = work.report;
  Memory mem(rt.context, rt.device, out);
  const size_t bytes = size_t(work.n) * sizeof(uint32_t);
  uint32_t* host = mem.host<uint32_t>(work.n);
  uint32_t* buf = mem.device<uint32_t>(work.n);
  for (uint32_t i = 0; i < work.n; ++i) host[i] = i + 1000 * work.index;

  Kernel add = rt.kernel("add_u32");
  add.setGroupSize(kGroupSize);
  add.setArg(0, buf);
  add.setArg(2, work.n);
  const ze_group_count_t grid{groupsFor(work.n, kGroupSize), 1, 1};

  // Threads beyond the group's queue count share queue indices, as they would on hardware.
  ze_command_queue_handle_t queue = rt.queue(work.index % rt.computeQueues);
  ze_command_list_handle_t compute = rt.list();
  ze_command_list_handle_t download = rt.list();
  ZE_CHECK(zeCommandListAppendMemoryCopy(compute, buf, host, bytes, nullptr, 0, nullptr));
  out.copy(bytes);
  for (uint32_t k = 0; k < work.kernels; ++k) {
    ZE_CHECK(zeCommandListAppendBarrier(compute, nullptr, 0, nullptr));
    add.setArg(1, k + 1);  // taken at append time
    ZE_CHECK(zeCommandListAppendLaunchKernel(compute, add.handle, &grid, nullptr, 0, nullptr));
    out.launch(add, grid);
  }
  ZE_CHECK(zeCommandListAppendBarrier(compute, nullptr, 0, nullptr));
  ZE_CHECK(zeCommandListClose(compute));
  ZE_CHECK(zeCommandListAppendMemoryCopy(download, host, buf, bytes, nullptr, 0, nullptr));
  out.copy(bytes);
  ZE_CHECK(zeCommandListClose(download));

  ze_fence_desc_t fdesc{ZE_STRUCTURE_TYPE_FENCE_DESC, nullptr, 0};
  ze_fence_handle_t fence = nullptr;
  ZE_CHECK(zeFenceCreate(queue, &fdesc, &fence));
  // The queue runs the two lists in the order given, so the download sees the last launch.
  ze_command_list_handle_t lists[] = {compute, download};
  ZE_CHECK(zeCommandQueueExecuteCommandLists(queue, 2, lists, fence));
  ZE_CHECK(zeFenceHostSynchronize(fence, kForever));

  const uint32_t added = work.kernels * (work.kernels + 1) / 2;
  for (uint32_t i = 0; i < work.n; ++i) {
    uint32_t expected = i + 1000 * work.index + added;
    if (host[i] != expected) wrongResult("thread %u: buf[%u] = %u, expected %u", work.index, i, host[i], expected);
  }
  Checksum sum;
  sum.add(host, bytes);
  out.checksum("thread" + std::to_string(work.index), sum);

  ZE_CHECK(zeFenceDestroy(fence));
  ZE_CHECK(zeCommandListDestroy(download));
  ZE_CHECK(zeCommandListDestroy(compute));
  ZE_CHECK(zeCommandQueueDestroy(queue));
  ZE_CHECK(zeKernelDestroy(add.handle));
  mem.free({host, buf});
}

}  // namespace

int main(int argc, char** argv) {
  const char* usage = "[THREADS [KERNELS [ELEMENTS]]]";
  const uint32_t threads = countArgument(argc, argv, 1, 4, usage);
  const uint32_t kernels = countArgument(argc, argv, 2, 8, usage);
  const uint32_t n = countArgument(argc, argv, 3, 4096, usage);
  if (threads > 256 || kernels > 10000) {
    std::fprintf(stderr, "usage: %s %s (at most 256 threads and 10000 kernels)\n", argv[0], usage);
    return kExitUsage;
  }

  Runtime rt = Runtime::open();
  std::vector<ThreadWork> work;
  work.reserve(threads);
  for (uint32_t t = 0; t < threads; ++t) work.push_back({t, kernels, n});
  std::vector<std::thread> pool;
  for (uint32_t t = 0; t < threads; ++t) pool.emplace_back(runThread, std::cref(rt), std::ref(work[t]));
  for (auto& th : pool) th.join();
  for (const auto& w : work) w.report.print();
  rt.close();
  return 0;
}
