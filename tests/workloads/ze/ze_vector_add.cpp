// Vector add the way most Level Zero programs start: inputs copied from host
// memory to device buffers, one kernel, the sum copied back, all in one
// regular command list that a queue executes once per iteration, with a
// fence to wait on.
//
//   ze_vector_add [ITERATIONS=4 [ELEMENTS=65536]]
//
// Per iteration: copy, copy, launch vector_add, copy. Then "checksum c".
#include "ze_workload.h"

using namespace workload;

int main(int argc, char** argv) {
  const char* usage = "[ITERATIONS [ELEMENTS]]";
  const uint32_t iterations = countArgument(argc, argv, 1, 4, usage);
  const uint32_t n = countArgument(argc, argv, 2, 1u << 16, usage);
  const size_t bytes = size_t(n) * sizeof(float);

  Report out = Report::immediate();
  Runtime rt = Runtime::open();
  Memory mem(rt.context, rt.device, out);

  float* hostA = mem.host<float>(n);
  float* hostB = mem.host<float>(n);
  float* hostC = mem.host<float>(n);
  float* a = mem.device<float>(n);
  float* b = mem.device<float>(n);
  float* c = mem.device<float>(n);

  Kernel add = rt.kernel("vector_add");
  add.setGroupSize(256);
  add.setArg(0, a);
  add.setArg(1, b);
  add.setArg(2, c);
  add.setArg(3, n);
  const ze_group_count_t groups{groupsFor(n, 256), 1, 1};

  ze_command_queue_handle_t queue = rt.queue();
  ze_command_list_handle_t list = rt.list();
  Report recorded = Report::held();
  ZE_CHECK(zeCommandListAppendMemoryCopy(list, a, hostA, bytes, nullptr, 0, nullptr));
  recorded.copy(bytes);
  ZE_CHECK(zeCommandListAppendMemoryCopy(list, b, hostB, bytes, nullptr, 0, nullptr));
  recorded.copy(bytes);
  ZE_CHECK(zeCommandListAppendBarrier(list, nullptr, 0, nullptr));
  ZE_CHECK(zeCommandListAppendLaunchKernel(list, add.handle, &groups, nullptr, 0, nullptr));
  recorded.launch(add, groups);
  ZE_CHECK(zeCommandListAppendBarrier(list, nullptr, 0, nullptr));
  ZE_CHECK(zeCommandListAppendMemoryCopy(list, hostC, c, bytes, nullptr, 0, nullptr));
  recorded.copy(bytes);
  ZE_CHECK(zeCommandListClose(list));

  ze_fence_desc_t fdesc{ZE_STRUCTURE_TYPE_FENCE_DESC, nullptr, 0};
  ze_fence_handle_t fence = nullptr;
  ZE_CHECK(zeFenceCreate(queue, &fdesc, &fence));

  Checksum sum;
  for (uint32_t it = 0; it < iterations; ++it) {
    for (uint32_t i = 0; i < n; ++i) {
      hostA[i] = 0.5f * float(i) + float(it);
      hostB[i] = 0.25f * float(i % 97) - float(it);
      hostC[i] = -1.0f;
    }
    ZE_CHECK(zeCommandQueueExecuteCommandLists(queue, 1, &list, fence));
    recorded.replayInto(out);
    ZE_CHECK(zeFenceHostSynchronize(fence, kForever));
    ZE_CHECK(zeFenceReset(fence));
    for (uint32_t i = 0; i < n; ++i) {
      if (hostC[i] != hostA[i] + hostB[i])
        wrongResult("iteration %u: c[%u] = %g, expected %g", it, i, hostC[i], hostA[i] + hostB[i]);
    }
    sum.add(hostC, bytes);
  }
  out.checksum("c", sum);

  ZE_CHECK(zeFenceDestroy(fence));
  ZE_CHECK(zeCommandListDestroy(list));
  ZE_CHECK(zeCommandQueueDestroy(queue));
  ZE_CHECK(zeKernelDestroy(add.handle));
  mem.free({hostA, hostB, hostC, a, b, c});
  rt.close();
  return 0;
}
