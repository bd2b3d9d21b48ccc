// libgtap.so's OnLoad against an HSA API table shorter than gtap's headers
// (an older runtime): entries inside the sizes the table declares are
// wrapped and still reach the runtime's functions; entries past them are
// neither read nor written. The "runtime" here is this test's own functions
// in a table laid out as hsa_api_trace.h declares it.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <hsa/hsa_api_trace.h>

#include <cstddef>
#include <cstring>

namespace {

int g_getInfoCalls = 0;
int g_initCalls = 0;

hsa_status_t fakeInit() {
  ++g_initCalls;
  return HSA_STATUS_SUCCESS;
}
hsa_status_t fakeShutDown() { return HSA_STATUS_SUCCESS; }
hsa_status_t fakeGetInfo(hsa_system_info_t, void* value) {
  ++g_getInfoCalls;
  if (value) *static_cast<uint64_t*>(value) = 1000000000;
  return HSA_STATUS_SUCCESS;
}

using OnLoadFn = bool (*)(HsaApiTable*, uint64_t, uint64_t, const char* const*);

TEST(HsaToolTable, ShortTablesAreWrappedOnlyAsFarAsTheyGo) {
  void* gtap = dlopen(GTAP_TEST_LIBGTAP, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(gtap, nullptr) << dlerror();
  auto onLoad = reinterpret_cast<OnLoadFn>(dlsym(gtap, "OnLoad"));
  ASSERT_NE(onLoad, nullptr);
  ASSERT_NE(dlsym(gtap, "OnUnload"), nullptr);
  auto* priority = static_cast<const uint32_t*>(dlsym(gtap, "HSA_AMD_TOOL_PRIORITY"));
  ASSERT_NE(priority, nullptr);

  // A core table that ends after hsa_system_get_info; every later slot holds
  // a marker that must survive untouched. An AMD extension table with no
  // entries at all.
  CoreApiTable core;
  std::memset(&core, 0xab, sizeof core);
  core.version = {1, static_cast<uint32_t>(offsetof(CoreApiTable, hsa_system_extension_supported_fn)), 0, 0};
  core.hsa_init_fn = &fakeInit;
  core.hsa_shut_down_fn = &fakeShutDown;
  core.hsa_system_get_info_fn = &fakeGetInfo;
  CoreApiTable marker;
  std::memset(&marker, 0xab, sizeof marker);
  AmdExtTable amd;
  std::memset(&amd, 0xcd, sizeof amd);
  amd.version = {1, static_cast<uint32_t>(sizeof(ApiTableVersion)), 0, 0};
  AmdExtTable amdMarker;
  std::memset(&amdMarker, 0xcd, sizeof amdMarker);
  amdMarker.version = amd.version;
  HsaApiTable root{};
  root.version = {1, static_cast<uint32_t>(sizeof(HsaApiTable)), 0, 0};
  root.core_ = &core;
  root.amd_ext_ = &amd;

  ASSERT_TRUE(onLoad(&root, 1, 0, nullptr));
  // Wrapped: the slots no longer hold the runtime's functions...
  EXPECT_NE(core.hsa_init_fn, &fakeInit);
  EXPECT_NE(core.hsa_system_get_info_fn, &fakeGetInfo);
  // ...but calls through them still reach them.
  int before = g_getInfoCalls;
  uint64_t frequency = 0;
  EXPECT_EQ(core.hsa_system_get_info_fn(HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY, &frequency), HSA_STATUS_SUCCESS);
  EXPECT_EQ(frequency, 1000000000u);
  EXPECT_EQ(g_getInfoCalls, before + 1);
  EXPECT_EQ(core.hsa_init_fn(), HSA_STATUS_SUCCESS);
  EXPECT_EQ(g_initCalls, 1);
  // Past the declared size: not a byte changed.
  size_t tail = offsetof(CoreApiTable, hsa_system_extension_supported_fn);
  EXPECT_EQ(std::memcmp(reinterpret_cast<char*>(&core) + tail, reinterpret_cast<char*>(&marker) + tail,
                        sizeof core - tail),
            0);
  EXPECT_EQ(std::memcmp(&amd, &amdMarker, sizeof amd), 0);

  // A table handed over twice is not wrapped twice (the wrapper never
  // becomes its own "runtime" function).
  auto wrapped = core.hsa_system_get_info_fn;
  ASSERT_TRUE(onLoad(&root, 1, 0, nullptr));
  EXPECT_EQ(core.hsa_system_get_info_fn, wrapped);
  before = g_getInfoCalls;
  EXPECT_EQ(core.hsa_system_get_info_fn(HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY, &frequency), HSA_STATUS_SUCCESS);
  EXPECT_EQ(g_getInfoCalls, before + 1);
}

TEST(HsaToolTable, UnknownTableVersionIsLeftAlone) {
  void* gtap = dlopen(GTAP_TEST_LIBGTAP, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(gtap, nullptr) << dlerror();
  auto onLoad = reinterpret_cast<OnLoadFn>(dlsym(gtap, "OnLoad"));
  ASSERT_NE(onLoad, nullptr);
  CoreApiTable core;
  std::memset(&core, 0, sizeof core);
  core.version = {1, static_cast<uint32_t>(sizeof core), 0, 0};
  core.hsa_system_get_info_fn = &fakeGetInfo;
  HsaApiTable root{};
  root.version = {2, static_cast<uint32_t>(sizeof(HsaApiTable)), 0, 0};  // a major version gtap does not know
  root.core_ = &core;
  EXPECT_TRUE(onLoad(&root, 2, 0, nullptr));
  EXPECT_EQ(core.hsa_system_get_info_fn, &fakeGetInfo);
}

}  // namespace
