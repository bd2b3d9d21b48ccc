// Sysman of the simulated Level Zero driver (zes, reached through zeInit with
// ZES_ENABLE_SYSMAN=1): engine groups whose activity follows the work the
// engines ran, and the frequency domain of the simulated clock, driven
// through the real Level Zero loader.
#include <ze_api.h>
#include <zes_api.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <vector>
#include "sim_ze_test_setup.h"

namespace {

constexpr uint64_t kForever = UINT64_MAX;
constexpr double kClockMHz = 19.2;

#define ZE_OK(expr) ASSERT_EQ(ZE_RESULT_SUCCESS, (expr))

using simtest::readFile;

using simtest::typed;

class SimZeSysman : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    setenv("ZES_ENABLE_SYSMAN", "1", 1);  // device handles are Sysman handles too
    simtest::SimZeSession s;
    simtest::openSimZe(GTAP_SIM_ZE_DRIVER_PATH, GTAP_SIM_ZE_SMOKE_KERNELS_PATH, s);
    driver_ = s.driver;
    device_ = s.device;
    context_ = s.context;
    module_ = s.module;
    moduleBytes_ = s.moduleBytes;
    if (HasFatalFailure()) return;
  }

  static void TearDownTestSuite() { simtest::closeSimZe(module_, context_, moduleBytes_); }

  zes_device_handle_t sysman() const { return reinterpret_cast<zes_device_handle_t>(device_); }

  // The device's engine groups by type.
  std::map<zes_engine_group_t, zes_engine_handle_t> engineGroups() {
    uint32_t count = 0;
    EXPECT_EQ(ZE_RESULT_SUCCESS, zesDeviceEnumEngineGroups(sysman(), &count, nullptr));
    std::vector<zes_engine_handle_t> handles(count);
    EXPECT_EQ(ZE_RESULT_SUCCESS, zesDeviceEnumEngineGroups(sysman(), &count, handles.data()));
    std::map<zes_engine_group_t, zes_engine_handle_t> out;
    for (zes_engine_handle_t h : handles) {
      auto p = typed<zes_engine_properties_t>(ZES_STRUCTURE_TYPE_ENGINE_PROPERTIES);
      EXPECT_EQ(ZE_RESULT_SUCCESS, zesEngineGetProperties(h, &p));
      EXPECT_FALSE(p.onSubdevice);
      out[p.type] = h;
    }
    return out;
  }

  zes_engine_stats_t activity(zes_engine_handle_t h) {
    zes_engine_stats_t s{};
    EXPECT_EQ(ZE_RESULT_SUCCESS, zesEngineGetActivity(h, &s));
    return s;
  }

  // Runs one list on a new queue of the ordinal and waits for it.
  template <class Append>
  void runOn(uint32_t ordinal, Append&& append) {
    auto qd = typed<ze_command_queue_desc_t>(ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC);
    qd.ordinal = ordinal;
    ze_command_queue_handle_t q = nullptr;
    ZE_OK(zeCommandQueueCreate(context_, device_, &qd, &q));
    auto ld = typed<ze_command_list_desc_t>(ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC);
    ld.commandQueueGroupOrdinal = ordinal;
    ze_command_list_handle_t l = nullptr;
    ZE_OK(zeCommandListCreate(context_, device_, &ld, &l));
    append(l);
    ZE_OK(zeCommandListClose(l));
    ZE_OK(zeCommandQueueExecuteCommandLists(q, 1, &l, nullptr));
    ZE_OK(zeCommandQueueSynchronize(q, kForever));
    ZE_OK(zeCommandListDestroy(l));
    ZE_OK(zeCommandQueueDestroy(q));
  }

  static inline ze_driver_handle_t driver_ = nullptr;
  static inline ze_device_handle_t device_ = nullptr;
  static inline ze_context_handle_t context_ = nullptr;
  static inline ze_module_handle_t module_ = nullptr;
  static inline std::vector<uint8_t>* moduleBytes_ = nullptr;
};

TEST_F(SimZeSysman, ThreeEngineGroups) {
  auto groups = engineGroups();
  EXPECT_EQ(3u, groups.size());
  EXPECT_TRUE(groups.count(ZES_ENGINE_GROUP_ALL));
  EXPECT_TRUE(groups.count(ZES_ENGINE_GROUP_COMPUTE_ALL));
  EXPECT_TRUE(groups.count(ZES_ENGINE_GROUP_COPY_ALL));
  uint32_t one = 1;
  zes_engine_handle_t first = nullptr;
  ZE_OK(zesDeviceEnumEngineGroups(sysman(), &one, &first));
  EXPECT_EQ(1u, one);
  EXPECT_EQ(ZE_RESULT_ERROR_INVALID_NULL_POINTER, zesDeviceEnumEngineGroups(sysman(), nullptr, nullptr));
  EXPECT_EQ(ZE_RESULT_ERROR_INVALID_NULL_POINTER, zesEngineGetActivity(first, nullptr));
  EXPECT_EQ(ZE_RESULT_ERROR_INVALID_NULL_POINTER, zesEngineGetProperties(first, nullptr));
}

// Kernels keep the compute engines busy for as long as they spin; a copy on
// a copy engine adds to the copy group only; both add to the whole device's.
TEST_F(SimZeSysman, EngineActivityFollowsTheWorkRun) {
  auto groups = engineGroups();
  ASSERT_EQ(3u, groups.size());
  zes_engine_handle_t all = groups[ZES_ENGINE_GROUP_ALL];
  zes_engine_handle_t compute = groups[ZES_ENGINE_GROUP_COMPUTE_ALL];
  zes_engine_handle_t copy = groups[ZES_ENGINE_GROUP_COPY_ALL];

  ze_kernel_handle_t spin = nullptr;
  ze_kernel_desc_t kd{ZE_STRUCTURE_TYPE_KERNEL_DESC, nullptr, 0, "spin_ns"};
  ZE_OK(zeKernelCreate(module_, &kd, &spin));
  const uint64_t ns = 2'000'000;  // per work-group
  ZE_OK(zeKernelSetArgumentValue(spin, 0, sizeof ns, &ns));

  const zes_engine_stats_t all0 = activity(all), compute0 = activity(compute), copy0 = activity(copy);
  runOn(0, [&](ze_command_list_handle_t l) {
    const ze_group_count_t groups{3, 1, 1};
    ASSERT_EQ(ZE_RESULT_SUCCESS, zeCommandListAppendLaunchKernel(l, spin, &groups, nullptr, 0, nullptr));
  });
  const zes_engine_stats_t all1 = activity(all), compute1 = activity(compute), copy1 = activity(copy);
  const uint64_t computeUs = compute1.activeTime - compute0.activeTime;
  EXPECT_GE(computeUs, 3 * ns / 1000 - 1);
  EXPECT_LE(computeUs, compute1.timestamp - compute0.timestamp + 1);  // both rounded down to microseconds
  EXPECT_EQ(copy0.activeTime, copy1.activeTime);  // no copy engine ran anything
  EXPECT_GE(all1.activeTime - all0.activeTime + 1, computeUs);
  EXPECT_GE(compute1.timestamp, compute0.timestamp);

  const size_t bytes = 64u << 20;
  ze_host_mem_alloc_desc_t h{ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, nullptr, 0};
  void* src = nullptr;
  void* dst = nullptr;
  ZE_OK(zeMemAllocHost(context_, &h, bytes, 0, &src));
  ZE_OK(zeMemAllocHost(context_, &h, bytes, 0, &dst));
  std::memset(src, 7, bytes);
  runOn(1, [&](ze_command_list_handle_t l) {
    ASSERT_EQ(ZE_RESULT_SUCCESS, zeCommandListAppendMemoryCopy(l, dst, src, bytes, nullptr, 0, nullptr));
  });
  const zes_engine_stats_t all2 = activity(all), compute2 = activity(compute), copy2 = activity(copy);
  EXPECT_EQ(0, std::memcmp(src, dst, bytes));
  EXPECT_GT(copy2.activeTime, copy1.activeTime);  // a 64 MiB copy takes more than a microsecond
  EXPECT_EQ(compute1.activeTime, compute2.activeTime);
  EXPECT_GE(all2.activeTime - all1.activeTime + 1, copy2.activeTime - copy1.activeTime);
  EXPECT_LE(copy2.activeTime - copy1.activeTime, copy2.timestamp - copy1.timestamp + 1);

  ZE_OK(zeMemFree(context_, src));
  ZE_OK(zeMemFree(context_, dst));
  ZE_OK(zeKernelDestroy(spin));
}

TEST_F(SimZeSysman, FrequencyIsTheClocksConstantRate) {
  uint32_t count = 0;
  ZE_OK(zesDeviceEnumFrequencyDomains(sysman(), &count, nullptr));
  ASSERT_EQ(1u, count);
  zes_freq_handle_t f = nullptr;
  ZE_OK(zesDeviceEnumFrequencyDomains(sysman(), &count, &f));
  auto p = typed<zes_freq_properties_t>(ZES_STRUCTURE_TYPE_FREQ_PROPERTIES);
  ZE_OK(zesFrequencyGetProperties(f, &p));
  EXPECT_EQ(ZES_FREQ_DOMAIN_GPU, p.type);
  EXPECT_FALSE(p.canControl);
  EXPECT_DOUBLE_EQ(kClockMHz, p.min);
  EXPECT_DOUBLE_EQ(kClockMHz, p.max);
  auto s = typed<zes_freq_state_t>(ZES_STRUCTURE_TYPE_FREQ_STATE);
  ZE_OK(zesFrequencyGetState(f, &s));
  EXPECT_DOUBLE_EQ(kClockMHz, s.actual);
  EXPECT_DOUBLE_EQ(kClockMHz, s.request);
  EXPECT_LT(s.currentVoltage, 0.0);  // unknown
  EXPECT_EQ(0u, s.throttleReasons);
  zes_freq_range_t r{};
  ZE_OK(zesFrequencyGetRange(f, &r));
  EXPECT_DOUBLE_EQ(kClockMHz, r.min);
  EXPECT_DOUBLE_EQ(kClockMHz, r.max);
  count = 0;
  ZE_OK(zesFrequencyGetAvailableClocks(f, &count, nullptr));
  ASSERT_EQ(1u, count);
  double clock = 0;
  ZE_OK(zesFrequencyGetAvailableClocks(f, &count, &clock));
  EXPECT_DOUBLE_EQ(kClockMHz, clock);
  EXPECT_EQ(ZE_RESULT_ERROR_INVALID_NULL_POINTER, zesFrequencyGetState(f, nullptr));
}

}  // namespace
