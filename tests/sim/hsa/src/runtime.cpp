// hsa_init / hsa_shut_down reference counting, system information.
#include "runtime.h"

#include "api.h"
#include "clock.h"
#include "memory.h"
#include "signal.h"
#include "tables.h"
#include "tools.h"

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace sim_hsa {

namespace {

// Recursive: a tool may call hsa_init from its OnLoad (it then owes a
// matching hsa_shut_down), as it can with ROCr. Never destroyed, so calls
// during process exit still find it.
std::recursive_mutex& bootLock() {
  static auto* lock = new std::recursive_mutex;
  return *lock;
}

std::atomic<int32_t> g_references{0};

}  // namespace

bool isOpen() { return g_references.load(std::memory_order_acquire) > 0; }

void warn(const char* format, ...) {
  char text[512];
  va_list args;
  va_start(args, format);
  std::vsnprintf(text, sizeof text, format, args);
  va_end(args);
  std::fprintf(stderr, "gtap simulated HSA runtime: %s\n", text);
}

// GTAP_SIM_HSA_FAIL_INIT set (to anything but "0" or nothing): hsa_init
// fails as ROCr's does on a machine without a usable GPU (Debian's 5.2 without
// /dev/kfd: HSA_STATUS_ERROR_OUT_OF_RESOURCES), before anything starts and
// without loading tools. Read at every hsa_init.
static bool initMustFail() {
  const char* v = std::getenv("GTAP_SIM_HSA_FAIL_INIT");
  return v != nullptr && *v != '\0' && std::strcmp(v, "0") != 0;
}

hsa_status_t hsa_init() {
  std::lock_guard<std::recursive_mutex> lock(bootLock());
  int32_t references = g_references.load(std::memory_order_relaxed);
  SIM_CHECK(references != INT32_MAX, HSA_STATUS_ERROR_REFCOUNT_OVERFLOW);
  SIM_CHECK(references != 0 || !initMustFail(), HSA_STATUS_ERROR_OUT_OF_RESOURCES);
  g_references.store(references + 1, std::memory_order_release);
  if (references == 0) {
    clock::start();
    // Last, as ROCr does: tools see a runtime that is fully up.
    loadTools(&liveTables().root);
  }
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_shut_down() {
  std::lock_guard<std::recursive_mutex> lock(bootLock());
  int32_t references = g_references.load(std::memory_order_relaxed);
  SIM_CHECK(references > 0, HSA_STATUS_ERROR_NOT_INITIALIZED);
  if (references == 1) {
    // Tools are told first, while the runtime still answers them; then their
    // entries are dropped so nothing calls into a library about to go away.
    unloadTools();
    resetTables();
    destroyAllQueues();
    stopCopyEngine();
    stopAsyncEvents();
    destroyAllCodeObjects();
    deleteAllSignals();
    releaseAllMemory();
    closeTools();
  }
  g_references.store(references - 1, std::memory_order_release);
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_system_get_info(hsa_system_info_t attribute, void* value) {
  SIM_OPEN();
  SIM_NOT_NULL(value);
  switch (uint32_t(attribute)) {
    case HSA_SYSTEM_INFO_VERSION_MAJOR:
      *static_cast<uint16_t*>(value) = 1;
      break;
    case HSA_SYSTEM_INFO_VERSION_MINOR:
      *static_cast<uint16_t*>(value) = 1;
      break;
    case HSA_SYSTEM_INFO_TIMESTAMP:
      *static_cast<uint64_t*>(value) = clock::systemNs();
      break;
    case HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY:
      *static_cast<uint64_t*>(value) = clock::kSystemTicksPerSecond;
      break;
    case HSA_SYSTEM_INFO_SIGNAL_MAX_WAIT:
      *static_cast<uint64_t*>(value) = UINT64_MAX;
      break;
    case HSA_SYSTEM_INFO_ENDIANNESS:
      *static_cast<hsa_endianness_t*>(value) = HSA_ENDIANNESS_LITTLE;
      break;
    case HSA_SYSTEM_INFO_MACHINE_MODEL:
      *static_cast<hsa_machine_model_t*>(value) = HSA_MACHINE_MODEL_LARGE;
      break;
    case HSA_SYSTEM_INFO_EXTENSIONS: {
      auto* mask = static_cast<uint8_t*>(value);
      std::memset(mask, 0, 128);
      mask[HSA_EXTENSION_AMD_PROFILER / 8] |= uint8_t(1u << (HSA_EXTENSION_AMD_PROFILER % 8));
      mask[HSA_EXTENSION_AMD_AQLPROFILE / 8] |= uint8_t(1u << (HSA_EXTENSION_AMD_AQLPROFILE % 8));
      break;
    }
    case HSA_AMD_SYSTEM_INFO_BUILD_VERSION:
      *static_cast<const char**>(value) = "gtap simulated HSA runtime (ROCr 5.2 interface)";
      break;
    case HSA_AMD_SYSTEM_INFO_SVM_SUPPORTED:
    case HSA_AMD_SYSTEM_INFO_SVM_ACCESSIBLE_BY_DEFAULT:
      *static_cast<bool*>(value) = false;
      break;
    default:
      return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
  return HSA_STATUS_SUCCESS;
}

// The simulated device never faults, so there is nothing to report; accepting
// the handler keeps programs that install one working.
hsa_status_t hsa_amd_register_system_event_handler(hsa_amd_system_event_callback_t callback, void* data) {
  SIM_OPEN();
  SIM_NOT_NULL(callback);
  return HSA_STATUS_SUCCESS;
}

}  // namespace sim_hsa
