// Smoke test of the simulated Level Zero driver, driven through the real
// Level Zero loader exactly as a program would use a GPU driver.
#include <ze_api.h>

#include <gtest/gtest.h>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace {

constexpr uint64_t kTicksPerSecond = 19'200'000;  // documented device timer rate
constexpr uint64_t kKernelMask = 0xffffffffull;    // kernelTimestampValidBits = 32
constexpr uint64_t kForever = UINT64_MAX;

#define ZE_OK(expr) ASSERT_EQ(ZE_RESULT_SUCCESS, (expr))

bool interceptMode() {
  const char* v = std::getenv("ZE_ENABLE_LOADER_INTERCEPT");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

std::vector<uint8_t> readFile(const char* path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

uint64_t hostNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
}

// A zero-initialised Level Zero structure with its type tag set.
template <class T>
T typed(ze_structure_type_t stype) {
  T value{};
  value.stype = stype;
  return value;
}

double ticksToNs(uint64_t ticks) { return double(ticks) * 1e9 / double(kTicksPerSecond); }

class SimZe : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // ctest sets these; running the binary by hand works too.
    setenv("ZE_ENABLE_ALT_DRIVERS", GTAP_SIM_ZE_DRIVER_PATH, 0);
    ASSERT_EQ(ZE_RESULT_SUCCESS, zeInit(0));
    uint32_t n = 1;
    ASSERT_EQ(ZE_RESULT_SUCCESS, zeDriverGet(&n, &driver_));
    n = 1;
    ASSERT_EQ(ZE_RESULT_SUCCESS, zeDeviceGet(driver_, &n, &device_));
    ze_context_desc_t cdesc{ZE_STRUCTURE_TYPE_CONTEXT_DESC, nullptr, 0};
    ASSERT_EQ(ZE_RESULT_SUCCESS, zeContextCreate(driver_, &cdesc, &context_));
    moduleBytes_ = new std::vector<uint8_t>(readFile(GTAP_SIM_ZE_SMOKE_KERNELS_PATH));
    ASSERT_FALSE(moduleBytes_->empty()) << GTAP_SIM_ZE_SMOKE_KERNELS_PATH;
    auto mdesc = typed<ze_module_desc_t>(ZE_STRUCTURE_TYPE_MODULE_DESC);
    mdesc.format = ZE_MODULE_FORMAT_NATIVE;
    mdesc.inputSize = moduleBytes_->size();
    mdesc.pInputModule = moduleBytes_->data();
    ASSERT_EQ(ZE_RESULT_SUCCESS, zeModuleCreate(context_, device_, &mdesc, &module_, nullptr));
  }

  static void TearDownTestSuite() {
    if (module_) {
      EXPECT_EQ(ZE_RESULT_SUCCESS, zeModuleDestroy(module_));
    }
    if (context_) {
      EXPECT_EQ(ZE_RESULT_SUCCESS, zeContextDestroy(context_));
    }
    module_ = nullptr;
    context_ = nullptr;
    delete moduleBytes_;
    moduleBytes_ = nullptr;
  }

  ze_kernel_handle_t kernel(const char* name) {
    ze_kernel_desc_t kdesc{ZE_STRUCTURE_TYPE_KERNEL_DESC, nullptr, 0, name};
    ze_kernel_handle_t k = nullptr;
    EXPECT_EQ(ZE_RESULT_SUCCESS, zeKernelCreate(module_, &kdesc, &k)) << name;
    return k;
  }

  void* sharedAlloc(size_t size) {
    auto d = typed<ze_device_mem_alloc_desc_t>(ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC);
    auto h = typed<ze_host_mem_alloc_desc_t>(ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC);
    void* p = nullptr;
    EXPECT_EQ(ZE_RESULT_SUCCESS, zeMemAllocShared(context_, &d, &h, size, 64, device_, &p));
    return p;
  }

  void* deviceAlloc(size_t size) {
    auto d = typed<ze_device_mem_alloc_desc_t>(ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC);
    void* p = nullptr;
    EXPECT_EQ(ZE_RESULT_SUCCESS, zeMemAllocDevice(context_, &d, size, 0, device_, &p));
    return p;
  }

  void* hostAlloc(size_t size) {
    auto h = typed<ze_host_mem_alloc_desc_t>(ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC);
    void* p = nullptr;
    EXPECT_EQ(ZE_RESULT_SUCCESS, zeMemAllocHost(context_, &h, size, 0, &p));
    return p;
  }

  ze_command_queue_handle_t queue(ze_command_queue_mode_t mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
                                  uint32_t index = 0) {
    auto q = typed<ze_command_queue_desc_t>(ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC);
    q.ordinal = 0;
    q.index = index;
    q.mode = mode;
    ze_command_queue_handle_t h = nullptr;
    EXPECT_EQ(ZE_RESULT_SUCCESS, zeCommandQueueCreate(context_, device_, &q, &h));
    return h;
  }

  ze_command_list_handle_t list(uint32_t ordinal = 0) {
    auto l = typed<ze_command_list_desc_t>(ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC);
    l.commandQueueGroupOrdinal = ordinal;
    ze_command_list_handle_t h = nullptr;
    EXPECT_EQ(ZE_RESULT_SUCCESS, zeCommandListCreate(context_, device_, &l, &h));
    return h;
  }

  ze_command_list_handle_t immediate(ze_command_queue_mode_t mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS) {
    auto q = typed<ze_command_queue_desc_t>(ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC);
    q.mode = mode;
    ze_command_list_handle_t h = nullptr;
    EXPECT_EQ(ZE_RESULT_SUCCESS, zeCommandListCreateImmediate(context_, device_, &q, &h));
    return h;
  }

  ze_event_pool_handle_t pool(uint32_t count, ze_event_pool_flags_t flags) {
    ze_event_pool_desc_t p{ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, nullptr, flags, count};
    ze_event_pool_handle_t h = nullptr;
    EXPECT_EQ(ZE_RESULT_SUCCESS, zeEventPoolCreate(context_, &p, 1, &device_, &h));
    return h;
  }

  ze_event_handle_t event(ze_event_pool_handle_t p, uint32_t index) {
    ze_event_desc_t e{ZE_STRUCTURE_TYPE_EVENT_DESC, nullptr, index, ZE_EVENT_SCOPE_FLAG_HOST,
                      ZE_EVENT_SCOPE_FLAG_HOST};
    ze_event_handle_t h = nullptr;
    EXPECT_EQ(ZE_RESULT_SUCCESS, zeEventCreate(p, &e, &h));
    return h;
  }

  // Sets the four arguments of vector_add and a group size of 64.
  void bindVectorAdd(ze_kernel_handle_t k, const float* a, const float* b, float* c, uint32_t n) {
    EXPECT_EQ(ZE_RESULT_SUCCESS, zeKernelSetArgumentValue(k, 0, sizeof a, &a));
    EXPECT_EQ(ZE_RESULT_SUCCESS, zeKernelSetArgumentValue(k, 1, sizeof b, &b));
    EXPECT_EQ(ZE_RESULT_SUCCESS, zeKernelSetArgumentValue(k, 2, sizeof c, &c));
    EXPECT_EQ(ZE_RESULT_SUCCESS, zeKernelSetArgumentValue(k, 3, sizeof n, &n));
    EXPECT_EQ(ZE_RESULT_SUCCESS, zeKernelSetGroupSize(k, 64, 1, 1));
  }

  static inline ze_driver_handle_t driver_ = nullptr;
  static inline ze_device_handle_t device_ = nullptr;
  static inline ze_context_handle_t context_ = nullptr;
  static inline ze_module_handle_t module_ = nullptr;
  static inline std::vector<uint8_t>* moduleBytes_ = nullptr;
};

TEST_F(SimZe, DriverAndDeviceProperties) {
  ze_api_version_t version{};
  ZE_OK(zeDriverGetApiVersion(driver_, &version));
  EXPECT_EQ(ZE_API_VERSION_CURRENT, version);

  uint32_t count = 0;
  ZE_OK(zeDeviceGet(driver_, &count, nullptr));
  EXPECT_EQ(1u, count);

  auto p = typed<ze_device_properties_t>(ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2);
  ZE_OK(zeDeviceGetProperties(device_, &p));
  EXPECT_EQ(ZE_DEVICE_TYPE_GPU, p.type);
  EXPECT_STREQ("gtap simulated GPU", p.name);
  EXPECT_EQ(kTicksPerSecond, p.timerResolution);  // cycles per second with the 1.2 structure
  EXPECT_EQ(64u, p.timestampValidBits);
  EXPECT_EQ(32u, p.kernelTimestampValidBits);

  auto legacy = typed<ze_device_properties_t>(ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES);
  ZE_OK(zeDeviceGetProperties(device_, &legacy));
  EXPECT_EQ(52u, legacy.timerResolution);  // nanoseconds per tick with the 1.0 structure

  auto compute = typed<ze_device_compute_properties_t>(ZE_STRUCTURE_TYPE_DEVICE_COMPUTE_PROPERTIES);
  ZE_OK(zeDeviceGetComputeProperties(device_, &compute));
  EXPECT_EQ(1024u, compute.maxTotalGroupSize);

  uint32_t groups = 0;
  ZE_OK(zeDeviceGetCommandQueueGroupProperties(device_, &groups, nullptr));
  ASSERT_EQ(2u, groups);
  std::vector<ze_command_queue_group_properties_t> gp(
      groups, typed<ze_command_queue_group_properties_t>(ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES));
  ZE_OK(zeDeviceGetCommandQueueGroupProperties(device_, &groups, gp.data()));
  EXPECT_TRUE(gp[0].flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE);
  EXPECT_FALSE(gp[1].flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE);

  uint32_t memories = 0;
  ZE_OK(zeDeviceGetMemoryProperties(device_, &memories, nullptr));
  EXPECT_EQ(1u, memories);
  uint32_t extensions = 0;
  ZE_OK(zeDriverGetExtensionProperties(driver_, &extensions, nullptr));
  std::vector<ze_driver_extension_properties_t> ext(extensions);
  ZE_OK(zeDriverGetExtensionProperties(driver_, &extensions, ext.data()));
  bool globalOffset = false;
  for (const auto& e : ext) globalOffset |= std::strcmp(e.name, ZE_GLOBAL_OFFSET_EXP_NAME) == 0;
  EXPECT_TRUE(globalOffset);
}

// Two modules loaded at once each keep their own kernels (the driver loads
// each from its own anonymous file; glibc must not take one for the other).
TEST_F(SimZe, SecondModuleKeepsItsOwnKernels) {
  std::vector<uint8_t> bytes = readFile(GTAP_SIM_ZE_SECOND_MODULE_PATH);
  ASSERT_FALSE(bytes.empty());
  ze_module_desc_t desc{ZE_STRUCTURE_TYPE_MODULE_DESC, nullptr, ZE_MODULE_FORMAT_NATIVE, bytes.size(), bytes.data(),
                        nullptr, nullptr};
  ze_module_handle_t second = nullptr;
  ZE_OK(zeModuleCreate(context_, device_, &desc, &second, nullptr));
  uint32_t count = 0;
  ZE_OK(zeModuleGetKernelNames(second, &count, nullptr));
  ASSERT_EQ(1u, count);
  const char* name = nullptr;
  ZE_OK(zeModuleGetKernelNames(second, &count, &name));
  EXPECT_STREQ("write_seven", name);
  ze_kernel_desc_t kd{ZE_STRUCTURE_TYPE_KERNEL_DESC, nullptr, 0, "vector_add"};
  ze_kernel_handle_t wrong = nullptr;
  EXPECT_EQ(ZE_RESULT_ERROR_INVALID_KERNEL_NAME, zeKernelCreate(second, &kd, &wrong));
  // And a third load after a destroy gets its own file again.
  ZE_OK(zeModuleDestroy(second));
  ZE_OK(zeModuleCreate(context_, device_, &desc, &second, nullptr));
  ZE_OK(zeModuleGetKernelNames(second, &count, &name));
  EXPECT_STREQ("write_seven", name);
  ZE_OK(zeModuleDestroy(second));
}

TEST_F(SimZe, ModuleIntrospection) {
  uint32_t count = 0;
  ZE_OK(zeModuleGetKernelNames(module_, &count, nullptr));
  ASSERT_EQ(5u, count);
  std::vector<const char*> names(count);
  ZE_OK(zeModuleGetKernelNames(module_, &count, names.data()));
  std::vector<std::string> got(names.begin(), names.end());
  std::sort(got.begin(), got.end());
  EXPECT_EQ((std::vector<std::string>{"group_sum", "saxpy_struct", "spin_ns", "vector_add", "write_global_id"}), got);

  size_t size = 0;
  ZE_OK(zeModuleGetNativeBinary(module_, &size, nullptr));
  ASSERT_EQ(moduleBytes_->size(), size);
  std::vector<uint8_t> binary(size);
  ZE_OK(zeModuleGetNativeBinary(module_, &size, binary.data()));
  EXPECT_EQ(*moduleBytes_, binary);

  ze_kernel_handle_t add = kernel("vector_add");
  auto kp = typed<ze_kernel_properties_t>(ZE_STRUCTURE_TYPE_KERNEL_PROPERTIES);
  ZE_OK(zeKernelGetProperties(add, &kp));
  EXPECT_EQ(4u, kp.numKernelArgs);
  EXPECT_EQ(0u, kp.requiredGroupSizeX);
  size_t nameSize = 0;
  ZE_OK(zeKernelGetName(add, &nameSize, nullptr));
  std::string name(nameSize, '\0');
  ZE_OK(zeKernelGetName(add, &nameSize, name.data()));
  EXPECT_STREQ("vector_add", name.c_str());

  ze_kernel_handle_t ids = kernel("write_global_id");
  ZE_OK(zeKernelGetProperties(ids, &kp));
  EXPECT_EQ(64u, kp.requiredGroupSizeX);
  EXPECT_EQ(1u, kp.requiredGroupSizeY);
  uint32_t sx = 0, sy = 0, sz = 0;
  ZE_OK(zeKernelSuggestGroupSize(ids, 1000, 1, 1, &sx, &sy, &sz));
  EXPECT_EQ(64u, sx);
  ZE_OK(zeKernelSuggestGroupSize(add, 1000, 3, 1, &sx, &sy, &sz));
  EXPECT_EQ(0u, 1000 % sx);
  EXPECT_EQ(0u, 3 % sy);

  void* global = nullptr;
  size_t globalSize = 0;
  ZE_OK(zeModuleGetGlobalPointer(module_, "smoke_global", &globalSize, &global));
  EXPECT_EQ(4 * sizeof(int32_t), globalSize);
  EXPECT_EQ(3, static_cast<int32_t*>(global)[2]);
  void* fn = nullptr;
  // printf is reachable through the module's dependencies, but is not the module's own.
  EXPECT_EQ(ZE_RESULT_ERROR_INVALID_FUNCTION_NAME, zeModuleGetFunctionPointer(module_, "printf", &fn));

  ZE_OK(zeKernelDestroy(add));
  ZE_OK(zeKernelDestroy(ids));
}

TEST_F(SimZe, VectorAddThroughRegularListQueueAndFence) {
  constexpr uint32_t n = 1000;
  auto* hostIn = static_cast<float*>(hostAlloc(2 * n * sizeof(float)));
  auto* hostOut = static_cast<float*>(hostAlloc(n * sizeof(float)));
  auto* a = static_cast<float*>(deviceAlloc(n * sizeof(float)));
  auto* b = static_cast<float*>(deviceAlloc(n * sizeof(float)));
  auto* c = static_cast<float*>(deviceAlloc(n * sizeof(float)));
  for (uint32_t i = 0; i < n; ++i) {
    hostIn[i] = float(i);
    hostIn[n + i] = 0.5f * float(i);
  }
  ze_kernel_handle_t k = kernel("vector_add");
  bindVectorAdd(k, a, b, c, n);

  ze_command_queue_handle_t q = queue();
  ze_command_list_handle_t l = list();
  ZE_OK(zeCommandListAppendMemoryCopy(l, a, hostIn, n * sizeof(float), nullptr, 0, nullptr));
  ZE_OK(zeCommandListAppendMemoryCopy(l, b, hostIn + n, n * sizeof(float), nullptr, 0, nullptr));
  ZE_OK(zeCommandListAppendBarrier(l, nullptr, 0, nullptr));
  ze_group_count_t groups{(n + 63) / 64, 1, 1};
  ZE_OK(zeCommandListAppendLaunchKernel(l, k, &groups, nullptr, 0, nullptr));
  ZE_OK(zeCommandListAppendBarrier(l, nullptr, 0, nullptr));
  ZE_OK(zeCommandListAppendMemoryCopy(l, hostOut, c, n * sizeof(float), nullptr, 0, nullptr));
  ZE_OK(zeCommandListClose(l));

  ze_fence_desc_t fdesc{ZE_STRUCTURE_TYPE_FENCE_DESC, nullptr, 0};
  ze_fence_handle_t fence = nullptr;
  ZE_OK(zeFenceCreate(q, &fdesc, &fence));
  for (int round = 0; round < 2; ++round) {  // a closed list runs any number of times
    std::memset(hostOut, 0, n * sizeof(float));
    ZE_OK(zeFenceReset(fence));
    ZE_OK(zeCommandQueueExecuteCommandLists(q, 1, &l, fence));
    ZE_OK(zeFenceHostSynchronize(fence, kForever));
    ZE_OK(zeFenceQueryStatus(fence));
    for (uint32_t i = 0; i < n; ++i) ASSERT_FLOAT_EQ(1.5f * float(i), hostOut[i]) << "round " << round << " i " << i;
  }

  ZE_OK(zeFenceDestroy(fence));
  ZE_OK(zeCommandListDestroy(l));
  ZE_OK(zeCommandQueueDestroy(q));
  ZE_OK(zeKernelDestroy(k));
  for (void* p : {static_cast<void*>(hostIn), static_cast<void*>(hostOut), static_cast<void*>(a),
                  static_cast<void*>(b), static_cast<void*>(c)}) {
    ZE_OK(zeMemFree(context_, p));
  }
}

TEST_F(SimZe, VectorAddThroughImmediateList) {
  constexpr uint32_t n = 256;
  auto* a = static_cast<float*>(sharedAlloc(n * sizeof(float)));
  auto* b = static_cast<float*>(sharedAlloc(n * sizeof(float)));
  auto* c = static_cast<float*>(sharedAlloc(n * sizeof(float)));
  for (uint32_t i = 0; i < n; ++i) {
    a[i] = float(i);
    b[i] = 100.0f;
  }
  ze_kernel_handle_t k = kernel("vector_add");
  bindVectorAdd(k, a, b, c, n);
  ze_event_pool_handle_t p = pool(2, ZE_EVENT_POOL_FLAG_HOST_VISIBLE);
  ze_event_handle_t gate = event(p, 0);
  ze_event_handle_t done = event(p, 1);

  ze_command_list_handle_t l = immediate();
  ze_group_count_t groups{n / 64, 1, 1};
  // Runs asynchronously: held back by the gate until the host opens it.
  ZE_OK(zeCommandListAppendLaunchKernel(l, k, &groups, done, 1, &gate));
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(ZE_RESULT_NOT_READY, zeEventQueryStatus(done));
  EXPECT_EQ(0.0f, c[7]);
  ZE_OK(zeEventHostSignal(gate));
  ZE_OK(zeEventHostSynchronize(done, kForever));
  for (uint32_t i = 0; i < n; ++i) ASSERT_FLOAT_EQ(float(i) + 100.0f, c[i]) << i;

  // Synchronous immediate lists finish the work before the append returns.
  ze_command_list_handle_t sync = immediate(ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS);
  float seven = 7.0f;
  ZE_OK(zeCommandListAppendMemoryFill(sync, c, &seven, sizeof seven, n * sizeof(float), nullptr, 0, nullptr));
  EXPECT_EQ(7.0f, c[n - 1]);

  ZE_OK(zeCommandListDestroy(sync));
  ZE_OK(zeCommandListDestroy(l));
  ZE_OK(zeEventDestroy(gate));
  ZE_OK(zeEventDestroy(done));
  ZE_OK(zeEventPoolDestroy(p));
  ZE_OK(zeKernelDestroy(k));
  ZE_OK(zeMemFree(context_, a));
  ZE_OK(zeMemFree(context_, b));
  ZE_OK(zeMemFree(context_, c));
}

// ZE_experimental_event_pool_counter_based: a counter-based event stands for
// the latest call it was passed to as signal event (each call re-arms it), is
// never reset nor signaled from the host, and works on in-order lists only.
TEST_F(SimZe, CounterBasedEventsFollowTheirLatestCall) {
#ifndef ZE_EVENT_POOL_COUNTER_BASED_EXP_NAME
  GTEST_SKIP() << "these Level Zero headers (API " << ZE_MAJOR_VERSION(ZE_API_VERSION_CURRENT) << "."
               << ZE_MINOR_VERSION(ZE_API_VERSION_CURRENT) << ") have no counter-based event pools";
#else
  constexpr uint32_t n = 128;
  auto* a = static_cast<float*>(sharedAlloc(n * sizeof(float)));
  auto* b = static_cast<float*>(sharedAlloc(n * sizeof(float)));
  auto* c = static_cast<float*>(sharedAlloc(n * sizeof(float)));
  ze_kernel_handle_t k = kernel("vector_add");
  bindVectorAdd(k, a, b, c, n);
  ze_group_count_t groups{n / 64, 1, 1};

  ze_event_pool_counter_based_exp_desc_t counter{ZE_STRUCTURE_TYPE_COUNTER_BASED_EVENT_POOL_EXP_DESC, nullptr, 0};
  ze_event_pool_desc_t pdesc{ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, &counter,
                             ZE_EVENT_POOL_FLAG_HOST_VISIBLE | ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP, 1};
  ze_event_pool_handle_t cp = nullptr;
  ZE_OK(zeEventPoolCreate(context_, &pdesc, 1, &device_, &cp));
  ze_event_handle_t cb = event(cp, 0);
  ze_event_pool_handle_t op = pool(5, ZE_EVENT_POOL_FLAG_HOST_VISIBLE);
  ze_event_handle_t gate1 = event(op, 0), gate2 = event(op, 1), before = event(op, 2), after = event(op, 3),
                    gate3 = event(op, 4);

  auto q = typed<ze_command_queue_desc_t>(ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC);
  q.flags = ZE_COMMAND_QUEUE_FLAG_IN_ORDER;
  ze_command_list_handle_t l = nullptr, other = nullptr;
  ZE_OK(zeCommandListCreateImmediate(context_, device_, &q, &l));
  ZE_OK(zeCommandListCreateImmediate(context_, device_, &q, &other));
  ze_command_list_handle_t unordered = immediate();

  // Restrictions of the extension.
  EXPECT_EQ(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeEventHostSignal(cb));
  EXPECT_EQ(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeEventHostReset(cb));
  EXPECT_EQ(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeCommandListAppendEventReset(l, cb));
  EXPECT_EQ(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeCommandListAppendLaunchKernel(unordered, k, &groups, cb, 0, nullptr));
  ze_command_list_handle_t regular = nullptr;
  auto ldesc = typed<ze_command_list_desc_t>(ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC);
  ldesc.flags = ZE_COMMAND_LIST_FLAG_IN_ORDER;
  ZE_OK(zeCommandListCreate(context_, device_, &ldesc, &regular));
  // The pool is for immediate lists (the default).
  EXPECT_EQ(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeCommandListAppendLaunchKernel(regular, k, &groups, cb, 0, nullptr));

  // First call.
  ZE_OK(zeCommandListAppendLaunchKernel(l, k, &groups, cb, 1, &gate1));
  EXPECT_EQ(ZE_RESULT_NOT_READY, zeEventQueryStatus(cb));
  ZE_OK(zeEventHostSignal(gate1));
  ZE_OK(zeEventHostSynchronize(cb, kForever));
  ze_kernel_timestamp_result_t first{};
  ZE_OK(zeEventQueryKernelTimestamp(cb, &first));
  // Waiting on it now waits for the first call: done.
  ZE_OK(zeCommandListAppendBarrier(other, before, 1, &cb));
  ZE_OK(zeEventHostSynchronize(before, kForever));

  // Second call, held back: the event is armed anew at once, and a wait on it
  // now waits for the second call; no reset between the two.
  ZE_OK(zeCommandListAppendLaunchKernel(l, k, &groups, cb, 1, &gate2));
  EXPECT_EQ(ZE_RESULT_NOT_READY, zeEventQueryStatus(cb));
  ze_kernel_timestamp_result_t stale{};
  EXPECT_EQ(ZE_RESULT_NOT_READY, zeEventQueryKernelTimestamp(cb, &stale));
  ZE_OK(zeCommandListAppendBarrier(other, after, 1, &cb));
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(ZE_RESULT_NOT_READY, zeEventQueryStatus(after));
  ZE_OK(zeEventHostSignal(gate2));
  ZE_OK(zeEventHostSynchronize(after, kForever));
  ZE_OK(zeEventQueryStatus(cb));
  ze_kernel_timestamp_result_t second{};
  ZE_OK(zeEventQueryKernelTimestamp(cb, &second));
  // The second call's times (it started after the first ended).
  EXPECT_GE(second.global.kernelStart, first.global.kernelEnd);

  // A call writes its timestamps when it ends, also when a later call has
  // re-armed the event meanwhile: a device-side copy between the two reads them.
  auto* copied = static_cast<ze_kernel_timestamp_result_t*>(hostAlloc(sizeof(ze_kernel_timestamp_result_t)));
  ZE_OK(zeCommandListAppendLaunchKernel(l, k, &groups, cb, 1, &gate3));
  ZE_OK(zeCommandListAppendQueryKernelTimestamps(l, 1, &cb, copied, nullptr, nullptr, 0, nullptr));
  ZE_OK(zeCommandListAppendLaunchKernel(l, k, &groups, cb, 0, nullptr));
  ZE_OK(zeEventHostSignal(gate3));
  ZE_OK(zeEventHostSynchronize(cb, kForever));
  ze_kernel_timestamp_result_t fourth{};
  ZE_OK(zeEventQueryKernelTimestamp(cb, &fourth));
  EXPECT_GE(copied->global.kernelStart, second.global.kernelEnd) << "the third call's times";
  EXPECT_GE(fourth.global.kernelStart, copied->global.kernelEnd);
  ZE_OK(zeMemFree(context_, copied));

  for (auto h : {l, other, unordered, regular}) ZE_OK(zeCommandListDestroy(h));
  for (auto e : {cb, gate1, gate2, gate3, before, after}) ZE_OK(zeEventDestroy(e));
  ZE_OK(zeEventPoolDestroy(cp));
  ZE_OK(zeEventPoolDestroy(op));
  ZE_OK(zeKernelDestroy(k));
  for (void* p : {static_cast<void*>(a), static_cast<void*>(b), static_cast<void*>(c)}) ZE_OK(zeMemFree(context_, p));
#endif
}

TEST_F(SimZe, ByValueStructAndLocalMemoryKernels) {
  struct Params {
    float a;
    float bias;
    uint32_t n;
  } params{2.0f, 0.25f, 100};
  auto* x = static_cast<float*>(sharedAlloc(128 * sizeof(float)));
  auto* y = static_cast<float*>(sharedAlloc(128 * sizeof(float)));
  for (int i = 0; i < 128; ++i) {
    x[i] = float(i);
    y[i] = 1.0f;
  }
  ze_kernel_handle_t saxpy = kernel("saxpy_struct");
  ZE_OK(zeKernelSetArgumentValue(saxpy, 0, sizeof params, &params));
  ZE_OK(zeKernelSetArgumentValue(saxpy, 1, sizeof x, &x));
  ZE_OK(zeKernelSetArgumentValue(saxpy, 2, sizeof y, &y));
  ZE_OK(zeKernelSetGroupSize(saxpy, 32, 1, 1));

  auto* in = static_cast<uint32_t*>(sharedAlloc(256 * sizeof(uint32_t)));
  auto* sums = static_cast<uint32_t*>(sharedAlloc(4 * sizeof(uint32_t)));
  for (uint32_t i = 0; i < 256; ++i) in[i] = i;
  ze_kernel_handle_t sum = kernel("group_sum");
  ZE_OK(zeKernelSetArgumentValue(sum, 0, sizeof in, &in));
  ZE_OK(zeKernelSetArgumentValue(sum, 1, sizeof sums, &sums));
  ZE_OK(zeKernelSetArgumentValue(sum, 2, 64 * sizeof(uint32_t), nullptr));  // local memory
  ZE_OK(zeKernelSetGroupSize(sum, 64, 1, 1));

  ze_command_list_handle_t l = immediate(ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS);
  ze_group_count_t g4{4, 1, 1};
  ZE_OK(zeCommandListAppendLaunchKernel(l, saxpy, &g4, nullptr, 0, nullptr));
  ZE_OK(zeCommandListAppendLaunchKernel(l, sum, &g4, nullptr, 0, nullptr));
  for (int i = 0; i < 128; ++i) {
    float expected = i < 100 ? 2.0f * float(i) + 1.0f + 0.25f : 1.0f;
    ASSERT_FLOAT_EQ(expected, y[i]) << i;
  }
  for (uint32_t g = 0; g < 4; ++g) {
    uint32_t first = g * 64, last = first + 63;
    EXPECT_EQ((first + last) * 64 / 2, sums[g]) << g;
  }
  ZE_OK(zeCommandListDestroy(l));
  ZE_OK(zeKernelDestroy(saxpy));
  ZE_OK(zeKernelDestroy(sum));
  for (void* p : {static_cast<void*>(x), static_cast<void*>(y), static_cast<void*>(in), static_cast<void*>(sums)}) {
    ZE_OK(zeMemFree(context_, p));
  }
}

TEST_F(SimZe, CopiesAndFillsMoveTheRightBytes) {
  auto* buf = static_cast<uint8_t*>(sharedAlloc(4096));
  auto* dst = static_cast<uint8_t*>(sharedAlloc(4096));
  ze_command_list_handle_t l = immediate(ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS);

  uint8_t byte = 0xab;
  ZE_OK(zeCommandListAppendMemoryFill(l, buf, &byte, 1, 100, nullptr, 0, nullptr));
  uint32_t word = 0x11223344;
  ZE_OK(zeCommandListAppendMemoryFill(l, buf + 100, &word, 4, 64, nullptr, 0, nullptr));
  for (int i = 0; i < 100; ++i) ASSERT_EQ(0xab, buf[i]) << i;
  for (int i = 0; i < 16; ++i) {
    uint32_t v;
    std::memcpy(&v, buf + 100 + 4 * i, 4);
    ASSERT_EQ(word, v) << i;
  }
  EXPECT_EQ(0, buf[164]);  // nothing beyond the requested size

  uint8_t pattern3[3] = {1, 2, 3};
  EXPECT_EQ(ZE_RESULT_ERROR_INVALID_SIZE, zeCommandListAppendMemoryFill(l, buf, pattern3, 3, 9, nullptr, 0, nullptr));
  uint8_t big[256] = {};
  EXPECT_EQ(ZE_RESULT_ERROR_INVALID_SIZE, zeCommandListAppendMemoryFill(l, buf, big, 256, 256, nullptr, 0, nullptr));

  for (int i = 0; i < 4096; ++i) buf[i] = uint8_t(i * 7);
  ZE_OK(zeCommandListAppendMemoryCopy(l, dst, buf, 4096, nullptr, 0, nullptr));
  EXPECT_EQ(0, std::memcmp(dst, buf, 4096));

  // A 2D region: 8x4 bytes from (2,1) of a 64-byte pitch source to (0,0) of a 16-byte pitch destination.
  std::memset(dst, 0, 4096);
  ze_copy_region_t srcRegion{2, 1, 0, 8, 4, 1};
  ze_copy_region_t dstRegion{0, 0, 0, 8, 4, 1};
  ZE_OK(zeCommandListAppendMemoryCopyRegion(l, dst, &dstRegion, 16, 0, buf, &srcRegion, 64, 0, nullptr, 0, nullptr));
  for (int y = 0; y < 4; ++y) {
    for (int x = 0; x < 8; ++x) ASSERT_EQ(buf[(1 + y) * 64 + 2 + x], dst[y * 16 + x]) << x << "," << y;
  }
  EXPECT_EQ(0, dst[8]);
  ze_copy_region_t overlapping{4, 1, 0, 8, 4, 1};
  EXPECT_EQ(ZE_RESULT_ERROR_OVERLAPPING_REGIONS,
            zeCommandListAppendMemoryCopyRegion(l, buf, &overlapping, 64, 0, buf, &srcRegion, 64, 0, nullptr, 0,
                                                nullptr));

  ZE_OK(zeCommandListDestroy(l));
  ZE_OK(zeMemFree(context_, buf));
  ZE_OK(zeMemFree(context_, dst));
}

TEST_F(SimZe, KernelTimestampsMeasureTheKernel) {
  ze_kernel_handle_t spin = kernel("spin_ns");
  uint64_t ns = 3'000'000;
  ZE_OK(zeKernelSetArgumentValue(spin, 0, sizeof ns, &ns));
  ze_event_pool_handle_t gates = pool(1, ZE_EVENT_POOL_FLAG_HOST_VISIBLE);
  ze_event_pool_handle_t stamps = pool(4, ZE_EVENT_POOL_FLAG_HOST_VISIBLE | ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP);
  ze_event_handle_t gate = event(gates, 0);
  ze_event_handle_t kernelDone = event(stamps, 0);
  ze_event_handle_t copyDone = event(stamps, 1);
  ze_event_handle_t fillDone = event(stamps, 2);
  ze_event_handle_t barrierDone = event(stamps, 3);
  auto* mem = static_cast<uint8_t*>(sharedAlloc(1 << 20));
  auto* results = static_cast<ze_kernel_timestamp_result_t*>(sharedAlloc(4 * sizeof(ze_kernel_timestamp_result_t)));
  auto* globalStamp = static_cast<uint64_t*>(sharedAlloc(sizeof(uint64_t)));

  ze_command_list_handle_t l = immediate();
  ze_group_count_t one{1, 1, 1};
  ZE_OK(zeCommandListAppendLaunchKernel(l, spin, &one, kernelDone, 1, &gate));
  ze_kernel_timestamp_result_t ts{};
  EXPECT_EQ(ZE_RESULT_NOT_READY, zeEventQueryKernelTimestamp(kernelDone, &ts));
  uint8_t v = 1;
  ZE_OK(zeCommandListAppendMemoryFill(l, mem, &v, 1, 1 << 19, fillDone, 0, nullptr));
  ZE_OK(zeCommandListAppendMemoryCopy(l, mem + (1 << 19), mem, 1 << 19, copyDone, 0, nullptr));
  ZE_OK(zeCommandListAppendBarrier(l, barrierDone, 0, nullptr));
  ze_event_handle_t all[4] = {kernelDone, fillDone, copyDone, barrierDone};
  ZE_OK(zeCommandListAppendQueryKernelTimestamps(l, 4, all, results, nullptr, nullptr, 0, nullptr));
  ZE_OK(zeCommandListAppendWriteGlobalTimestamp(l, globalStamp, nullptr, 0, nullptr));
  ZE_OK(zeEventHostSignal(gate));
  ZE_OK(zeCommandListReset(l));  // waits for the immediate list to drain

  ZE_OK(zeEventQueryKernelTimestamp(kernelDone, &ts));
  uint64_t ticks = (ts.global.kernelEnd - ts.global.kernelStart) & kKernelMask;
  EXPECT_LE(ts.global.kernelStart, kKernelMask);
  EXPECT_LE(ts.global.kernelEnd, kKernelMask);
  EXPECT_GE(ticksToNs(ticks), 0.99 * double(ns));
  EXPECT_LT(ticksToNs(ticks), 1e9);
  EXPECT_EQ(ts.global.kernelStart, results[0].global.kernelStart);
  EXPECT_EQ(ts.global.kernelEnd, results[0].global.kernelEnd);
  for (ze_event_handle_t e : {fillDone, copyDone, barrierDone}) {
    ze_kernel_timestamp_result_t r{};
    ZE_OK(zeEventQueryKernelTimestamp(e, &r));
    EXPECT_LT((r.global.kernelEnd - r.global.kernelStart) & kKernelMask, kTicksPerSecond);
    // Each ran after the kernel, in order.
    EXPECT_LT((r.global.kernelStart - ts.global.kernelEnd) & kKernelMask, kTicksPerSecond);
  }
  // The global timestamp was written after the kernel, on the same clock.
  EXPECT_LT(((*globalStamp & kKernelMask) - ts.global.kernelEnd) & kKernelMask, kTicksPerSecond);

  // Events without timestamps cannot answer, reset events have nothing to say.
  EXPECT_EQ(ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT, zeEventQueryKernelTimestamp(gate, &ts));
  ZE_OK(zeEventHostReset(kernelDone));
  EXPECT_EQ(ZE_RESULT_NOT_READY, zeEventQueryKernelTimestamp(kernelDone, &ts));

  ZE_OK(zeCommandListDestroy(l));
  for (ze_event_handle_t e : {gate, kernelDone, copyDone, fillDone, barrierDone}) ZE_OK(zeEventDestroy(e));
  ZE_OK(zeEventPoolDestroy(gates));
  ZE_OK(zeEventPoolDestroy(stamps));
  ZE_OK(zeKernelDestroy(spin));
  ZE_OK(zeMemFree(context_, mem));
  ZE_OK(zeMemFree(context_, results));
  ZE_OK(zeMemFree(context_, globalStamp));
}

TEST_F(SimZe, GlobalTimestampsAdvanceAtTheDeclaredRate) {
  uint64_t host0 = 0, dev0 = 0, host1 = 0, dev1 = 0;
  ZE_OK(zeDeviceGetGlobalTimestamps(device_, &host0, &dev0));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ZE_OK(zeDeviceGetGlobalTimestamps(device_, &host1, &dev1));
  // The host value is CLOCK_MONOTONIC.
  uint64_t now = hostNs();
  EXPECT_LE(host1, now);
  EXPECT_LT(now - host1, 1'000'000'000ull);
  double rate = double(dev1 - dev0) / (double(host1 - host0) / 1e9);
  EXPECT_NEAR(double(kTicksPerSecond), rate, double(kTicksPerSecond) * 1e-4);
  // A different clock: not the host's nanoseconds.
  EXPECT_GT(dev0 > host0 ? dev0 - host0 : host0 - dev0, 1'000'000'000ull);
}

// Runs only inside the child process the next test starts, with the device
// counter placed just before a 32-bit wrap.
TEST_F(SimZe, WrapChild) {
  if (std::getenv("GTAP_SIM_ZE_SMOKE_WRAP_CHILD") == nullptr) GTEST_SKIP() << "runs in KernelCounterWraps";
  uint64_t offset = std::strtoull(std::getenv("GTAP_SIM_ZE_TICK_OFFSET"), nullptr, 10);
  uint64_t host = 0, dev = 0;
  ZE_OK(zeDeviceGetGlobalTimestamps(device_, &host, &dev));
  EXPECT_GE(dev, offset);
  EXPECT_LT(dev - offset, 5 * kTicksPerSecond);  // started at the offset a moment ago
  uint64_t ticksToWrap = (uint64_t{1} << 32) - (dev & kKernelMask);
  ASSERT_LT(ticksToWrap, uint64_t{1} << 31) << "the counter wrapped before the kernel could start";

  ze_kernel_handle_t spin = kernel("spin_ns");
  // Long enough to run across the wrap, however slowly the process started.
  uint64_t ns = uint64_t(ticksToNs(ticksToWrap)) + 50'000'000;
  ZE_OK(zeKernelSetArgumentValue(spin, 0, sizeof ns, &ns));
  ze_event_pool_handle_t stamps = pool(1, ZE_EVENT_POOL_FLAG_HOST_VISIBLE | ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP);
  ze_event_handle_t done = event(stamps, 0);
  ze_command_list_handle_t l = immediate();
  ze_group_count_t one{1, 1, 1};
  ZE_OK(zeCommandListAppendLaunchKernel(l, spin, &one, done, 0, nullptr));
  ZE_OK(zeEventHostSynchronize(done, kForever));
  ze_kernel_timestamp_result_t ts{};
  ZE_OK(zeEventQueryKernelTimestamp(done, &ts));
  EXPECT_LT(ts.global.kernelEnd, ts.global.kernelStart) << "the 32-bit counter wrapped during the kernel";
  uint64_t ticks = (ts.global.kernelEnd - ts.global.kernelStart) & kKernelMask;
  EXPECT_GE(ticksToNs(ticks), 0.99 * double(ns));
  EXPECT_LT(ticksToNs(ticks), double(ns) + 1e9);
  ZE_OK(zeCommandListDestroy(l));
  ZE_OK(zeEventDestroy(done));
  ZE_OK(zeEventPoolDestroy(stamps));
  ZE_OK(zeKernelDestroy(spin));
}

TEST_F(SimZe, KernelCounterWraps) {
  if (std::getenv("GTAP_SIM_ZE_SMOKE_WRAP_CHILD") != nullptr) GTEST_SKIP() << "already the child";
  // The clock's offset is read once per process, so the check runs in a child.
  uint64_t offset = (uint64_t{7} << 32) - kTicksPerSecond * 3 / 2;  // 1.5 s before a wrap
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
  env.push_back("GTAP_SIM_ZE_TICK_OFFSET=" + std::to_string(offset));
  env.push_back("GTAP_SIM_ZE_SMOKE_WRAP_CHILD=1");
  std::vector<char*> envp;
  for (auto& s : env) envp.push_back(s.data());
  envp.push_back(nullptr);
  // The build gives the path: under valgrind /proc/self/exe is valgrind itself.
  std::string self = GTAP_SIM_ZE_SMOKE_TEST_PATH;
  std::string filter = "--gtest_filter=SimZe.WrapChild";
  char* argv[] = {self.data(), filter.data(), nullptr};
  pid_t pid = 0;
  ASSERT_EQ(0, posix_spawn(&pid, self.c_str(), nullptr, nullptr, argv, envp.data()));
  int status = 0;
  ASSERT_EQ(pid, waitpid(pid, &status, 0));
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(0, WEXITSTATUS(status)) << "the child's WrapChild test failed (its output is above)";
}

TEST_F(SimZe, ValidationErrors) {
  EXPECT_EQ(ZE_RESULT_ERROR_INVALID_NULL_POINTER, zeDeviceGetProperties(device_, nullptr));
  EXPECT_EQ(ZE_RESULT_ERROR_INVALID_NULL_POINTER, zeContextCreate(driver_, nullptr, nullptr));
  if (!interceptMode()) {
    // The loader's intercept layer dereferences handles (and zeDriverGet's
    // count) before the driver sees them, so these are only checked on the
    // direct path.
    EXPECT_EQ(ZE_RESULT_ERROR_INVALID_NULL_POINTER, zeDriverGet(nullptr, nullptr));
    auto p = typed<ze_device_properties_t>(ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES);
    EXPECT_EQ(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, zeDeviceGetProperties(nullptr, &p));
    EXPECT_EQ(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, zeKernelSetGroupSize(nullptr, 1, 1, 1));
  }

  ze_kernel_handle_t k = kernel("vector_add");
  float* ptr = nullptr;
  EXPECT_EQ(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX, zeKernelSetArgumentValue(k, 4, sizeof ptr, &ptr));
  EXPECT_EQ(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE, zeKernelSetArgumentValue(k, 3, 8, &ptr));
  EXPECT_EQ(ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION, zeKernelSetGroupSize(k, 0, 1, 1));
  EXPECT_EQ(ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION, zeKernelSetGroupSize(k, 1024, 2, 1));
  ze_command_list_handle_t l = list();
  ze_group_count_t one{1, 1, 1};
  // Arguments 0..3 were never set.
  EXPECT_EQ(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeCommandListAppendLaunchKernel(l, k, &one, nullptr, 0, nullptr));
  EXPECT_EQ(ZE_RESULT_ERROR_INVALID_NULL_POINTER, zeCommandListAppendLaunchKernel(l, k, nullptr, nullptr, 0, nullptr));
  if (!interceptMode()) {  // the intercept layer copies the (missing) wait list first
    EXPECT_EQ(ZE_RESULT_ERROR_INVALID_SIZE, zeCommandListAppendLaunchKernel(l, k, &one, nullptr, 1, nullptr));
  }
  ze_kernel_handle_t ids = kernel("write_global_id");
  EXPECT_EQ(ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION, zeKernelSetGroupSize(ids, 32, 1, 1));

  ze_command_queue_handle_t q = queue();
  EXPECT_EQ(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeCommandQueueExecuteCommandLists(q, 1, &l, nullptr));  // not closed
  EXPECT_EQ(ZE_RESULT_ERROR_INVALID_SIZE, zeCommandQueueExecuteCommandLists(q, 0, &l, nullptr));
  ze_command_list_handle_t copyOnly = list(1);
  ZE_OK(zeCommandListClose(copyOnly));
  EXPECT_EQ(ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE, zeCommandQueueExecuteCommandLists(q, 1, &copyOnly, nullptr));

  ze_kernel_desc_t missing{ZE_STRUCTURE_TYPE_KERNEL_DESC, nullptr, 0, "no_such_kernel"};
  ze_kernel_handle_t none = nullptr;
  EXPECT_EQ(ZE_RESULT_ERROR_INVALID_KERNEL_NAME, zeKernelCreate(module_, &missing, &none));

  const uint32_t spirv[] = {0x07230203, 0x00010000, 0, 1, 0};
  auto mdesc = typed<ze_module_desc_t>(ZE_STRUCTURE_TYPE_MODULE_DESC);
  mdesc.format = ZE_MODULE_FORMAT_IL_SPIRV;
  mdesc.inputSize = sizeof spirv;
  mdesc.pInputModule = reinterpret_cast<const uint8_t*>(spirv);
  ze_module_handle_t m = nullptr;
  ze_module_build_log_handle_t log = nullptr;
  // The 1.8 loader's intercept layer does not wrap the build log of a failed
  // build, so the program can only use it on the direct path.
  EXPECT_EQ(ZE_RESULT_ERROR_MODULE_BUILD_FAILURE,
            zeModuleCreate(context_, device_, &mdesc, &m, interceptMode() ? nullptr : &log));
  if (!interceptMode()) {
    ASSERT_NE(nullptr, log);
    size_t logSize = 0;
    ZE_OK(zeModuleBuildLogGetString(log, &logSize, nullptr));
    std::string text(logSize, '\0');
    ZE_OK(zeModuleBuildLogGetString(log, &logSize, text.data()));
    EXPECT_NE(std::string::npos, text.find("SPIR-V")) << text;
    ZE_OK(zeModuleBuildLogDestroy(log));
  }
  const uint8_t junk[] = {'n', 'o', 't', ' ', 'a', 'n', ' ', 'E', 'L', 'F'};
  mdesc.format = ZE_MODULE_FORMAT_NATIVE;
  mdesc.inputSize = sizeof junk;
  mdesc.pInputModule = junk;
  EXPECT_EQ(ZE_RESULT_ERROR_INVALID_NATIVE_BINARY, zeModuleCreate(context_, device_, &mdesc, &m, nullptr));
  mdesc.inputSize = 0;
  EXPECT_EQ(ZE_RESULT_ERROR_INVALID_SIZE, zeModuleCreate(context_, device_, &mdesc, &m, nullptr));

  auto h = typed<ze_host_mem_alloc_desc_t>(ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC);
  void* mem = nullptr;
  EXPECT_EQ(ZE_RESULT_ERROR_UNSUPPORTED_SIZE, zeMemAllocHost(context_, &h, 0, 0, &mem));
  EXPECT_EQ(ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT, zeMemAllocHost(context_, &h, 64, 3, &mem));
  EXPECT_EQ(ZE_RESULT_ERROR_INVALID_NULL_POINTER, zeMemAllocHost(context_, nullptr, 64, 0, &mem));

  ze_event_pool_handle_t p = pool(1, 0);
  ze_event_desc_t edesc{ZE_STRUCTURE_TYPE_EVENT_DESC, nullptr, 1, 0, 0};
  ze_event_handle_t e = nullptr;
  EXPECT_EQ(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeEventCreate(p, &edesc, &e));  // index past the pool

  // Functions the driver leaves out (null table entries) reach the program as
  // unsupported on the direct path; the 1.8 loader's intercept layer reports
  // them as uninitialized instead.
  auto idesc = typed<ze_image_desc_t>(ZE_STRUCTURE_TYPE_IMAGE_DESC);
  ze_image_handle_t image = nullptr;
  EXPECT_EQ(interceptMode() ? ZE_RESULT_ERROR_UNINITIALIZED : ZE_RESULT_ERROR_UNSUPPORTED_FEATURE,
            zeImageCreate(context_, device_, &idesc, &image));

  ZE_OK(zeEventPoolDestroy(p));
  ZE_OK(zeCommandListDestroy(copyOnly));
  ZE_OK(zeCommandListDestroy(l));
  ZE_OK(zeCommandQueueDestroy(q));
  ZE_OK(zeKernelDestroy(k));
  ZE_OK(zeKernelDestroy(ids));
}

TEST_F(SimZe, AllocationQueries) {
  auto* d = static_cast<uint8_t*>(deviceAlloc(1000));
  auto* s = static_cast<uint8_t*>(sharedAlloc(1000));
  auto props = typed<ze_memory_allocation_properties_t>(ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES);
  ze_device_handle_t owner = nullptr;
  ZE_OK(zeMemGetAllocProperties(context_, d + 10, &props, &owner));
  EXPECT_EQ(ZE_MEMORY_TYPE_DEVICE, props.type);
  EXPECT_EQ(device_, owner);
  uint64_t deviceId = props.id;
  ZE_OK(zeMemGetAllocProperties(context_, s, &props, nullptr));
  EXPECT_EQ(ZE_MEMORY_TYPE_SHARED, props.type);
  EXPECT_NE(deviceId, props.id);
  int onStack = 0;
  ZE_OK(zeMemGetAllocProperties(context_, &onStack, &props, nullptr));
  EXPECT_EQ(ZE_MEMORY_TYPE_UNKNOWN, props.type);

  void* base = nullptr;
  size_t size = 0;
  ZE_OK(zeMemGetAddressRange(context_, d + 999, &base, &size));
  EXPECT_EQ(d, base);
  EXPECT_EQ(1000u, size);
  EXPECT_EQ(0u, reinterpret_cast<uintptr_t>(d) % 64);

  auto h = typed<ze_host_mem_alloc_desc_t>(ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC);
  void* aligned = nullptr;
  ZE_OK(zeMemAllocHost(context_, &h, 100, 1 << 16, &aligned));
  EXPECT_EQ(0u, reinterpret_cast<uintptr_t>(aligned) % (1 << 16));

  EXPECT_EQ(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeMemFree(context_, d + 1));  // not a base address
  ZE_OK(zeMemFree(context_, d));
  ZE_OK(zeMemFree(context_, s));
  ZE_OK(zeMemFree(context_, aligned));
  EXPECT_EQ(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeMemFree(context_, d));  // already freed
}

TEST_F(SimZe, FenceQueueAndEventTimeouts) {
  ze_event_pool_handle_t p = pool(2, ZE_EVENT_POOL_FLAG_HOST_VISIBLE);
  ze_event_handle_t gate = event(p, 0);
  ze_event_handle_t done = event(p, 1);
  ze_command_queue_handle_t q = queue();
  ze_command_list_handle_t l = list();
  ZE_OK(zeCommandListAppendWaitOnEvents(l, 1, &gate));
  ZE_OK(zeCommandListAppendSignalEvent(l, done));
  ZE_OK(zeCommandListClose(l));
  ze_fence_desc_t fdesc{ZE_STRUCTURE_TYPE_FENCE_DESC, nullptr, 0};
  ze_fence_handle_t fence = nullptr;
  ZE_OK(zeFenceCreate(q, &fdesc, &fence));
  ZE_OK(zeCommandQueueExecuteCommandLists(q, 1, &l, fence));

  EXPECT_EQ(ZE_RESULT_NOT_READY, zeFenceHostSynchronize(fence, 0));
  EXPECT_EQ(ZE_RESULT_NOT_READY, zeFenceQueryStatus(fence));
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(ZE_RESULT_NOT_READY, zeFenceHostSynchronize(fence, 20'000'000));
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(20));
  EXPECT_EQ(ZE_RESULT_NOT_READY, zeCommandQueueSynchronize(q, 1'000'000));
  EXPECT_EQ(ZE_RESULT_NOT_READY, zeEventHostSynchronize(done, 0));
  EXPECT_EQ(ZE_RESULT_NOT_READY, zeEventHostSynchronize(done, 1'000'000));

  std::thread opener([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    zeEventHostSignal(gate);
  });
  ZE_OK(zeFenceHostSynchronize(fence, kForever));
  opener.join();
  ZE_OK(zeEventHostSynchronize(done, 0));
  ZE_OK(zeCommandQueueSynchronize(q, 0));
  ZE_OK(zeFenceReset(fence));
  EXPECT_EQ(ZE_RESULT_NOT_READY, zeFenceQueryStatus(fence));

  // A fence created signaled is signaled.
  ze_fence_desc_t signaled{ZE_STRUCTURE_TYPE_FENCE_DESC, nullptr, ZE_FENCE_FLAG_SIGNALED};
  ze_fence_handle_t f2 = nullptr;
  ZE_OK(zeFenceCreate(q, &signaled, &f2));
  ZE_OK(zeFenceQueryStatus(f2));

  ZE_OK(zeFenceDestroy(f2));
  ZE_OK(zeFenceDestroy(fence));
  ZE_OK(zeCommandListDestroy(l));
  ZE_OK(zeCommandQueueDestroy(q));
  ZE_OK(zeEventDestroy(gate));
  ZE_OK(zeEventDestroy(done));
  ZE_OK(zeEventPoolDestroy(p));
}

TEST_F(SimZe, ExtensionFunctionAddress) {
  void* fn = nullptr;
  EXPECT_EQ(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeDriverGetExtensionFunctionAddress(driver_, "zeNoSuchFunction", &fn));
  ZE_OK(zeDriverGetExtensionFunctionAddress(driver_, "zeKernelSetGlobalOffsetExp", &fn));
  EXPECT_NE(nullptr, fn);
  ZE_OK(zeDriverGetExtensionFunctionAddress(driver_, "zeInit", &fn));
  ASSERT_NE(nullptr, fn);
  EXPECT_EQ(ZE_RESULT_SUCCESS, reinterpret_cast<decltype(&zeInit)>(fn)(0));
  // The pointer is the driver's own function: it takes the driver's handles,
  // which the program holds only when the loader does not intercept. Behind
  // the intercept layer it refuses the loader's handles instead of crashing.
  ZE_OK(zeDriverGetExtensionFunctionAddress(driver_, "zeDriverGetApiVersion", &fn));
  ze_api_version_t version{};
  auto getVersion = reinterpret_cast<decltype(&zeDriverGetApiVersion)>(fn);
  if (interceptMode()) {
    EXPECT_EQ(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, getVersion(driver_, &version));
  } else {
    ZE_OK(getVersion(driver_, &version));
    EXPECT_EQ(ZE_API_VERSION_CURRENT, version);
  }
}

TEST_F(SimZe, GlobalOffsetAndIndirectLaunch) {
  ze_kernel_handle_t k = kernel("write_global_id");
  auto* out = static_cast<uint64_t*>(sharedAlloc(128 * sizeof(uint64_t)));
  ZE_OK(zeKernelSetArgumentValue(k, 0, sizeof out, &out));
  ZE_OK(zeKernelSetGlobalOffsetExp(k, 1000, 0, 0));
  auto* groups = static_cast<ze_group_count_t*>(sharedAlloc(sizeof(ze_group_count_t)));
  *groups = {1, 1, 1};
  ze_command_list_handle_t l = list();
  ZE_OK(zeCommandListAppendLaunchKernelIndirect(l, k, groups, nullptr, 0, nullptr));
  ZE_OK(zeCommandListClose(l));
  *groups = {2, 1, 1};  // read when the launch runs, not when it was appended
  ze_command_queue_handle_t q = queue(ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS);
  ZE_OK(zeCommandQueueExecuteCommandLists(q, 1, &l, nullptr));
  for (uint64_t i = 0; i < 128; ++i) ASSERT_EQ(1000 + i, out[i]) << i;
  ZE_OK(zeCommandListDestroy(l));
  ZE_OK(zeCommandQueueDestroy(q));
  ZE_OK(zeKernelDestroy(k));
  ZE_OK(zeMemFree(context_, out));
  ZE_OK(zeMemFree(context_, groups));
}

// Exit status of a forked child: 0 when every check passed, otherwise the
// number of the first failed check.
int childChecks(ze_context_handle_t parentContext, const std::vector<uint8_t>& moduleBytes) {
  if (zeInit(0) != ZE_RESULT_SUCCESS) return 1;
  // The parent's objects do not survive into the child.
  if (zeContextGetStatus(parentContext) != ZE_RESULT_ERROR_INVALID_NULL_HANDLE) return 2;
  ze_driver_handle_t driver = nullptr;
  ze_device_handle_t device = nullptr;
  uint32_t n = 1;
  if (zeDriverGet(&n, &driver) != ZE_RESULT_SUCCESS || zeDeviceGet(driver, &n, &device) != ZE_RESULT_SUCCESS) return 3;
  ze_context_desc_t cdesc{ZE_STRUCTURE_TYPE_CONTEXT_DESC, nullptr, 0};
  ze_context_handle_t context = nullptr;
  if (zeContextCreate(driver, &cdesc, &context) != ZE_RESULT_SUCCESS) return 4;
  auto mdesc = typed<ze_module_desc_t>(ZE_STRUCTURE_TYPE_MODULE_DESC);
  mdesc.format = ZE_MODULE_FORMAT_NATIVE;
  mdesc.inputSize = moduleBytes.size();
  mdesc.pInputModule = moduleBytes.data();
  ze_module_handle_t module = nullptr;
  if (zeModuleCreate(context, device, &mdesc, &module, nullptr) != ZE_RESULT_SUCCESS) return 5;
  ze_kernel_desc_t kdesc{ZE_STRUCTURE_TYPE_KERNEL_DESC, nullptr, 0, "vector_add"};
  ze_kernel_handle_t k = nullptr;
  if (zeKernelCreate(module, &kdesc, &k) != ZE_RESULT_SUCCESS) return 6;
  auto d = typed<ze_device_mem_alloc_desc_t>(ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC);
  auto h = typed<ze_host_mem_alloc_desc_t>(ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC);
  float* v = nullptr;
  if (zeMemAllocShared(context, &d, &h, 64 * sizeof(float), 0, device, reinterpret_cast<void**>(&v)) !=
      ZE_RESULT_SUCCESS)
    return 7;
  for (int i = 0; i < 64; ++i) v[i] = float(i);
  uint32_t count = 64;
  zeKernelSetArgumentValue(k, 0, sizeof v, &v);
  zeKernelSetArgumentValue(k, 1, sizeof v, &v);
  zeKernelSetArgumentValue(k, 2, sizeof v, &v);
  zeKernelSetArgumentValue(k, 3, sizeof count, &count);
  zeKernelSetGroupSize(k, 64, 1, 1);
  auto q = typed<ze_command_queue_desc_t>(ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC);
  q.mode = ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS;
  ze_command_list_handle_t l = nullptr;
  if (zeCommandListCreateImmediate(context, device, &q, &l) != ZE_RESULT_SUCCESS) return 8;
  ze_group_count_t one{1, 1, 1};
  if (zeCommandListAppendLaunchKernel(l, k, &one, nullptr, 0, nullptr) != ZE_RESULT_SUCCESS) return 9;
  for (int i = 0; i < 64; ++i) {
    if (v[i] != 2.0f * float(i)) return 10;
  }
  return 0;
}

TEST_F(SimZe, ForkedChildStartsAfresh) {
  // Work in flight in the parent's queues while forking.
  ze_command_list_handle_t busy = immediate();
  ze_event_pool_handle_t p = pool(1, ZE_EVENT_POOL_FLAG_HOST_VISIBLE);
  ze_event_handle_t gate = event(p, 0);
  ZE_OK(zeCommandListAppendBarrier(busy, nullptr, 1, &gate));
  pid_t pid = fork();
  ASSERT_NE(-1, pid);
  if (pid == 0) _exit(childChecks(context_, *moduleBytes_));
  int status = 0;
  ASSERT_EQ(pid, waitpid(pid, &status, 0));
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(0, WEXITSTATUS(status)) << "failed check in the child";
  // The parent is unaffected.
  ZE_OK(zeContextGetStatus(context_));
  ZE_OK(zeEventHostSignal(gate));
  ZE_OK(zeCommandListReset(busy));
  ZE_OK(zeCommandListDestroy(busy));
  ZE_OK(zeEventDestroy(gate));
  ZE_OK(zeEventPoolDestroy(p));
}

TEST_F(SimZe, ConcurrentSubmissionFromManyThreads) {
  constexpr int kThreads = 4, kRounds = 25;
  constexpr uint32_t n = 512;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto* a = static_cast<float*>(sharedAlloc(n * sizeof(float)));
      auto* b = static_cast<float*>(sharedAlloc(n * sizeof(float)));
      auto* c = static_cast<float*>(sharedAlloc(n * sizeof(float)));
      ze_kernel_handle_t k = kernel("vector_add");
      ze_command_queue_handle_t q = queue(ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS, uint32_t(t % 4));
      for (int r = 0; r < kRounds; ++r) {
        for (uint32_t i = 0; i < n; ++i) {
          a[i] = float(t * 1000 + r);
          b[i] = float(i);
        }
        bindVectorAdd(k, a, b, c, n);
        ze_command_list_handle_t l = list();
        ze_group_count_t g{n / 64, 1, 1};
        zeCommandListAppendLaunchKernel(l, k, &g, nullptr, 0, nullptr);
        zeCommandListClose(l);
        zeCommandQueueExecuteCommandLists(q, 1, &l, nullptr);
        zeCommandQueueSynchronize(q, kForever);
        for (uint32_t i = 0; i < n; ++i) {
          if (c[i] != float(t * 1000 + r) + float(i)) ++failures;
        }
        zeCommandListDestroy(l);
      }
      zeCommandQueueDestroy(q);
      zeKernelDestroy(k);
      zeMemFree(context_, a);
      zeMemFree(context_, b);
      zeMemFree(context_, c);
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(0, failures.load());
}

}  // namespace
