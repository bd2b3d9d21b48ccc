// The tool entry points the HSA runtime looks for, and the swap of its table
// entries for gtap's wrappers.
#include "hsa_tables.h"

#include <dlfcn.h>

#include <atomic>
#include <cstddef>
#include <cstdio>
#include <cstring>

#include "dlsym_hook.h"
#include "log.h"
#include "tracker.h"

namespace gtap::hsa {

namespace {

const core::FunctionInfo kFunctions[] = {
#define GTAP_HSA_ENTRY(Table, name, id, hooked, before, since) {#name, core::ApiKind::hsa},
#include "hsa_entries.inc"
#undef GTAP_HSA_ENTRY
};
static_assert(sizeof kFunctions / sizeof kFunctions[0] == kFunctionCount);

// The runtime's exported hsa_init, which gtap's own (below) calls.
using InitFn = hsa_status_t (*)();
std::atomic<InitFn> g_runtimeInit{nullptr};

InitFn runtimeInit() {
  if (InitFn f = g_runtimeInit.load(std::memory_order_acquire)) return f;
  // The runtime the program linked comes after gtap; one it opened itself
  // (RTLD_LOCAL: IREE's amdgpu driver, say) is found by its name.
  void* found = core::realDlsym(RTLD_NEXT, "hsa_init");
  for (const char* name : {"libhsa-runtime64.so.1", "libhsa-runtime64.so"}) {
    if (found) break;
    if (void* library = dlopen(name, RTLD_LAZY | RTLD_NOLOAD)) {
      found = core::realDlsym(library, "hsa_init");
      dlclose(library);
    }
  }
  auto f = reinterpret_cast<InitFn>(found);
  if (f) g_runtimeInit.store(f, std::memory_order_release);
  return f;
}

void* lookupInRuntime(const char* name);

__attribute__((constructor(102))) void registerHsa() {
  core::registerFunctions(core::kHsaFunctionBase, kFunctions, kFunctionCount);
  // A program that looks hsa_init up in the runtime it opened gets gtap's.
  core::registerLibrarySymbols("libhsa-runtime64.so", "hsa_init", &lookupInRuntime);
}

std::atomic<bool> g_installed{false};

// The table layouts gtap knows, from ROCR-Runtime's src/inc/hsa_api_trace.h
// and hsa_api_trace_version.h (rocm-5.0.0 to rocm-6.2.4):
// - HsaApiTable: major 1 (to 5.7), 2 (6.0), 3 (6.1 on; 6.1 appends tools_,
//   6.2 pc_sampling_ext_). core_ and amd_ext_ never moved.
// - CoreApiTable: major 1 (to 5.7), 2 (6.0 on); the same 125 entries in the
//   same order throughout (6.0 raised the major without changing them).
// - AmdExtTable: major 1 until 5.7, 2 from 6.0, step versions counting the
//   entries appended since (6.1: 1, ...). ROCr 5.6 inserted two entries in
//   the middle (see generate_entries.py) and kept major 1: a major-1 table
//   is of the older layout if it is smaller than 5.6's (55 entries, 456
//   bytes; 5.0 to 5.4 had 400 bytes, 5.5 424), of the newer one otherwise.
// Every table's version.minor_id is its size in bytes (hsa_api_trace.cpp sets
// it to sizeof the table the runtime was built with): an entry past it does
// not exist in that runtime and is left alone. A major version gtap does not
// know may have moved anything: such tables are refused, whole.
constexpr uint32_t kAmdExtBytesFrom5_6 = sizeof(ApiTableVersion) + 55 * sizeof(void*);

struct Layout {
  bool known = false;
  bool amdExtFrom5_6 = true;
};

Layout layoutOf(const HsaApiTable* root, char* why, size_t whySize) {
  Layout l;
  uint32_t major = root->version.major_id;
  if (major < 1 || major > 3) {
    std::snprintf(why, whySize, "its API table version %u", major);
    return l;
  }
  if (root->version.minor_id >= offsetof(HsaApiTable, core_) + sizeof(void*) && root->core_) {
    uint32_t core = root->core_->version.major_id;
    if (core < 1 || core > 2) {
      std::snprintf(why, whySize, "its core table version %u", core);
      return l;
    }
  }
  if (root->version.minor_id >= offsetof(HsaApiTable, amd_ext_) + sizeof(void*) && root->amd_ext_) {
    const ApiTableVersion& v = root->amd_ext_->version;
    if (v.major_id < 1 || v.major_id > 2) {
      std::snprintf(why, whySize, "its AMD extension table version %u", v.major_id);
      return l;
    }
    l.amdExtFrom5_6 = v.major_id == 2 || v.minor_id >= kAmdExtBytesFrom5_6;
  }
  l.known = true;
  return l;
}

// The address of entry `index` (counted after the version) of a table that
// declares `bytes` bytes, or null when the table ends before it.
void** slotOf(void* table, uint32_t bytes, int index) {
  if (!table || index < 0) return nullptr;
  size_t offset = sizeof(ApiTableVersion) + static_cast<size_t>(index) * sizeof(void*);
  if (offset + sizeof(void*) > bytes) return nullptr;
  return reinterpret_cast<void**>(static_cast<char*>(table) + offset);
}

// Saves the runtime's function (null if it left the entry empty: the wrapper
// then answers as the runtime's exported function would) and puts gtap's
// wrapper in its place.
template <typename F>
void swap(void** slot, F& saved, F wrapper) {
  void* current = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
  // Never save gtap's own wrapper as the runtime's (a table handed over twice).
  if (current == reinterpret_cast<void*>(wrapper)) return;
  saved = reinterpret_cast<F>(current);
  __atomic_store_n(slot, reinterpret_cast<void*>(wrapper), __ATOMIC_RELEASE);
}

#define GTAP_HSA_WRAPPER_0(name, id) &Entry<id, decltype(&::name)>::wrapper
#define GTAP_HSA_WRAPPER_1(name, id) &hooks::name
#define GTAP_HSA_WRAPPER(name, id, hooked) GTAP_HSA_WRAPPER_##hooked(name, id)
#define GTAP_HSA_SWAP(name, id, hooked, slotIndex)                                               \
  if (void** slot = slotOf(table, bytes, slotIndex)) {                                          \
    swap(slot, Entry<id, decltype(&::name)>::real, GTAP_HSA_WRAPPER(name, id, hooked));          \
    ++count;                                                                                    \
  } else {                                                                                      \
    ++skipped;                                                                                  \
  }

void reportSkipped(unsigned skipped, const char* tableName) {
  if (skipped)
    core::logLine("the runtime's %s is older than gtap's headers: %u of its entries are missing", tableName,
                  skipped);
}

unsigned install(CoreApiTable* table) {
  unsigned count = 0, skipped = 0;
  uint32_t bytes = table->version.minor_id;
#define GTAP_HSA_ONLY_CoreApiTable(name, id, hooked, before, since) GTAP_HSA_SWAP(name, id, hooked, since)
#define GTAP_HSA_ONLY_AmdExtTable(name, id, hooked, before, since)
#define GTAP_HSA_ENTRY(Table, name, id, hooked, before, since) GTAP_HSA_ONLY_##Table(name, id, hooked, before, since)
#include "hsa_entries.inc"
#undef GTAP_HSA_ENTRY
#undef GTAP_HSA_ONLY_AmdExtTable
#undef GTAP_HSA_ONLY_CoreApiTable
  reportSkipped(skipped, "core table");
  return count;
}

unsigned install(AmdExtTable* table, bool from5_6) {
  unsigned count = 0, skipped = 0;
  uint32_t bytes = table->version.minor_id;
#define GTAP_HSA_ONLY_CoreApiTable(name, id, hooked, before, since)
#define GTAP_HSA_ONLY_AmdExtTable(name, id, hooked, before, since) \
  GTAP_HSA_SWAP(name, id, hooked, from5_6 ? since : before)
#define GTAP_HSA_ENTRY(Table, name, id, hooked, before, since) GTAP_HSA_ONLY_##Table(name, id, hooked, before, since)
#include "hsa_entries.inc"
#undef GTAP_HSA_ENTRY
#undef GTAP_HSA_ONLY_AmdExtTable
#undef GTAP_HSA_ONLY_CoreApiTable
  reportSkipped(skipped, "AMD extension table");
  return count;
}

}  // namespace

bool tablesInstalled() { return g_installed.load(std::memory_order_acquire); }

}  // namespace gtap::hsa

using namespace gtap;

// ROCr >= 5.3 treats every loaded library that defines this symbol as a tool,
// so a bare LD_PRELOAD of libgtap.so is found without HSA_TOOLS_LIB. Tools are
// loaded in increasing priority; gtap goes late so it sees what other tools
// changed (it records the calls the program makes, through their wrappers).
extern "C" __attribute__((visibility("default"))) const uint32_t HSA_AMD_TOOL_PRIORITY = 1000;

// hsa_init is the one call the tables cannot show when it fails: the runtime
// loads its tools only once it is up. So gtap exports it too (a preloaded
// gtap comes before the runtime; the dlsym hook hands it to programs that look
// it up in their handle of the runtime), records it, and calls the runtime's.
// The guard keeps the runtime's table entry, reached from inside, and OnLoad
// from recording it again.
extern "C" __attribute__((visibility("default"))) hsa_status_t hsa_init() {
  hsa::InitFn real = hsa::runtimeInit();
  core::CallScope scope(core::kGuardHsa, GTAP_HSA_ID(hsa_init));
  hsa_status_t status = real ? real() : HSA_STATUS_ERROR_NOT_INITIALIZED;
  scope.end(status);
  return status;
}

namespace gtap::hsa {
namespace {
void* lookupInRuntime(const char* name) {
  return std::strcmp(name, "hsa_init") == 0 ? reinterpret_cast<void*>(&::hsa_init) : nullptr;
}
}  // namespace
}  // namespace gtap::hsa

// Called by the runtime at the end of the first hsa_init (after the runtime is
// up), with its live tables.
extern "C" __attribute__((visibility("default"))) bool OnLoad(HsaApiTable* table, uint64_t runtimeVersion,
                                                               uint64_t failedToolCount,
                                                               const char* const* failedToolNames) {
  (void)failedToolCount;
  (void)failedToolNames;
  char why[96] = "no table";
  hsa::Layout layout;
  if (table) layout = hsa::layoutOf(table, why, sizeof why);
  if (!layout.known) {
    core::logLine("the HSA runtime (version %llu) hands tools tables gtap does not know (%s); HSA calls are not "
                  "recorded",
                  static_cast<unsigned long long>(runtimeVersion), why);
    return true;  // stay loaded: unloading a preloaded library is not ours to ask
  }
  // The hsa_init that is loading gtap reached the runtime before any wrapper
  // existed. The program's call went through gtap's exported hsa_init when
  // gtap was preloaded (it is recorded there, and this scope sees the guard);
  // otherwise (gtap named only in HSA_TOOLS_LIB) it is recorded from here,
  // its span starting when the runtime hands over its tables (the runtime is
  // up by then, so it succeeded). Later hsa_init calls go through the table.
  core::CallScope init(core::kGuardHsa, GTAP_HSA_ID(hsa_init));  // also keeps our calls below out
  unsigned wrapped = 0;
  uint32_t rootBytes = table->version.minor_id;
  if (rootBytes >= offsetof(HsaApiTable, core_) + sizeof(void*) && table->core_)
    wrapped += hsa::install(table->core_);
  if (rootBytes >= offsetof(HsaApiTable, amd_ext_) + sizeof(void*) && table->amd_ext_)
    wrapped += hsa::install(table->amd_ext_, layout.amdExtFrom5_6);
  hsa::g_installed.store(wrapped != 0, std::memory_order_release);
  try {
    if (wrapped) hsa::Tracker::get().runtimeLoaded();
  } GTAP_CATCH_INTERNAL {
    core::stopAfterInternalError("reading the HSA runtime's agents at its start");
  }
  init.end(HSA_STATUS_SUCCESS);
  return true;
}

// Called by the runtime at the last hsa_shut_down, while it still answers.
extern "C" __attribute__((visibility("default"))) void OnUnload() {
  uint8_t saved = core::t_guard;
  core::t_guard = static_cast<uint8_t>(saved | core::kGuardHsa);
  try {
    if (hsa::g_installed.exchange(false)) hsa::Tracker::get().runtimeUnloading();
  } GTAP_CATCH_INTERNAL {
    core::stopAfterInternalError("the HSA runtime's shut-down");
  }
  core::t_guard = saved;
}
