#include "ze_runtime.h"

#include <dlfcn.h>

#include <cstring>
#include <mutex>

#include "dlsym_hook.h"
#include "log.h"

namespace gtap::ze {

std::atomic<bool> g_resolved{false};
void* g_real[1024];

namespace {
constexpr const char* kLoaderName = "libze_loader.so.1";
std::mutex g_resolveMutex;

// Opens the loader with our own handle: dlsym(RTLD_NEXT) would find nothing
// when the program opened the loader RTLD_LOCAL.
void resolveLocked() {
  static_assert(sizeof g_real / sizeof g_real[0] >= 512);
  void* loader = dlopen(kLoaderName, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (!loader) loader = dlopen(kLoaderName, RTLD_NOW | RTLD_LOCAL);
  if (!loader) {
    core::logLine("cannot open %s (%s); Level Zero calls fail with ZE_RESULT_ERROR_UNINITIALIZED",
                  kLoaderName, dlerror());
    return;
  }
  for (size_t i = 0; i < kFunctionCount; ++i) g_real[i] = core::realDlsym(loader, kFunctions[i].name);
}

void* lookupForLoader(const char* name) { return wrapperFor(name); }

__attribute__((constructor(102))) void registerZe() {
  core::registerFunctions(core::kZeFunctionBase, kFunctions, kFunctionCount);
  core::registerLibrarySymbols("libze_loader.so", "ze", &lookupForLoader);
}
}  // namespace

void resolveAll() {
  std::lock_guard<std::mutex> lock(g_resolveMutex);
  if (g_resolved.load(std::memory_order_relaxed)) return;
  resolveLocked();
  g_resolved.store(true, std::memory_order_release);
}

void* wrapperFor(const char* name) {
  size_t lo = 0, hi = kWrapperCount;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    int c = std::strcmp(kWrappers[mid].name, name);
    if (c == 0) return realFunction(kWrappers[mid].index) ? kWrappers[mid].wrapper : nullptr;
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return nullptr;
}

}  // namespace gtap::ze
