// The simulated driver's dispatch tables (generated from the headers and
// implemented_functions.txt): every function the driver implements reaches
// the loader's tables, everything else is null, and a caller asking for an
// older API version gets nothing written past what its version has.
#include <ze_api.h>
#include <ze_ddi.h>
#include <zes_ddi.h>
#include <zet_ddi.h>

#include "sim_ze_functions.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace {

constexpr unsigned char kUntouched = 0xab;

// One entry of one table, read by calling the table's getter from `library`
// on a table first filled with `fill` bytes.
struct Entry {
  const char* getter;
  const char* function;
  ze_result_t (*read)(void* getter, ze_api_version_t version, unsigned char fill, uintptr_t& value);
};

#define GTAP_TEST_ENTRY(getterName, Table, field, fn)                                                         \
  {#getterName, #fn, [](void* getter, ze_api_version_t version, unsigned char fill, uintptr_t& value) {      \
     Table table;                                                                                            \
     std::memset(&table, fill, sizeof table);                                                                \
     ze_result_t r = reinterpret_cast<ze_result_t(ZE_APICALL*)(ze_api_version_t, Table*)>(getter)(version, &table); \
     static_assert(sizeof table.field == sizeof value);                                                      \
     std::memcpy(&value, &table.field, sizeof value);                                                        \
     return r;                                                                                               \
   }},
const Entry kEntries[] = {GTAP_SIM_ZE_TABLE_ENTRIES(GTAP_TEST_ENTRY)};
#undef GTAP_TEST_ENTRY

#define GTAP_TEST_NAME(fn) #fn,
const std::set<std::string> kImplemented = {GTAP_SIM_ZE_FUNCTIONS(GTAP_TEST_NAME)
                                                GTAP_SIM_ZE_OPTIONAL_FUNCTIONS(GTAP_TEST_NAME)};
#undef GTAP_TEST_NAME

uintptr_t untouchedValue() {
  uintptr_t v;
  std::memset(&v, kUntouched, sizeof v);
  return v;
}

bool interceptMode() {
  const char* v = std::getenv("ZE_ENABLE_LOADER_INTERCEPT");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

void* openDriver() {
  void* driver = dlopen(GTAP_SIM_ZE_DRIVER_PATH, RTLD_NOW | RTLD_LOCAL);
  EXPECT_NE(nullptr, driver) << dlerror();
  return driver;
}

TEST(SimZeTables, EveryImplementedFunctionReachesTheLoadersTables) {
  setenv("ZE_ENABLE_ALT_DRIVERS", GTAP_SIM_ZE_DRIVER_PATH, 0);
  ASSERT_EQ(ZE_RESULT_SUCCESS, zeInit(0));
  void* loader = dlopen("libze_loader.so.1", RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(nullptr, loader) << dlerror();
  std::map<std::string, int> filled;
  for (const Entry& e : kEntries) {
    void* getter = dlsym(loader, e.getter);
    ASSERT_NE(nullptr, getter) << "the loader has no " << e.getter;
    uintptr_t value = 0;
    ASSERT_EQ(ZE_RESULT_SUCCESS, e.read(getter, ZE_API_VERSION_CURRENT, 0, value)) << e.getter;
    if (kImplemented.count(e.function)) {
      EXPECT_NE(0u, value) << e.function << " is implemented but null in the loader's " << e.getter << " table";
      ++filled[e.function];
    } else if (!interceptMode()) {
      // One driver and no intercept layer: the loader hands out the driver's
      // own table, so what the driver does not implement stays null.
      EXPECT_EQ(0u, value) << e.function << " is not implemented but set in the loader's " << e.getter << " table";
    }
  }
  for (const auto& name : kImplemented)
    EXPECT_EQ(1, filled[name]) << name << " is implemented but in no table of these headers";
}

TEST(SimZeTables, DriverFillsWhatTheCallersVersionHas) {
  void* driver = openDriver();
  ASSERT_NE(nullptr, driver);
  const uintptr_t untouched = untouchedValue();
  std::map<std::string, int> filled;
  for (const Entry& e : kEntries) {
    void* getter = dlsym(driver, e.getter);
    ASSERT_NE(nullptr, getter) << "the driver does not export " << e.getter;
    uintptr_t value = 0;
    // A caller as new as the headers: every entry is the driver's function or null.
    ASSERT_EQ(ZE_RESULT_SUCCESS, e.read(getter, ZE_API_VERSION_CURRENT, kUntouched, value)) << e.getter;
    if (kImplemented.count(e.function)) {
      EXPECT_TRUE(value != 0 && value != untouched) << e.function << " not filled by " << e.getter;
      ++filled[e.function];
    } else {
      EXPECT_EQ(0u, value) << e.function << " is not implemented but " << e.getter << " did not clear it";
    }
  }
  for (const auto& name : kImplemented) EXPECT_EQ(1, filled[name]) << name;
}

TEST(SimZeTables, OlderCallersTablesAreNotWrittenPastTheirVersion) {
  void* driver = openDriver();
  ASSERT_NE(nullptr, driver);
  auto get = reinterpret_cast<decltype(&zeGetDeviceProcAddrTable)>(dlsym(driver, "zeGetDeviceProcAddrTable"));
  ASSERT_NE(nullptr, get);
  ze_device_dditable_t table;
  std::memset(&table, kUntouched, sizeof table);
  ASSERT_EQ(ZE_RESULT_SUCCESS, get(ZE_API_VERSION_1_0, &table));
  EXPECT_NE(nullptr, reinterpret_cast<void*>(table.pfnGet));
  EXPECT_NE(untouchedValue(), reinterpret_cast<uintptr_t>(table.pfnGet));
  // zeDeviceGetGlobalTimestamps came with API 1.1: a 1.0 table has no room for it.
  EXPECT_EQ(untouchedValue(), reinterpret_cast<uintptr_t>(table.pfnGetGlobalTimestamps));
  EXPECT_EQ(untouchedValue(), reinterpret_cast<uintptr_t>(table.pfnPciGetPropertiesExt));

  std::memset(&table, kUntouched, sizeof table);
  ASSERT_EQ(ZE_RESULT_SUCCESS, get(ZE_API_VERSION_1_1, &table));
  EXPECT_NE(untouchedValue(), reinterpret_cast<uintptr_t>(table.pfnGetGlobalTimestamps));
  EXPECT_NE(nullptr, reinterpret_cast<void*>(table.pfnGetGlobalTimestamps));

  EXPECT_EQ(ZE_RESULT_ERROR_UNSUPPORTED_VERSION, get(ze_api_version_t(ZE_MAKE_VERSION(2, 0)), &table));
  EXPECT_EQ(ZE_RESULT_ERROR_INVALID_NULL_POINTER, get(ZE_API_VERSION_CURRENT, nullptr));
}

}  // namespace
