// A kernel whose only argument is a struct passed by value with one
// zeKernelSetArgumentValue, holding the buffer pointers beside the scalars;
// whatever follows device addresses must find them inside the value. One
// pointer is into the middle of its allocation. The kernel is appended twice
// with different struct values (arguments are taken at append time), the
// second reading what the first wrote.
//
//   ze_struct_args [EXECUTIONS=2 [ELEMENTS=10000]]
//
//   x, y (host memory) --copy--> da, db
//   out1 = 2 a + b[16..]   (axpy_struct {da, db + 16, out1, n, 2})
//   out2 = 0.5 out1 + a    (axpy_struct {out1, da, out2, n, 0.5})
//   out1, out2 --copy--> host memory
//
// Per execution: copy, copy, launch axpy_struct twice, copy, copy. Then
// "checksum out1" and "checksum out2".
#include "workload_args.h"
#include "ze_workload.h"

#include <algorithm>

using namespace workload;

namespace {

constexpr uint32_t kGroupSize = 128;
constexpr uint32_t kBOffset = 16;  // elements: b starts inside its allocation
constexpr float kFirstScale = 2.0f;
constexpr float kSecondScale = 0.5f;

}  // namespace

int main(int argc, char** argv) {
  const char* usage = "[EXECUTIONS [ELEMENTS]]";
  const uint32_t executions = countArgument(argc, argv, 1, 2, usage);
  const uint32_t n = countArgument(argc, argv, 2, 10000, usage);
  const size_t bytes = size_t(n) * sizeof(float);
  const size_t bBytes = size_t(n + kBOffset) * sizeof(float);

  Report out = Report::immediate();
  Runtime rt = Runtime::open();
  Memory mem(rt.context, rt.device, out);

  float* da = mem.device<float>(n);
  float* db = mem.device<float>(n + kBOffset);
  float* out1 = mem.device<float>(n);
  float* out2 = mem.device<float>(n);
  // Ordinary host memory on both sides of the device work.
  std::vector<float> x(n), y(n + kBOffset), hostOut1(n), hostOut2(n);

  Kernel axpy = rt.kernel("axpy_struct");
  axpy.setGroupSize(kGroupSize);
  const ze_group_count_t grid{groupsFor(n, kGroupSize), 1, 1};

  ze_command_queue_handle_t queue = rt.queue();
  ze_command_list_handle_t list = rt.list();
  Report recorded = Report::held();
  ZE_CHECK(zeCommandListAppendMemoryCopy(list, da, x.data(), bytes, nullptr, 0, nullptr));
  recorded.copy(bytes);
  ZE_CHECK(zeCommandListAppendMemoryCopy(list, db, y.data(), bBytes, nullptr, 0, nullptr));
  recorded.copy(bBytes);
  ZE_CHECK(zeCommandListAppendBarrier(list, nullptr, 0, nullptr));
  const workload_axpy_args first{da, db + kBOffset, out1, n, kFirstScale};
  axpy.setArg(0, first);
  ZE_CHECK(zeCommandListAppendLaunchKernel(list, axpy.handle, &grid, nullptr, 0, nullptr));
  recorded.launch(axpy, grid);
  ZE_CHECK(zeCommandListAppendBarrier(list, nullptr, 0, nullptr));
  const workload_axpy_args second{out1, da, out2, n, kSecondScale};
  axpy.setArg(0, second);
  ZE_CHECK(zeCommandListAppendLaunchKernel(list, axpy.handle, &grid, nullptr, 0, nullptr));
  recorded.launch(axpy, grid);
  ZE_CHECK(zeCommandListAppendBarrier(list, nullptr, 0, nullptr));
  ZE_CHECK(zeCommandListAppendMemoryCopy(list, hostOut1.data(), out1, bytes, nullptr, 0, nullptr));
  recorded.copy(bytes);
  ZE_CHECK(zeCommandListAppendMemoryCopy(list, hostOut2.data(), out2, bytes, nullptr, 0, nullptr));
  recorded.copy(bytes);
  ZE_CHECK(zeCommandListClose(list));

  ze_fence_desc_t fdesc{ZE_STRUCTURE_TYPE_FENCE_DESC, nullptr, 0};
  ze_fence_handle_t fence = nullptr;
  ZE_CHECK(zeFenceCreate(queue, &fdesc, &fence));

  Checksum sum1, sum2;
  for (uint32_t e = 0; e < executions; ++e) {
    // Quarters and halves of small integers: every sum and product is exact.
    for (uint32_t i = 0; i < n; ++i) x[i] = float(i % 1000) * 0.25f + float(e);
    for (uint32_t i = 0; i < n + kBOffset; ++i) y[i] = float(i % 37) * 0.5f - float(e);
    std::fill(hostOut1.begin(), hostOut1.end(), -1.0f);
    std::fill(hostOut2.begin(), hostOut2.end(), -1.0f);
    ZE_CHECK(zeCommandQueueExecuteCommandLists(queue, 1, &list, fence));
    recorded.replayInto(out);
    ZE_CHECK(zeFenceHostSynchronize(fence, kForever));
    ZE_CHECK(zeFenceReset(fence));
    for (uint32_t i = 0; i < n; ++i) {
      float expected1 = kFirstScale * x[i] + y[i + kBOffset];
      if (hostOut1[i] != expected1)
        wrongResult("execution %u: out1[%u] = %g, expected %g", e, i, hostOut1[i], expected1);
      float expected2 = kSecondScale * expected1 + x[i];
      if (hostOut2[i] != expected2)
        wrongResult("execution %u: out2[%u] = %g, expected %g", e, i, hostOut2[i], expected2);
    }
    sum1.add(hostOut1.data(), bytes);
    sum2.add(hostOut2.data(), bytes);
  }
  out.checksum("out1", sum1);
  out.checksum("out2", sum2);

  ZE_CHECK(zeFenceDestroy(fence));
  ZE_CHECK(zeCommandListDestroy(list));
  ZE_CHECK(zeCommandQueueDestroy(queue));
  ZE_CHECK(zeKernelDestroy(axpy.handle));
  mem.free({da, db, out1, out2});
  rt.close();
  return 0;
}
