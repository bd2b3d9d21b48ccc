// The tool entry points the HSA runtime looks for, and the swap of its table
// entries for gtap's wrappers.
#include "hsa_tables.h"

#include <atomic>
#include <cstddef>

#include "log.h"
#include "tracker.h"

namespace gtap::hsa {

namespace {

const core::FunctionInfo kFunctions[] = {
#define GTAP_HSA_ENTRY(Table, name, id, hooked) {#name, core::ApiKind::hsa},
#include "hsa_entries.inc"
#undef GTAP_HSA_ENTRY
};
static_assert(sizeof kFunctions / sizeof kFunctions[0] == kFunctionCount);

__attribute__((constructor(102))) void registerHsa() {
  core::registerFunctions(core::kHsaFunctionBase, kFunctions, kFunctionCount);
}

std::atomic<bool> g_installed{false};

// A table's version.minor_id is its size in bytes (hsa_api_trace.h sets it to
// sizeof of the table the runtime was built with): an entry past it does not
// exist in this runtime and is left alone.
template <typename Table>
bool holds(const Table* table, size_t offset) {
  return table && table->version.major_id == 1 && offset + sizeof(void*) <= table->version.minor_id;
}

template <typename Slot, typename F>
void swap(Slot& slot, F& saved, F wrapper) {
  F current = __atomic_load_n(&slot, __ATOMIC_ACQUIRE);
  // Never save gtap's own wrapper as the runtime's (a table handed over twice).
  if (!current || current == wrapper) return;
  saved = current;
  __atomic_store_n(&slot, wrapper, __ATOMIC_RELEASE);
}

#define GTAP_HSA_WRAPPER_0(name, id) &Entry<id, decltype(&::name)>::wrapper
#define GTAP_HSA_WRAPPER_1(name, id) &hooks::name
#define GTAP_HSA_WRAPPER(name, id, hooked) GTAP_HSA_WRAPPER_##hooked(name, id)
#define GTAP_HSA_SWAP(Table, name, id, hooked)                                                      \
  if (holds(table, offsetof(Table, name##_fn))) {                                                   \
    swap(table->name##_fn, Entry<id, decltype(&::name)>::real, GTAP_HSA_WRAPPER(name, id, hooked)); \
    ++count;                                                                                        \
  } else {                                                                                          \
    ++skipped;                                                                                      \
  }

void reportSkipped(unsigned skipped, const char* tableName) {
  if (skipped)
    core::logLine("the runtime's %s is older than gtap's headers: %u of its entries are missing", tableName,
                  skipped);
}

unsigned install(CoreApiTable* table) {
  unsigned count = 0, skipped = 0;
#define GTAP_HSA_ONLY_CoreApiTable(name, id, hooked) GTAP_HSA_SWAP(CoreApiTable, name, id, hooked)
#define GTAP_HSA_ONLY_AmdExtTable(name, id, hooked)
#define GTAP_HSA_ENTRY(Table, name, id, hooked) GTAP_HSA_ONLY_##Table(name, id, hooked)
#include "hsa_entries.inc"
#undef GTAP_HSA_ENTRY
#undef GTAP_HSA_ONLY_AmdExtTable
#undef GTAP_HSA_ONLY_CoreApiTable
  reportSkipped(skipped, "core table");
  return count;
}

unsigned install(AmdExtTable* table) {
  unsigned count = 0, skipped = 0;
#define GTAP_HSA_ONLY_CoreApiTable(name, id, hooked)
#define GTAP_HSA_ONLY_AmdExtTable(name, id, hooked) GTAP_HSA_SWAP(AmdExtTable, name, id, hooked)
#define GTAP_HSA_ENTRY(Table, name, id, hooked) GTAP_HSA_ONLY_##Table(name, id, hooked)
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

// Called by the runtime at the end of the first hsa_init (after the runtime is
// up), with its live tables.
extern "C" __attribute__((visibility("default"))) bool OnLoad(HsaApiTable* table, uint64_t runtimeVersion,
                                                               uint64_t failedToolCount,
                                                               const char* const* failedToolNames) {
  (void)failedToolCount;
  (void)failedToolNames;
  if (!table || table->version.major_id != 1) {
    core::logLine("HSA runtime table version %u (runtime %llu) is not one gtap knows; HSA calls are not recorded",
                  table ? table->version.major_id : 0u, static_cast<unsigned long long>(runtimeVersion));
    return true;  // stay loaded: unloading a preloaded library is not ours to ask
  }
  // The hsa_init that is loading gtap went to the runtime before any wrapper
  // existed: it is recorded from here, its span starting when the runtime
  // hands over its tables (the runtime is up by then, so it succeeded). Later
  // hsa_init calls go through the wrapper like any other.
  core::CallScope init(core::kGuardHsa, GTAP_HSA_ID(hsa_init));  // also keeps our calls below out
  unsigned wrapped = 0;
  if (hsa::holds(table, offsetof(HsaApiTable, core_))) wrapped += hsa::install(table->core_);
  if (hsa::holds(table, offsetof(HsaApiTable, amd_ext_))) wrapped += hsa::install(table->amd_ext_);
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
