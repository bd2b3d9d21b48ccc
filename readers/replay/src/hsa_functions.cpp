#include "hsa_functions.h"

#include <dlfcn.h>

#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>

namespace gtap::replay {

namespace {

const char* knownStatusName(hsa_status_t s) {
  switch (static_cast<int>(s)) {
#define GTAP_STATUS(name) \
  case name: return #name;
    GTAP_STATUS(HSA_STATUS_SUCCESS)
    GTAP_STATUS(HSA_STATUS_INFO_BREAK)
    GTAP_STATUS(HSA_STATUS_ERROR)
    GTAP_STATUS(HSA_STATUS_ERROR_INVALID_ARGUMENT)
    GTAP_STATUS(HSA_STATUS_ERROR_INVALID_QUEUE_CREATION)
    GTAP_STATUS(HSA_STATUS_ERROR_INVALID_ALLOCATION)
    GTAP_STATUS(HSA_STATUS_ERROR_INVALID_AGENT)
    GTAP_STATUS(HSA_STATUS_ERROR_INVALID_REGION)
    GTAP_STATUS(HSA_STATUS_ERROR_INVALID_SIGNAL)
    GTAP_STATUS(HSA_STATUS_ERROR_INVALID_QUEUE)
    GTAP_STATUS(HSA_STATUS_ERROR_OUT_OF_RESOURCES)
    GTAP_STATUS(HSA_STATUS_ERROR_INVALID_PACKET_FORMAT)
    GTAP_STATUS(HSA_STATUS_ERROR_RESOURCE_FREE)
    GTAP_STATUS(HSA_STATUS_ERROR_NOT_INITIALIZED)
    GTAP_STATUS(HSA_STATUS_ERROR_REFCOUNT_OVERFLOW)
    GTAP_STATUS(HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS)
    GTAP_STATUS(HSA_STATUS_ERROR_INVALID_INDEX)
    GTAP_STATUS(HSA_STATUS_ERROR_INVALID_ISA)
    GTAP_STATUS(HSA_STATUS_ERROR_INVALID_ISA_NAME)
    GTAP_STATUS(HSA_STATUS_ERROR_INVALID_CODE_OBJECT)
    GTAP_STATUS(HSA_STATUS_ERROR_INVALID_EXECUTABLE)
    GTAP_STATUS(HSA_STATUS_ERROR_FROZEN_EXECUTABLE)
    GTAP_STATUS(HSA_STATUS_ERROR_INVALID_SYMBOL_NAME)
    GTAP_STATUS(HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED)
    GTAP_STATUS(HSA_STATUS_ERROR_VARIABLE_UNDEFINED)
    GTAP_STATUS(HSA_STATUS_ERROR_EXCEPTION)
    GTAP_STATUS(HSA_STATUS_ERROR_INVALID_CODE_SYMBOL)
    GTAP_STATUS(HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL)
    GTAP_STATUS(HSA_STATUS_ERROR_INVALID_FILE)
    GTAP_STATUS(HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER)
    GTAP_STATUS(HSA_STATUS_ERROR_INVALID_CACHE)
    GTAP_STATUS(HSA_STATUS_ERROR_INVALID_WAVEFRONT)
    GTAP_STATUS(HSA_STATUS_ERROR_INVALID_SIGNAL_GROUP)
    GTAP_STATUS(HSA_STATUS_ERROR_INVALID_RUNTIME_STATE)
    GTAP_STATUS(HSA_STATUS_ERROR_FATAL)
    GTAP_STATUS(HSA_STATUS_ERROR_INVALID_MEMORY_POOL)
    GTAP_STATUS(HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION)
    GTAP_STATUS(HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION)
    GTAP_STATUS(HSA_STATUS_ERROR_MEMORY_FAULT)
#undef GTAP_STATUS
    default: return nullptr;
  }
}

HsaFunctions load(const std::string& path) {
  // RTLD_LOCAL: the process's view of global symbols stays as it was.
  void* runtime = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!runtime) throw std::runtime_error("cannot open the HSA runtime " + path + ": " + dlerror());
  HsaFunctions f;
#define GTAP_REPLAY_HSA_LOOKUP(name)                                                 \
  f.name = reinterpret_cast<decltype(f.name)>(dlsym(runtime, #name));                \
  if (!f.name) throw std::runtime_error("the HSA runtime " + path + " has no " #name);
  GTAP_REPLAY_HSA_FUNCTIONS(GTAP_REPLAY_HSA_LOOKUP)
#undef GTAP_REPLAY_HSA_LOOKUP
  return f;
}

}  // namespace

const HsaFunctions& loadHsaFunctions(const std::string& path) {
  static std::mutex mu;
  // By path; each entry lives as long as the process, as the library does.
  static std::map<std::string, std::unique_ptr<HsaFunctions>> loaded;
  std::lock_guard<std::mutex> lock(mu);
  auto& entry = loaded[path];
  if (!entry) entry = std::make_unique<HsaFunctions>(load(path));
  return *entry;
}

std::string hsaStatusName(const HsaFunctions& hsa, hsa_status_t status) {
  char code[16];
  std::snprintf(code, sizeof code, "0x%x", static_cast<unsigned>(status));
  if (const char* name = knownStatusName(status)) return std::string(name) + " (" + code + ")";
  const char* text = nullptr;
  if (hsa.hsa_status_string && hsa.hsa_status_string(status, &text) == HSA_STATUS_SUCCESS && text)
    return std::string("status ") + code + " (" + text + ")";
  return std::string("status ") + code;
}

}  // namespace gtap::replay
