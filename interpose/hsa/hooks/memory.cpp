// Allocations from pools and regions, frees, and host memory locked for the
// devices.
#include "hook.h"
#include "hsa_replay.h"

namespace gtap::hsa::hooks {

// --- memory ---

GTAP_HSA_HOOK(hsa_amd_memory_pool_allocate,
              (hsa_amd_memory_pool_t pool, size_t size, uint32_t flags, void** ptr),
              (pool, size, flags, ptr)) {
  hsa_status_t s = real(pool, size, flags, ptr);
  if (s == HSA_STATUS_SUCCESS && call.program() && ptr) {
    tracker().allocatedFromPool(pool.handle, *ptr, size, call.scope());
    if (replaying(call.scope())) ReplayRecorder::get().allocated(call.scope(), pool.handle, *ptr, size, flags);
  }
  return s;
}

GTAP_HSA_HOOK(hsa_memory_allocate, (hsa_region_t region, size_t size, void** ptr), (region, size, ptr)) {
  hsa_status_t s = real(region, size, ptr);
  if (s == HSA_STATUS_SUCCESS && call.program() && ptr) {
    tracker().allocatedFromPool(region.handle, *ptr, size, call.scope());
    if (replaying(call.scope())) ReplayRecorder::get().allocated(call.scope(), region.handle, *ptr, size, 0);
  }
  return s;
}

GTAP_HSA_HOOK(hsa_amd_memory_pool_free, (void* ptr), (ptr)) {
  if (call.program()) tracker().freeing(ptr, call.scope());
  uint64_t seq = replaying(call.scope()) ? ReplayRecorder::get().freeing(call.scope(), ptr) : 0;
  hsa_status_t s = real(ptr);
  if (s != HSA_STATUS_SUCCESS && seq) ReplayRecorder::get().failed(seq, call.scope());
  return s;
}

GTAP_HSA_HOOK(hsa_memory_free, (void* ptr), (ptr)) {
  if (call.program()) tracker().freeing(ptr, call.scope());
  uint64_t seq = replaying(call.scope()) ? ReplayRecorder::get().freeing(call.scope(), ptr) : 0;
  hsa_status_t s = real(ptr);
  if (s != HSA_STATUS_SUCCESS && seq) ReplayRecorder::get().failed(seq, call.scope());
  return s;
}

GTAP_HSA_HOOK(hsa_amd_memory_lock,
              (void* host_ptr, size_t size, hsa_agent_t* agents, int num_agent, void** agent_ptr),
              (host_ptr, size, agents, num_agent, agent_ptr)) {
  hsa_status_t s = real(host_ptr, size, agents, num_agent, agent_ptr);
  if (s == HSA_STATUS_SUCCESS && call.program()) {
    tracker().locked(host_ptr, size, agent_ptr ? *agent_ptr : nullptr, call.scope());
    if (replaying(call.scope()))
      ReplayRecorder::get().locked(call.scope(), host_ptr, size, agents, num_agent, 0, 0,
                                   agent_ptr ? *agent_ptr : nullptr);
  }
  return s;
}

GTAP_HSA_HOOK(hsa_amd_memory_lock_to_pool,
              (void* host_ptr, size_t size, hsa_agent_t* agents, int num_agent, hsa_amd_memory_pool_t pool,
               uint32_t flags, void** agent_ptr),
              (host_ptr, size, agents, num_agent, pool, flags, agent_ptr)) {
  hsa_status_t s = real(host_ptr, size, agents, num_agent, pool, flags, agent_ptr);
  if (s == HSA_STATUS_SUCCESS && call.program()) {
    tracker().locked(host_ptr, size, agent_ptr ? *agent_ptr : nullptr, call.scope());
    if (replaying(call.scope()))
      ReplayRecorder::get().locked(call.scope(), host_ptr, size, agents, num_agent, pool.handle, flags,
                                   agent_ptr ? *agent_ptr : nullptr);
  }
  return s;
}

GTAP_HSA_HOOK(hsa_amd_memory_unlock, (void* host_ptr), (host_ptr)) {
  if (call.program()) tracker().unlocking(host_ptr, call.scope());
  uint64_t seq = replaying(call.scope()) ? ReplayRecorder::get().unlocking(call.scope(), host_ptr) : 0;
  hsa_status_t s = real(host_ptr);
  if (s != HSA_STATUS_SUCCESS && seq) ReplayRecorder::get().failed(seq, call.scope());
  return s;
}

GTAP_HSA_HOOK(hsa_amd_agents_allow_access,
              (uint32_t num_agents, const hsa_agent_t* agents, const uint32_t* flags, const void* ptr),
              (num_agents, agents, flags, ptr)) {
  hsa_status_t s = real(num_agents, agents, flags, ptr);
  if (s == HSA_STATUS_SUCCESS && replaying(call.scope()))
    ReplayRecorder::get().allowedAccess(call.scope(), num_agents, agents, ptr);
  return s;
}

}  // namespace gtap::hsa::hooks
