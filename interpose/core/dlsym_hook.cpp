#include "dlsym_hook.h"

#include <dlfcn.h>
#include <link.h>

#include <atomic>
#include <cstring>

#include "internal_error.h"

extern "C" {
// Read by the trampoline (dlsym_trampoline_x86_64.S).
__attribute__((visibility("hidden"))) void* gtap_real_dlsym = nullptr;
__attribute__((visibility("hidden"))) void* gtap_dlsym_substitute(void* handle, const char* name,
                                                                   void* caller);
}

namespace gtap::core {

namespace {
struct Provider {
  const char* libraryPrefix;
  const char* symbolPrefix;
  SymbolLookup lookup;
  std::atomic<void*> knownHandle{nullptr};
};
Provider g_providers[4];
std::atomic<int> g_providerCount{0};
std::atomic<void (*)()> g_loadWatcher{nullptr};

using DlsymFn = void* (*)(void*, const char*);

void resolveRealDlsym() {
  if (gtap_real_dlsym) return;
  void* p = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
  if (!p) p = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
  __atomic_store_n(&gtap_real_dlsym, p, __ATOMIC_RELEASE);
}

bool nameHasPrefix(const char* path, const char* prefix) {
  if (!path) return false;
  const char* base = std::strrchr(path, '/');
  base = base ? base + 1 : path;
  return std::strncmp(base, prefix, std::strlen(prefix)) == 0;
}

bool handleIsLibrary(void* handle, const char* prefix) {
  link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || !map) return false;
  return nameHasPrefix(map->l_name, prefix);
}

// A runtime's own libraries look themselves up too (the Level Zero loader
// fills its dispatch tables with dlsym on its own handle); those lookups must
// get the real functions or the runtime would call back into gtap forever.
bool callerIsLibrary(void* caller, const char* prefix) {
  Dl_info info{};
  return caller && dladdr(caller, &info) && nameHasPrefix(info.dli_fname, prefix);
}
}  // namespace

void registerLibrarySymbols(const char* libraryPrefix, const char* symbolPrefix, SymbolLookup lookup) {
  int i = g_providerCount.load();
  if (i >= 4) return;
  g_providers[i].libraryPrefix = libraryPrefix;
  g_providers[i].symbolPrefix = symbolPrefix;
  g_providers[i].lookup = lookup;
  g_providerCount.store(i + 1, std::memory_order_release);
}

void registerLoadWatcher(void (*watcher)()) { g_loadWatcher.store(watcher, std::memory_order_release); }

void* realDlsym(void* handle, const char* name) {
  resolveRealDlsym();
  return reinterpret_cast<DlsymFn>(gtap_real_dlsym)(handle, name);
}

}  // namespace gtap::core

namespace gtap::core {
namespace {
void* substitute(void* handle, const char* name, void* caller);
}  // namespace
}  // namespace gtap::core

// Called from the dlsym trampoline, which nothing may unwind through: on a
// failure of gtap's the program's dlsym gets the real answer.
extern "C" void* gtap_dlsym_substitute(void* handle, const char* name, void* caller) {
  using namespace gtap::core;
  resolveRealDlsym();
  try {
    return substitute(handle, name, caller);
  } GTAP_CATCH_INTERNAL {
    stopAfterInternalError("gtap's dlsym");
    return nullptr;
  }
}

namespace gtap::core {
namespace {
void* substitute(void* handle, const char* name, void* caller) {
  if (auto watcher = g_loadWatcher.load(std::memory_order_acquire)) watcher();
  if (!name || handle == RTLD_DEFAULT || handle == RTLD_NEXT) return nullptr;
  int n = g_providerCount.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i) {
    Provider& p = g_providers[i];
    if (std::strncmp(name, p.symbolPrefix, std::strlen(p.symbolPrefix)) != 0) continue;
    void* known = p.knownHandle.load(std::memory_order_relaxed);
    if (handle != known) {
      if (!handleIsLibrary(handle, p.libraryPrefix)) continue;
      p.knownHandle.store(handle, std::memory_order_relaxed);
    }
    if (callerIsLibrary(caller, p.libraryPrefix)) return nullptr;
    // Only substitute what the library itself has: a name it lacks must still
    // fail as it would without gtap.
    if (void* wrapper = p.lookup(name)) return wrapper;
  }
  return nullptr;
}
}  // namespace
}  // namespace gtap::core
