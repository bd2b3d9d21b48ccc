// Kernel launches on an immediate command list of the simulated device, with
// a synchronisation every kBatch launches. Run as is for the baseline and
// under gtap (api; api,kernels; api,kernels,stacks) by run_overhead.py.
#include <benchmark/benchmark.h>
#include <level_zero/ze_api.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <vector>

namespace {

constexpr int kBatch = 64;

#define CHECK(call)                                               \
  do {                                                            \
    ze_result_t r_ = (call);                                      \
    if (r_ != ZE_RESULT_SUCCESS) {                                \
      std::fprintf(stderr, "%s failed: 0x%x\n", #call, r_);       \
      std::exit(1);                                               \
    }                                                             \
  } while (0)

struct Setup {
  ze_context_handle_t context;
  ze_command_list_handle_t list;
  ze_kernel_handle_t kernel;
  ze_event_pool_handle_t pool;
  ze_event_handle_t done;
  float* data;

  Setup() {
    CHECK(zeInit(ZE_INIT_FLAG_GPU_ONLY));
    uint32_t n = 1;
    ze_driver_handle_t driver;
    CHECK(zeDriverGet(&n, &driver));
    ze_device_handle_t device;
    CHECK(zeDeviceGet(driver, &n, &device));
    ze_context_desc_t cd{ZE_STRUCTURE_TYPE_CONTEXT_DESC, nullptr, 0};
    CHECK(zeContextCreate(driver, &cd, &context));
    ze_command_queue_desc_t qd{ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, nullptr, 0, 0, 0,
                               ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS, ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    CHECK(zeCommandListCreateImmediate(context, device, &qd, &list));
    std::ifstream in(GTAP_BENCH_KERNELS, std::ios::binary);
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ze_module_desc_t md{ZE_STRUCTURE_TYPE_MODULE_DESC, nullptr, ZE_MODULE_FORMAT_NATIVE, bytes.size(), bytes.data(),
                        nullptr, nullptr};
    ze_module_handle_t module;
    CHECK(zeModuleCreate(context, device, &md, &module, nullptr));
    ze_kernel_desc_t kd{ZE_STRUCTURE_TYPE_KERNEL_DESC, nullptr, 0, "scale"};
    CHECK(zeKernelCreate(module, &kd, &kernel));
    CHECK(zeKernelSetGroupSize(kernel, 1, 1, 1));
    ze_host_mem_alloc_desc_t hd{ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, nullptr, 0};
    CHECK(zeMemAllocHost(context, &hd, 64 * sizeof(float), 64, reinterpret_cast<void**>(&data)));
    float factor = 1.0f;
    uint32_t count = 1;
    CHECK(zeKernelSetArgumentValue(kernel, 0, sizeof(void*), &data));
    CHECK(zeKernelSetArgumentValue(kernel, 1, sizeof(void*), &data));
    CHECK(zeKernelSetArgumentValue(kernel, 2, sizeof(float), &factor));
    CHECK(zeKernelSetArgumentValue(kernel, 3, sizeof(uint32_t), &count));
    ze_event_pool_desc_t pd{ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, nullptr, ZE_EVENT_POOL_FLAG_HOST_VISIBLE, 1};
    CHECK(zeEventPoolCreate(context, &pd, 0, nullptr, &pool));
    ze_event_desc_t ed{ZE_STRUCTURE_TYPE_EVENT_DESC, nullptr, 0, ZE_EVENT_SCOPE_FLAG_HOST, ZE_EVENT_SCOPE_FLAG_HOST};
    CHECK(zeEventCreate(pool, &ed, &done));
  }

  void sync() {
    CHECK(zeCommandListAppendBarrier(list, done, 0, nullptr));
    CHECK(zeEventHostSynchronize(done, UINT64_MAX));
    CHECK(zeEventHostReset(done));
  }
};

Setup& setup() {
  static Setup s;
  return s;
}

// Host time per launch, including a share of the synchronisation (and, under
// gtap with kernels on, of reading the device times at each synchronisation).
void BM_ImmediateLaunch(benchmark::State& state) {
  Setup& s = setup();
  const ze_group_count_t groups{1, 1, 1};
  int n = 0;
  for (auto _ : state) {
    CHECK(zeCommandListAppendLaunchKernel(s.list, s.kernel, &groups, nullptr, 0, nullptr));
    if (++n % kBatch == 0) s.sync();
  }
  s.sync();
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ImmediateLaunch)->MinTime(1.0);

}  // namespace

BENCHMARK_MAIN();
