// What the simulated driver's tests of tools functions share: the driver
// loaded through the loader, one context and one module of kernels.
#pragma once

#include <gtest/gtest.h>
#include <level_zero/ze_api.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <vector>

namespace simtest {

// The test runs behind the loader's intercept layer (its .intercept variant).
inline bool interceptMode() {
  const char* v = std::getenv("ZE_ENABLE_LOADER_INTERCEPT");
  return v != nullptr && v[0] == '1' && v[1] == '\0';
}

inline std::vector<uint8_t> readFile(const char* path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

template <class T, class S>
T typed(S stype) {
  T value{};
  value.stype = stype;
  return value;
}

struct SimZeSession {
  ze_driver_handle_t driver = nullptr;
  ze_device_handle_t device = nullptr;
  ze_context_handle_t context = nullptr;
  ze_module_handle_t module = nullptr;
  std::vector<uint8_t>* moduleBytes = nullptr;  // kept for the module's life
};

// zeInit on the simulated driver (GTAP_SIM_ZE_DRIVER_PATH), its first device,
// a context and the module at `modulePath`. Fails the calling test on error.
inline void openSimZe(const char* driverPath, const char* modulePath, SimZeSession& s) {
  setenv("ZE_ENABLE_ALT_DRIVERS", driverPath, 0);
  ASSERT_EQ(ZE_RESULT_SUCCESS, zeInit(0));
  uint32_t n = 1;
  ASSERT_EQ(ZE_RESULT_SUCCESS, zeDriverGet(&n, &s.driver));
  n = 1;
  ASSERT_EQ(ZE_RESULT_SUCCESS, zeDeviceGet(s.driver, &n, &s.device));
  ze_context_desc_t cdesc{ZE_STRUCTURE_TYPE_CONTEXT_DESC, nullptr, 0};
  ASSERT_EQ(ZE_RESULT_SUCCESS, zeContextCreate(s.driver, &cdesc, &s.context));
  s.moduleBytes = new std::vector<uint8_t>(readFile(modulePath));
  ASSERT_FALSE(s.moduleBytes->empty());
  ze_module_desc_t mdesc{ZE_STRUCTURE_TYPE_MODULE_DESC, nullptr, ZE_MODULE_FORMAT_NATIVE, s.moduleBytes->size(),
                         s.moduleBytes->data(), nullptr, nullptr};
  ASSERT_EQ(ZE_RESULT_SUCCESS, zeModuleCreate(s.context, s.device, &mdesc, &s.module, nullptr));
}

// What openSimZe made, destroyed (each pointer left null); for a suite's
// TearDownTestSuite.
inline void closeSimZe(ze_module_handle_t& module, ze_context_handle_t& context,
                       std::vector<uint8_t>*& moduleBytes) {
  if (module) {
    EXPECT_EQ(ZE_RESULT_SUCCESS, zeModuleDestroy(module));
  }
  if (context) {
    EXPECT_EQ(ZE_RESULT_SUCCESS, zeContextDestroy(context));
  }
  module = nullptr;
  context = nullptr;
  delete moduleBytes;
  moduleBytes = nullptr;
}

}  // namespace simtest
