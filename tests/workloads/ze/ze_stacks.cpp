// Kernel launches and device allocations made a known number of frames below
// main, for call-stack symbolisation: main -> launchFromHelper (never
// inlined) -> appendScaleKernel (always inlined, so it exists only in the
// debug information) -> zeMemAllocDevice and zeCommandListAppendLaunchKernel.
// Built with -g -O2.
//
//   ze_stacks [LAUNCHES=3 [ELEMENTS=4096]]
//
// Prints alloc lines, a copy, then per launch: "alloc device", launch scale,
// copy; then "checksum scaled" and the frees.
#include "ze_workload.h"

using namespace workload;

// What appendScaleKernel needs besides its input, gathered so the call stays short.
struct ScaleTarget {
  const Runtime& rt;
  ze_command_list_handle_t list;
  Kernel& scale;
  Memory& mem;
  Report& out;
};

// Allocates the output and appends y = factor * in to the target's list.
__attribute__((always_inline)) inline float* appendScaleKernel(ScaleTarget& target, const float* in, uint32_t n,
                                                                float factor) {
  auto desc = typed<ze_device_mem_alloc_desc_t>(ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC);
  void* y = nullptr;
  ZE_CHECK(zeMemAllocDevice(target.rt.context, &desc, size_t(n) * sizeof(float), alignof(float), target.rt.device, &y));
  target.mem.adopt(y, "device", size_t(n) * sizeof(float));
  target.scale.setArg(0, in);
  target.scale.setArg(1, static_cast<float*>(y));
  target.scale.setArg(2, factor);
  target.scale.setArg(3, n);
  const ze_group_count_t grid{groupsFor(n, target.scale.groupSize[0]), 1, 1};
  ZE_CHECK(zeCommandListAppendLaunchKernel(target.list, target.scale.handle, &grid, nullptr, 0, nullptr));
  target.out.launch(target.scale, grid);
  return static_cast<float*>(y);
}

// noclone keeps GCC from renaming this frame to a specialised copy (.constprop, .isra).
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((noinline, noclone))
#else
__attribute__((noinline))
#endif
float* launchFromHelper(ScaleTarget& target, const float* in, uint32_t n, uint32_t launch) {
  float* y = appendScaleKernel(target, in, n, 1.0f + float(launch));
  // Keeps the call above from being the last thing this frame does.
  asm volatile("" ::: "memory");
  return y;
}

int main(int argc, char** argv) {
  const char* usage = "[LAUNCHES [ELEMENTS]]";
  const uint32_t launches = countArgument(argc, argv, 1, 3, usage);
  const uint32_t n = countArgument(argc, argv, 2, 4096, usage);
  const size_t bytes = size_t(n) * sizeof(float);

  Report out = Report::immediate();
  Runtime rt = Runtime::open();
  Memory mem(rt.context, rt.device, out);
  float* host = mem.host<float>(n);
  float* in = mem.device<float>(n);
  for (uint32_t i = 0; i < n; ++i) host[i] = float(i % 331) * 0.5f;

  // Synchronous, so every result can be read as soon as its append returns.
  ze_command_list_handle_t list = rt.immediateList(ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS);
  ZE_CHECK(zeCommandListAppendMemoryCopy(list, in, host, bytes, nullptr, 0, nullptr));
  out.copy(bytes);

  Kernel scale = rt.kernel("scale");
  scale.setGroupSize(128);
  ScaleTarget target{rt, list, scale, mem, out};
  std::vector<float> result(n);
  Checksum sum;
  std::vector<float*> outputs;
  for (uint32_t l = 0; l < launches; ++l) {
    float* y = launchFromHelper(target, in, n, l);
    outputs.push_back(y);
    ZE_CHECK(zeCommandListAppendMemoryCopy(list, result.data(), y, bytes, nullptr, 0, nullptr));
    out.copy(bytes);
    for (uint32_t i = 0; i < n; ++i) {
      float expected = (1.0f + float(l)) * host[i];
      if (result[i] != expected) wrongResult("launch %u: y[%u] = %g, expected %g", l, i, result[i], expected);
    }
    sum.add(result.data(), bytes);
  }
  out.checksum("scaled", sum);

  ZE_CHECK(zeCommandListDestroy(list));
  ZE_CHECK(zeKernelDestroy(scale.handle));
  for (float* y : outputs) mem.free(y);
  mem.free({host, in});
  rt.close();
  return 0;
}
