// The HSA entry points replay calls, looked up in the runtime at run time:
// gtap links no GPU runtime, and `--sim` names the simulated one by path
// (LD_LIBRARY_PATH is read only when a process starts).
#pragma once

#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>

#include <string>

namespace gtap::replay {

#define GTAP_REPLAY_HSA_FUNCTIONS(X)                                                                          \
  X(hsa_init) X(hsa_shut_down) X(hsa_status_string) X(hsa_iterate_agents) X(hsa_agent_get_info)              \
  X(hsa_agent_iterate_isas) X(hsa_isa_get_info_alt) X(hsa_amd_agent_iterate_memory_pools)                     \
  X(hsa_amd_memory_pool_get_info) X(hsa_amd_memory_pool_allocate) X(hsa_amd_memory_pool_free)                 \
  X(hsa_amd_agents_allow_access) X(hsa_amd_memory_lock) X(hsa_amd_memory_lock_to_pool)                        \
  X(hsa_amd_memory_unlock) X(hsa_signal_create) X(hsa_amd_signal_create) X(hsa_signal_destroy)                \
  X(hsa_signal_load_scacquire) X(hsa_signal_store_screlease) X(hsa_signal_add_scacq_screl)                    \
  X(hsa_signal_subtract_scacq_screl) X(hsa_signal_and_scacq_screl) X(hsa_signal_or_scacq_screl)               \
  X(hsa_signal_xor_scacq_screl) X(hsa_signal_exchange_scacq_screl) X(hsa_signal_cas_scacq_screl)              \
  X(hsa_signal_wait_scacquire) X(hsa_queue_create) X(hsa_queue_destroy)                                       \
  X(hsa_queue_add_write_index_scacq_screl) X(hsa_queue_load_read_index_scacquire)                             \
  X(hsa_code_object_reader_create_from_memory) X(hsa_code_object_reader_destroy) X(hsa_executable_create_alt) \
  X(hsa_executable_load_agent_code_object) X(hsa_executable_freeze) X(hsa_executable_destroy)                 \
  X(hsa_executable_get_symbol_by_name) X(hsa_executable_symbol_get_info) X(hsa_amd_memory_async_copy)         \
  X(hsa_memory_copy) X(hsa_amd_memory_fill)

struct HsaFunctions {
#define GTAP_REPLAY_HSA_DECLARE(name) decltype(&::name) name = nullptr;
  GTAP_REPLAY_HSA_FUNCTIONS(GTAP_REPLAY_HSA_DECLARE)
#undef GTAP_REPLAY_HSA_DECLARE
};

// The runtime replay opens when ReplayOptions::hsaRuntime is empty.
inline constexpr const char* kDefaultHsaRuntime = "libhsa-runtime64.so.1";

// Opens the runtime at `path` (once per process and path; it stays loaded)
// and looks up every function. Throws std::runtime_error naming the library
// and what is missing.
const HsaFunctions& loadHsaFunctions(const std::string& path);

// "HSA_STATUS_ERROR_INVALID_ARGUMENT (0x1001)", with the runtime's own text
// when it gives one.
std::string hsaStatusName(const HsaFunctions& hsa, hsa_status_t status);

}  // namespace gtap::replay
