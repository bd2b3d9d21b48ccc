// Every HSA function the simulated runtime implements, with the table that
// holds it.
//
// The list drives two things: the declarations below (each sim_hsa::hsa_x has
// exactly the type of the API's hsa_x, so a mismatch fails to compile) and the
// default contents of the live HsaApiTable (tables.cpp). A function that is
// not listed keeps a null table entry; its exported symbol then returns
// HSA_STATUS_ERROR (exports.cpp).
#pragma once

#include "common.h"

#define GTAP_SIM_HSA_CORE_FUNCTIONS(X)      \
  X(core, hsa_init)                        \
  X(core, hsa_shut_down)                   \
  X(core, hsa_system_get_info)             \
  X(core, hsa_system_extension_supported)  \
  X(core, hsa_system_major_extension_supported) \
  X(core, hsa_system_get_major_extension_table) \
  X(core, hsa_extension_get_name)          \
  X(core, hsa_iterate_agents)              \
  X(core, hsa_agent_get_info)              \
  X(core, hsa_agent_extension_supported)   \
  X(core, hsa_agent_major_extension_supported) \
  X(core, hsa_agent_iterate_regions)       \
  X(core, hsa_agent_iterate_caches)        \
  X(core, hsa_agent_iterate_isas)          \
  X(core, hsa_cache_get_info)              \
  X(core, hsa_isa_from_name)               \
  X(core, hsa_isa_get_info)                \
  X(core, hsa_isa_get_info_alt)            \
  X(core, hsa_isa_compatible)              \
  X(core, hsa_isa_get_round_method)        \
  X(core, hsa_isa_iterate_wavefronts)      \
  X(core, hsa_wavefront_get_info)          \
  X(core, hsa_region_get_info)             \
  X(core, hsa_memory_register)             \
  X(core, hsa_memory_deregister)           \
  X(core, hsa_memory_allocate)             \
  X(core, hsa_memory_free)                 \
  X(core, hsa_memory_copy)                 \
  X(core, hsa_memory_assign_agent)         \
  X(core, hsa_queue_create)                \
  X(core, hsa_soft_queue_create)           \
  X(core, hsa_queue_destroy)               \
  X(core, hsa_queue_inactivate)            \
  X(core, hsa_queue_load_read_index_scacquire)   \
  X(core, hsa_queue_load_read_index_relaxed)     \
  X(core, hsa_queue_load_write_index_scacquire)  \
  X(core, hsa_queue_load_write_index_relaxed)    \
  X(core, hsa_queue_store_write_index_relaxed)   \
  X(core, hsa_queue_store_write_index_screlease) \
  X(core, hsa_queue_cas_write_index_scacq_screl) \
  X(core, hsa_queue_cas_write_index_scacquire)   \
  X(core, hsa_queue_cas_write_index_relaxed)     \
  X(core, hsa_queue_cas_write_index_screlease)   \
  X(core, hsa_queue_add_write_index_scacq_screl) \
  X(core, hsa_queue_add_write_index_scacquire)   \
  X(core, hsa_queue_add_write_index_relaxed)     \
  X(core, hsa_queue_add_write_index_screlease)   \
  X(core, hsa_queue_store_read_index_relaxed)    \
  X(core, hsa_queue_store_read_index_screlease)  \
  X(core, hsa_signal_create)               \
  X(core, hsa_signal_destroy)              \
  X(core, hsa_signal_load_relaxed)         \
  X(core, hsa_signal_load_scacquire)       \
  X(core, hsa_signal_store_relaxed)        \
  X(core, hsa_signal_store_screlease)      \
  X(core, hsa_signal_silent_store_relaxed) \
  X(core, hsa_signal_silent_store_screlease) \
  X(core, hsa_signal_wait_relaxed)         \
  X(core, hsa_signal_wait_scacquire)       \
  X(core, hsa_signal_and_relaxed)          \
  X(core, hsa_signal_and_scacquire)        \
  X(core, hsa_signal_and_screlease)        \
  X(core, hsa_signal_and_scacq_screl)      \
  X(core, hsa_signal_or_relaxed)           \
  X(core, hsa_signal_or_scacquire)         \
  X(core, hsa_signal_or_screlease)         \
  X(core, hsa_signal_or_scacq_screl)       \
  X(core, hsa_signal_xor_relaxed)          \
  X(core, hsa_signal_xor_scacquire)        \
  X(core, hsa_signal_xor_screlease)        \
  X(core, hsa_signal_xor_scacq_screl)      \
  X(core, hsa_signal_exchange_relaxed)     \
  X(core, hsa_signal_exchange_scacquire)   \
  X(core, hsa_signal_exchange_screlease)   \
  X(core, hsa_signal_exchange_scacq_screl) \
  X(core, hsa_signal_add_relaxed)          \
  X(core, hsa_signal_add_scacquire)        \
  X(core, hsa_signal_add_screlease)        \
  X(core, hsa_signal_add_scacq_screl)      \
  X(core, hsa_signal_subtract_relaxed)     \
  X(core, hsa_signal_subtract_scacquire)   \
  X(core, hsa_signal_subtract_screlease)   \
  X(core, hsa_signal_subtract_scacq_screl) \
  X(core, hsa_signal_cas_relaxed)          \
  X(core, hsa_signal_cas_scacquire)        \
  X(core, hsa_signal_cas_screlease)        \
  X(core, hsa_signal_cas_scacq_screl)      \
  X(core, hsa_signal_group_create)         \
  X(core, hsa_signal_group_destroy)        \
  X(core, hsa_signal_group_wait_any_scacquire) \
  X(core, hsa_signal_group_wait_any_relaxed)   \
  X(core, hsa_code_object_reader_create_from_file)   \
  X(core, hsa_code_object_reader_create_from_memory) \
  X(core, hsa_code_object_reader_destroy)  \
  X(core, hsa_executable_create)           \
  X(core, hsa_executable_create_alt)       \
  X(core, hsa_executable_destroy)          \
  X(core, hsa_executable_load_agent_code_object) \
  X(core, hsa_executable_freeze)           \
  X(core, hsa_executable_get_info)         \
  X(core, hsa_executable_validate)         \
  X(core, hsa_executable_validate_alt)     \
  X(core, hsa_executable_get_symbol)       \
  X(core, hsa_executable_get_symbol_by_name)     \
  X(core, hsa_executable_symbol_get_info)  \
  X(core, hsa_executable_iterate_symbols)  \
  X(core, hsa_executable_iterate_agent_symbols)  \
  X(core, hsa_executable_iterate_program_symbols) \
  X(core, hsa_status_string)

#define GTAP_SIM_HSA_AMD_FUNCTIONS(X)                        \
  X(amd_ext, hsa_amd_profiling_set_profiler_enabled)        \
  X(amd_ext, hsa_amd_profiling_async_copy_enable)           \
  X(amd_ext, hsa_amd_profiling_get_dispatch_time)           \
  X(amd_ext, hsa_amd_profiling_get_async_copy_time)         \
  X(amd_ext, hsa_amd_profiling_convert_tick_to_system_domain) \
  X(amd_ext, hsa_amd_signal_async_handler)                  \
  X(amd_ext, hsa_amd_async_function)                        \
  X(amd_ext, hsa_amd_signal_wait_any)                       \
  X(amd_ext, hsa_amd_signal_create)                         \
  X(amd_ext, hsa_amd_signal_value_pointer)                  \
  X(amd_ext, hsa_amd_memory_pool_get_info)                  \
  X(amd_ext, hsa_amd_agent_iterate_memory_pools)            \
  X(amd_ext, hsa_amd_memory_pool_allocate)                  \
  X(amd_ext, hsa_amd_memory_pool_free)                      \
  X(amd_ext, hsa_amd_register_deallocation_callback)        \
  X(amd_ext, hsa_amd_deregister_deallocation_callback)      \
  X(amd_ext, hsa_amd_memory_pool_can_migrate)               \
  X(amd_ext, hsa_amd_agent_memory_pool_get_info)            \
  X(amd_ext, hsa_amd_agents_allow_access)                   \
  X(amd_ext, hsa_amd_memory_async_copy)                     \
  X(amd_ext, hsa_amd_memory_lock)                           \
  X(amd_ext, hsa_amd_memory_lock_to_pool)                   \
  X(amd_ext, hsa_amd_memory_unlock)                         \
  X(amd_ext, hsa_amd_memory_fill)                           \
  X(amd_ext, hsa_amd_pointer_info)                          \
  X(amd_ext, hsa_amd_pointer_info_set_userdata)             \
  X(amd_ext, hsa_amd_register_system_event_handler)         \
  X(amd_ext, hsa_amd_queue_intercept_create)                \
  X(amd_ext, hsa_amd_queue_intercept_register)              \
  X(amd_ext, hsa_amd_queue_set_priority)

#define GTAP_SIM_HSA_FUNCTIONS(X) \
  GTAP_SIM_HSA_CORE_FUNCTIONS(X)  \
  GTAP_SIM_HSA_AMD_FUNCTIONS(X)

namespace sim_hsa {

#define GTAP_SIM_HSA_DECLARE(table, name) decltype(::name) name;
GTAP_SIM_HSA_FUNCTIONS(GTAP_SIM_HSA_DECLARE)
#undef GTAP_SIM_HSA_DECLARE

}  // namespace sim_hsa
