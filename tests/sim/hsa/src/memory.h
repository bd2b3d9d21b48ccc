// Memory: regions and AMD memory pools (one object serves as both, as in
// ROCr), and the allocations made from them. All of it is host memory; the
// pools only differ in what they report, shaped like a discrete GPU's.
#pragma once

#include "common.h"

#include <cstddef>
#include <cstdint>

namespace sim_hsa {

struct Agent;

struct Pool {
  Agent* owner;
  hsa_amd_segment_t segment;
  uint32_t global_flags;  // hsa_amd_memory_pool_global_flag_t (same bits as hsa_region_global_flag_t)
  bool alloc_allowed;
  bool host_accessible;   // HSA_AMD_REGION_INFO_HOST_ACCESSIBLE
  bool accessible_by_all;
  uint64_t size;
};

// Null unless the handle is one of the pools.
Pool* toPool(uint64_t handle);

// At the last hsa_shut_down: every allocation is released.
void releaseAllMemory();

}  // namespace sim_hsa
