// zeInit and the driver-level queries.
#include "api.h"
#include "clock.h"
#include "metrics.h"
#include "objects.h"
#include "sysman.h"

#include <cstring>
#include <mutex>
#include <vector>

namespace sim {

namespace {

std::once_flag g_createOnce;
Driver* g_driver = nullptr;
Device* g_device = nullptr;

// Extensions this driver implements; their functions are reachable through
// the DDI tables and zeDriverGetExtensionFunctionAddress.
struct Extension {
  const char* name;
  uint32_t version;
};
constexpr Extension kExtensions[] = {
    {ZE_GLOBAL_OFFSET_EXP_NAME, ZE_GLOBAL_OFFSET_EXP_VERSION_CURRENT},
    {ZE_EVENT_QUERY_TIMESTAMPS_EXP_NAME, ZE_EVENT_QUERY_TIMESTAMPS_EXP_VERSION_CURRENT},
    {ZE_KERNEL_SCHEDULING_HINTS_EXP_NAME, ZE_SCHEDULING_HINTS_EXP_VERSION_CURRENT},
#ifdef GTAP_SIM_HAS_COUNTER_BASED_EVENTS
    {ZE_EVENT_POOL_COUNTER_BASED_EXP_NAME, ZE_EVENT_POOL_COUNTER_BASED_EXP_VERSION_CURRENT},
#endif
};

struct NamedFunction {
  const char* name;
  void* address;
};
#define GTAP_SIM_NAMED(fn) {#fn, reinterpret_cast<void*>(GTAP_SIM_ENTRY(fn))},
const NamedFunction kFunctions[] = {GTAP_SIM_ZE_FUNCTIONS(GTAP_SIM_NAMED)};
#undef GTAP_SIM_NAMED

// Vendor extension functions, reachable only by name through
// zeDriverGetExtensionFunctionAddress (no header declares them), as Intel's
// driver offers its zex* functions: host memory the program imports for
// faster copies, the base of an imported range, and a kernel's code address
// (zexKernelGetBaseAddress, kernel.cpp).
struct Imported {
  uintptr_t base;
  size_t size;
};
std::mutex g_importMutex;
std::vector<Imported> g_imported;

ze_result_t zexDriverImportExternalPointer(ze_driver_handle_t hDriver, void* ptr, size_t size) {
  SIM_LOOKUP(driver, Driver, hDriver);
  SIM_NOT_NULL(ptr);
  if (size == 0) return ZE_RESULT_ERROR_INVALID_SIZE;
  std::lock_guard<std::mutex> lock(g_importMutex);
  g_imported.push_back({reinterpret_cast<uintptr_t>(ptr), size});
  return ZE_RESULT_SUCCESS;
}

ze_result_t zexDriverReleaseImportedPointer(ze_driver_handle_t hDriver, void* ptr) {
  SIM_LOOKUP(driver, Driver, hDriver);
  SIM_NOT_NULL(ptr);
  std::lock_guard<std::mutex> lock(g_importMutex);
  for (auto it = g_imported.begin(); it != g_imported.end(); ++it) {
    if (it->base == reinterpret_cast<uintptr_t>(ptr)) {
      g_imported.erase(it);
      return ZE_RESULT_SUCCESS;
    }
  }
  return ZE_RESULT_ERROR_INVALID_ARGUMENT;
}

// The start of the imported range holding ptr, or null when none does.
ze_result_t zexDriverGetHostPointerBaseAddress(ze_driver_handle_t hDriver, void* ptr, void** baseAddress) {
  SIM_LOOKUP(driver, Driver, hDriver);
  SIM_NOT_NULL(ptr);
  SIM_NOT_NULL(baseAddress);
  std::lock_guard<std::mutex> lock(g_importMutex);
  *baseAddress = nullptr;
  for (const auto& r : g_imported)
    if (reinterpret_cast<uintptr_t>(ptr) - r.base < r.size) *baseAddress = reinterpret_cast<void*>(r.base);
  return ZE_RESULT_SUCCESS;
}

const NamedFunction kVendorFunctions[] = {
    {"zexDriverImportExternalPointer", reinterpret_cast<void*>(GTAP_SIM_ENTRY(zexDriverImportExternalPointer))},
    {"zexDriverReleaseImportedPointer", reinterpret_cast<void*>(GTAP_SIM_ENTRY(zexDriverReleaseImportedPointer))},
    {"zexDriverGetHostPointerBaseAddress",
     reinterpret_cast<void*>(GTAP_SIM_ENTRY(zexDriverGetHostPointerBaseAddress))},
    {"zexKernelGetBaseAddress", reinterpret_cast<void*>(GTAP_SIM_ENTRY(zexKernelGetBaseAddress))},
};

// Fixed identities, so captures of the simulated device are reproducible.
constexpr uint8_t kDriverUuid[ZE_MAX_DRIVER_UUID_SIZE] = {'g', 't', 'a', 'p', '-', 's', 'i', 'm',
                                                          '-', 'z', 'e', '-', 'd', 'r', 'v', '1'};
constexpr uint32_t kDriverVersion = 0x00010000;  // 1.0, opaque to programs

}  // namespace

void createDriverAndDevice() {
  std::call_once(g_createOnce, [] {
    auto driver = std::make_shared<Driver>();
    auto device = std::make_shared<Device>();
    registerObject(driver);
    registerObject(device);
    createMetricGroups(*device);
    createSysmanObjects(*device);
    g_driver = driver.get();
    g_device = device.get();
  });
}

Driver* theDriver() { return g_driver; }
Device* theDevice() { return g_device; }

ze_result_t zeInit(ze_init_flags_t flags) {
  if (flags > (ZE_INIT_FLAG_GPU_ONLY | ZE_INIT_FLAG_VPU_ONLY)) return ZE_RESULT_ERROR_INVALID_ENUMERATION;
  // A GPU driver has nothing to offer a program that asked for VPUs only.
  if (flags == ZE_INIT_FLAG_VPU_ONLY) return ZE_RESULT_ERROR_UNINITIALIZED;
  clock::start();
  installForkHandlers();
  createDriverAndDevice();
  g_initialized.store(true, std::memory_order_release);
  return ZE_RESULT_SUCCESS;
}

#ifdef GTAP_SIM_ZE_HAVE_zeInitDrivers
// zeInit and zeDriverGet in one call, for the driver types asked for: a GPU
// driver answers no driver (and succeeds) when GPUs were not asked for.
ze_result_t zeInitDrivers(uint32_t* pCount, ze_driver_handle_t* phDrivers, ze_init_driver_type_desc_t* desc) {
  SIM_NOT_NULL(pCount);
  SIM_NOT_NULL(desc);
  constexpr uint32_t kKnownTypes = ZE_INIT_DRIVER_TYPE_FLAG_GPU | ZE_INIT_DRIVER_TYPE_FLAG_NPU;
  if (desc->flags == 0 || (desc->flags & ~kKnownTypes) != 0) return ZE_RESULT_ERROR_INVALID_ENUMERATION;
  if (!(desc->flags & ZE_INIT_DRIVER_TYPE_FLAG_GPU)) {
    *pCount = 0;
    return ZE_RESULT_SUCCESS;
  }
  if (ze_result_t r = sim::zeInit(0); r != ZE_RESULT_SUCCESS) return r;
  return sim::zeDriverGet(pCount, phDrivers);
}
#endif

ze_result_t zeDriverGet(uint32_t* pCount, ze_driver_handle_t* phDrivers) {
  SIM_CHECK(g_initialized.load(std::memory_order_acquire), ZE_RESULT_ERROR_UNINITIALIZED);
  SIM_NOT_NULL(pCount);
  countQuery(1, pCount, phDrivers != nullptr,
             [&](uint32_t i) { phDrivers[i] = reinterpret_cast<ze_driver_handle_t>(static_cast<Object*>(g_driver)); });
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeDriverGetApiVersion(ze_driver_handle_t hDriver, ze_api_version_t* version) {
  SIM_LOOKUP(driver, Driver, hDriver);
  SIM_NOT_NULL(version);
  *version = ZE_API_VERSION_CURRENT;
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeDriverGetProperties(ze_driver_handle_t hDriver, ze_driver_properties_t* props) {
  SIM_LOOKUP(driver, Driver, hDriver);
  SIM_NOT_NULL(props);
  std::memcpy(props->uuid.id, kDriverUuid, sizeof kDriverUuid);
  props->driverVersion = kDriverVersion;
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeDriverGetIpcProperties(ze_driver_handle_t hDriver, ze_driver_ipc_properties_t* props) {
  SIM_LOOKUP(driver, Driver, hDriver);
  SIM_NOT_NULL(props);
  props->flags = 0;  // no IPC: everything lives in this process
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeDriverGetExtensionProperties(ze_driver_handle_t hDriver, uint32_t* pCount,
                                           ze_driver_extension_properties_t* props) {
  SIM_LOOKUP(driver, Driver, hDriver);
  SIM_NOT_NULL(pCount);
  constexpr uint32_t n = sizeof kExtensions / sizeof kExtensions[0];
  countQuery(n, pCount, props != nullptr, [&](uint32_t i) {
    std::memset(props[i].name, 0, sizeof props[i].name);
    std::strncpy(props[i].name, kExtensions[i].name, sizeof props[i].name - 1);
    props[i].version = kExtensions[i].version;
  });
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeDriverGetExtensionFunctionAddress(ze_driver_handle_t hDriver, const char* name,
                                                void** ppFunctionAddress) {
  SIM_LOOKUP(driver, Driver, hDriver);
  SIM_NOT_NULL(name);
  SIM_NOT_NULL(ppFunctionAddress);
  for (const auto& f : kFunctions) {
    if (std::strcmp(f.name, name) == 0) {
      *ppFunctionAddress = f.address;
      return ZE_RESULT_SUCCESS;
    }
  }
  for (const auto& f : kVendorFunctions) {
    if (std::strcmp(f.name, name) == 0) {
      *ppFunctionAddress = f.address;
      return ZE_RESULT_SUCCESS;
    }
  }
  *ppFunctionAddress = nullptr;
  return ZE_RESULT_ERROR_INVALID_ARGUMENT;
}

}  // namespace sim
