// Regions, memory pools, allocations, host memory locking, pointer queries,
// synchronous copies and fills.
#include "memory.h"

#include "agent.h"
#include "api.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <vector>

namespace sim_hsa {

namespace {

constexpr uint64_t kGranule = 4096;
constexpr uint64_t kGiB = 1ull << 30;

uint64_t hostMemory() {
  long pages = sysconf(_SC_PHYS_PAGES);
  long page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page) : 16 * kGiB;
}

// The CPU owns system memory in three flavours, as ROCr's CPU agent does; the
// GPU owns "device" memory (coarse-grained, not host-accessible, as on a
// discrete GPU) and its group (LDS) memory, which cannot be allocated.
Pool g_systemFine{&cpuAgent(), HSA_AMD_SEGMENT_GLOBAL, HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED, true, true, true, 0};
Pool g_systemKernarg{&cpuAgent(), HSA_AMD_SEGMENT_GLOBAL,
                     HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT | HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED,
                     true, true, true, 0};
Pool g_systemCoarse{&cpuAgent(), HSA_AMD_SEGMENT_GLOBAL, HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED, true, true, false, 0};
Pool g_device{&gpuAgent(), HSA_AMD_SEGMENT_GLOBAL, HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED, true, false, false, 8 * kGiB};
Pool g_group{&gpuAgent(), HSA_AMD_SEGMENT_GROUP, 0, false, false, false, gpu::kGroupSegmentMax};

Pool* const g_allPools[] = {&g_systemFine, &g_systemKernarg, &g_systemCoarse, &g_device, &g_group};
Pool* const g_cpuPools[] = {&g_systemFine, &g_systemKernarg, &g_systemCoarse};
Pool* const g_gpuPools[] = {&g_device, &g_group};
// A kernel agent's regions include the system regions it can reach, which is
// where programs look for the kernarg region.
Pool* const g_gpuRegions[] = {&g_device, &g_group, &g_systemFine, &g_systemKernarg, &g_systemCoarse};

uint64_t poolSize(const Pool* p) {
  static const uint64_t host = hostMemory();
  return p->size != 0 ? p->size : host;
}

// A deallocation callback, as ROCr keeps it (runtime.cpp, notifier_t): the
// pointer it was registered for (anywhere inside the allocation), the
// callback and its data.
struct Notifier {
  void* ptr;
  hsa_amd_deallocation_callback_t callback;
  void* user_data;
};

struct Allocation {
  uint64_t size;
  uint64_t mapped;  // size rounded up to the granule
  const Pool* pool;
  void* user_data = nullptr;
  std::set<const Agent*> allowed;
  std::vector<Notifier> notifiers;
};

struct Locked {
  uint64_t size;
  uint32_t count;
  void* user_data = nullptr;
};

std::mutex g_lock;
std::map<uintptr_t, Allocation> g_allocations;
std::map<uintptr_t, Locked> g_locked;

template <class Map>
typename Map::iterator containing(Map& map, uintptr_t address) {
  auto it = map.upper_bound(address);
  if (it == map.begin()) return map.end();
  --it;
  return address < it->first + std::max<uint64_t>(it->second.size, 1) ? it : map.end();
}

hsa_status_t allocate(const Pool* pool, size_t size, void** ptr) {
  SIM_CHECK(pool->alloc_allowed, HSA_STATUS_ERROR_INVALID_ALLOCATION);
  SIM_CHECK(size <= poolSize(pool), HSA_STATUS_ERROR_INVALID_ALLOCATION);
  uint64_t mapped = (uint64_t(size) + kGranule - 1) / kGranule * kGranule;
  // Fresh anonymous pages: granule-aligned and zeroed, like memory a driver hands out.
  void* p = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  SIM_CHECK(p != MAP_FAILED, HSA_STATUS_ERROR_OUT_OF_RESOURCES);
  SIM_TRY
  std::lock_guard<std::mutex> lock(g_lock);
  g_allocations.emplace(reinterpret_cast<uintptr_t>(p), Allocation{size, mapped, pool, nullptr, {}, {}});
  *ptr = p;
  return HSA_STATUS_SUCCESS;
  }
  catch (...) {
    munmap(p, mapped);
    return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  }
}

hsa_status_t release(void* ptr) {
  uint64_t mapped = 0;
  std::vector<Notifier> notifiers;
  {
    std::lock_guard<std::mutex> lock(g_lock);
    auto it = g_allocations.find(reinterpret_cast<uintptr_t>(ptr));
    SIM_CHECK(it != g_allocations.end(), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    mapped = it->second.mapped;
    notifiers.swap(it->second.notifiers);
    g_allocations.erase(it);
  }
  // As ROCr's Runtime::FreeMemory: on the freeing thread, in registration
  // order, outside the lock (a callback may manage memory), the memory still
  // mapped.
  for (const Notifier& n : notifiers) n.callback(n.ptr, n.user_data);
  munmap(ptr, mapped);
  return HSA_STATUS_SUCCESS;
}

hsa_amd_memory_pool_access_t access(const Agent* agent, const Pool* pool) {
  if (pool->owner == agent) return HSA_AMD_MEMORY_POOL_ACCESS_ALLOWED_BY_DEFAULT;
  if (pool->segment == HSA_AMD_SEGMENT_GROUP) return HSA_AMD_MEMORY_POOL_ACCESS_NEVER_ALLOWED;
  if (pool == &g_device) return HSA_AMD_MEMORY_POOL_ACCESS_DISALLOWED_BY_DEFAULT;  // host to device memory
  // The GPU reaches fine-grained system memory by default, coarse-grained
  // only once allowed.
  return (pool->global_flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED) != 0
             ? HSA_AMD_MEMORY_POOL_ACCESS_ALLOWED_BY_DEFAULT
             : HSA_AMD_MEMORY_POOL_ACCESS_DISALLOWED_BY_DEFAULT;
}

template <size_t N>
hsa_status_t iterate(Pool* const (&pools)[N], hsa_status_t (*callback)(uint64_t handle, void* data), void* data) {
  for (Pool* p : pools) {
    hsa_status_t r = callback(reinterpret_cast<uint64_t>(p), data);
    if (r != HSA_STATUS_SUCCESS) return r;
  }
  return HSA_STATUS_SUCCESS;
}

}  // namespace

Pool* toPool(uint64_t handle) {
  for (Pool* p : g_allPools) {
    if (handle == reinterpret_cast<uint64_t>(p)) return p;
  }
  return nullptr;
}

void releaseAllMemory() {
  std::map<uintptr_t, Allocation> allocations;
  {
    std::lock_guard<std::mutex> lock(g_lock);
    allocations.swap(g_allocations);
    g_locked.clear();
  }
  for (auto& [base, a] : allocations) munmap(reinterpret_cast<void*>(base), a.mapped);
}

// --- Regions ----------------------------------------------------------------

hsa_status_t hsa_agent_iterate_regions(hsa_agent_t agent, hsa_status_t (*callback)(hsa_region_t region, void* data),
                                       void* data) {
  SIM_OPEN();
  Agent* a = toAgent(agent);
  SIM_CHECK(a != nullptr, HSA_STATUS_ERROR_INVALID_AGENT);
  SIM_NOT_NULL(callback);
  struct Ctx {
    hsa_status_t (*cb)(hsa_region_t, void*);
    void* data;
  } ctx{callback, data};
  auto call = [](uint64_t h, void* c) {
    auto* x = static_cast<Ctx*>(c);
    return x->cb(hsa_region_t{h}, x->data);
  };
  return isGpu(a) ? iterate(g_gpuRegions, call, &ctx) : iterate(g_cpuPools, call, &ctx);
}

hsa_status_t hsa_region_get_info(hsa_region_t region, hsa_region_info_t attribute, void* value) {
  SIM_OPEN();
  const Pool* p = toPool(region.handle);
  SIM_CHECK(p != nullptr, HSA_STATUS_ERROR_INVALID_REGION);
  SIM_NOT_NULL(value);
  const bool global = p->segment == HSA_AMD_SEGMENT_GLOBAL;
  switch (uint32_t(attribute)) {
    case HSA_REGION_INFO_SEGMENT:
      *static_cast<hsa_region_segment_t*>(value) = global ? HSA_REGION_SEGMENT_GLOBAL : HSA_REGION_SEGMENT_GROUP;
      break;
    case HSA_REGION_INFO_GLOBAL_FLAGS:
      *static_cast<uint32_t*>(value) = p->global_flags;
      break;
    case HSA_REGION_INFO_SIZE:
    case HSA_REGION_INFO_ALLOC_MAX_SIZE:
      *static_cast<size_t*>(value) = size_t(poolSize(p));
      break;
    case HSA_REGION_INFO_ALLOC_MAX_PRIVATE_WORKGROUP_SIZE:
      *static_cast<uint32_t*>(value) = 0;
      break;
    case HSA_REGION_INFO_RUNTIME_ALLOC_ALLOWED:
      *static_cast<bool*>(value) = p->alloc_allowed;
      break;
    case HSA_REGION_INFO_RUNTIME_ALLOC_GRANULE:
    case HSA_REGION_INFO_RUNTIME_ALLOC_ALIGNMENT:
      *static_cast<size_t*>(value) = p->alloc_allowed ? kGranule : 0;
      break;
    case HSA_AMD_REGION_INFO_HOST_ACCESSIBLE:
      *static_cast<bool*>(value) = p->host_accessible;
      break;
    case HSA_AMD_REGION_INFO_BASE:
      *static_cast<void**>(value) = nullptr;
      break;
    case HSA_AMD_REGION_INFO_BUS_WIDTH:
      *static_cast<uint32_t*>(value) = 64;
      break;
    case HSA_AMD_REGION_INFO_MAX_CLOCK_FREQUENCY:
      *static_cast<uint32_t*>(value) = 1000;
      break;
    default:
      return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_memory_allocate(hsa_region_t region, size_t size, void** ptr) {
  SIM_OPEN();
  const Pool* p = toPool(region.handle);
  SIM_CHECK(p != nullptr, HSA_STATUS_ERROR_INVALID_REGION);
  SIM_CHECK(ptr != nullptr && size != 0, HSA_STATUS_ERROR_INVALID_ARGUMENT);
  return allocate(p, size, ptr);
}

hsa_status_t hsa_memory_free(void* ptr) {
  SIM_OPEN();
  if (ptr == nullptr) return HSA_STATUS_SUCCESS;
  return release(ptr);
}

hsa_status_t hsa_memory_register(void* ptr, size_t size) {
  SIM_OPEN();
  SIM_CHECK(ptr != nullptr || size == 0, HSA_STATUS_ERROR_INVALID_ARGUMENT);
  return HSA_STATUS_SUCCESS;  // host memory is always reachable here
}

hsa_status_t hsa_memory_deregister(void* ptr, size_t size) {
  SIM_OPEN();
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_memory_assign_agent(void* ptr, hsa_agent_t agent, hsa_access_permission_t access) {
  SIM_OPEN();
  SIM_NOT_NULL(ptr);
  SIM_CHECK(toAgent(agent) != nullptr, HSA_STATUS_ERROR_INVALID_AGENT);
  SIM_CHECK(access >= HSA_ACCESS_PERMISSION_RO && access <= HSA_ACCESS_PERMISSION_RW, HSA_STATUS_ERROR_INVALID_ARGUMENT);
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_memory_copy(void* dst, const void* src, size_t size) {
  SIM_OPEN();
  SIM_CHECK(dst != nullptr && src != nullptr, HSA_STATUS_ERROR_INVALID_ARGUMENT);
  std::memcpy(dst, src, size);
  return HSA_STATUS_SUCCESS;
}

// --- AMD memory pools -------------------------------------------------------

hsa_status_t hsa_amd_agent_iterate_memory_pools(hsa_agent_t agent,
                                                hsa_status_t (*callback)(hsa_amd_memory_pool_t pool, void* data),
                                                void* data) {
  SIM_OPEN();
  Agent* a = toAgent(agent);
  SIM_CHECK(a != nullptr, HSA_STATUS_ERROR_INVALID_AGENT);
  SIM_NOT_NULL(callback);
  struct Ctx {
    hsa_status_t (*cb)(hsa_amd_memory_pool_t, void*);
    void* data;
  } ctx{callback, data};
  auto call = [](uint64_t h, void* c) {
    auto* x = static_cast<Ctx*>(c);
    return x->cb(hsa_amd_memory_pool_t{h}, x->data);
  };
  return isGpu(a) ? iterate(g_gpuPools, call, &ctx) : iterate(g_cpuPools, call, &ctx);
}

hsa_status_t hsa_amd_memory_pool_get_info(hsa_amd_memory_pool_t memory_pool, hsa_amd_memory_pool_info_t attribute,
                                          void* value) {
  SIM_OPEN();
  const Pool* p = toPool(memory_pool.handle);
  SIM_CHECK(p != nullptr, HSA_STATUS_ERROR_INVALID_MEMORY_POOL);
  SIM_NOT_NULL(value);
  switch (attribute) {
    case HSA_AMD_MEMORY_POOL_INFO_SEGMENT:
      *static_cast<hsa_amd_segment_t*>(value) = p->segment;
      break;
    case HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS:
      *static_cast<uint32_t*>(value) = p->global_flags;
      break;
    case HSA_AMD_MEMORY_POOL_INFO_SIZE:
    case HSA_AMD_MEMORY_POOL_INFO_ALLOC_MAX_SIZE:
      *static_cast<size_t*>(value) = size_t(poolSize(p));
      break;
    case HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED:
      *static_cast<bool*>(value) = p->alloc_allowed;
      break;
    case HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_GRANULE:
    case HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALIGNMENT:
      *static_cast<size_t*>(value) = p->alloc_allowed ? kGranule : 0;
      break;
    case HSA_AMD_MEMORY_POOL_INFO_ACCESSIBLE_BY_ALL:
      *static_cast<bool*>(value) = p->accessible_by_all;
      break;
    default:
      return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_amd_agent_memory_pool_get_info(hsa_agent_t agent, hsa_amd_memory_pool_t memory_pool,
                                                hsa_amd_agent_memory_pool_info_t attribute, void* value) {
  SIM_OPEN();
  Agent* a = toAgent(agent);
  SIM_CHECK(a != nullptr, HSA_STATUS_ERROR_INVALID_AGENT);
  const Pool* p = toPool(memory_pool.handle);
  SIM_CHECK(p != nullptr, HSA_STATUS_ERROR_INVALID_MEMORY_POOL);
  SIM_NOT_NULL(value);
  const bool local = p->owner == a;
  switch (attribute) {
    case HSA_AMD_AGENT_MEMORY_POOL_INFO_ACCESS:
      *static_cast<hsa_amd_memory_pool_access_t*>(value) = access(a, p);
      break;
    case HSA_AMD_AGENT_MEMORY_POOL_INFO_NUM_LINK_HOPS:
      *static_cast<uint32_t*>(value) = local ? 0 : 1;
      break;
    case HSA_AMD_AGENT_MEMORY_POOL_INFO_LINK_INFO: {
      // One PCIe hop between the GPU and system memory, like a discrete card.
      hsa_amd_memory_pool_link_info_t link{};
      if (!local) {
        link.link_type = HSA_AMD_LINK_INFO_TYPE_PCIE;
        link.numa_distance = 20;
        link.atomic_support_32bit = link.atomic_support_64bit = link.coherent_support = true;
      }
      *static_cast<hsa_amd_memory_pool_link_info_t*>(value) = link;
      break;
    }
    default:
      return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_amd_memory_pool_allocate(hsa_amd_memory_pool_t memory_pool, size_t size, uint32_t flags, void** ptr) {
  SIM_OPEN();
  const Pool* p = toPool(memory_pool.handle);
  SIM_CHECK(p != nullptr, HSA_STATUS_ERROR_INVALID_MEMORY_POOL);
  SIM_CHECK(ptr != nullptr && size != 0, HSA_STATUS_ERROR_INVALID_ARGUMENT);
  return allocate(p, size, ptr);
}

hsa_status_t hsa_amd_memory_pool_free(void* ptr) {
  SIM_OPEN();
  if (ptr == nullptr) return HSA_STATUS_SUCCESS;
  return release(ptr);
}

hsa_status_t hsa_amd_register_deallocation_callback(void* ptr, hsa_amd_deallocation_callback_t callback,
                                                   void* user_data) {
  SIM_OPEN();
  SIM_NOT_NULL(callback);
  SIM_TRY
  std::lock_guard<std::mutex> lock(g_lock);
  auto it = containing(g_allocations, reinterpret_cast<uintptr_t>(ptr));
  SIM_CHECK(it != g_allocations.end(), HSA_STATUS_ERROR_INVALID_ALLOCATION);
  it->second.notifiers.push_back({ptr, callback, user_data});
  return HSA_STATUS_SUCCESS;
  SIM_CATCH
}

// Drops every registration of (ptr, callback), as ROCr does.
hsa_status_t hsa_amd_deregister_deallocation_callback(void* ptr, hsa_amd_deallocation_callback_t callback) {
  SIM_OPEN();
  std::lock_guard<std::mutex> lock(g_lock);
  auto it = containing(g_allocations, reinterpret_cast<uintptr_t>(ptr));
  SIM_CHECK(it != g_allocations.end(), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  auto& list = it->second.notifiers;
  auto kept = std::remove_if(list.begin(), list.end(),
                             [&](const Notifier& n) { return n.ptr == ptr && n.callback == callback; });
  SIM_CHECK(kept != list.end(), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  list.erase(kept, list.end());
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_amd_memory_pool_can_migrate(hsa_amd_memory_pool_t src_memory_pool,
                                             hsa_amd_memory_pool_t dst_memory_pool, bool* result) {
  SIM_OPEN();
  SIM_CHECK(toPool(src_memory_pool.handle) != nullptr && toPool(dst_memory_pool.handle) != nullptr,
            HSA_STATUS_ERROR_INVALID_MEMORY_POOL);
  SIM_NOT_NULL(result);
  *result = false;  // hsa_amd_memory_migrate is not simulated
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_amd_agents_allow_access(uint32_t num_agents, const hsa_agent_t* agents, const uint32_t* flags,
                                         const void* ptr) {
  SIM_OPEN();
  SIM_CHECK(num_agents != 0 && agents != nullptr && ptr != nullptr, HSA_STATUS_ERROR_INVALID_ARGUMENT);
  std::vector<const Agent*> resolved;
  SIM_TRY
  for (uint32_t i = 0; i < num_agents; ++i) {
    const Agent* a = toAgent(agents[i]);
    SIM_CHECK(a != nullptr, HSA_STATUS_ERROR_INVALID_AGENT);
    resolved.push_back(a);
  }
  std::lock_guard<std::mutex> lock(g_lock);
  auto address = reinterpret_cast<uintptr_t>(ptr);
  auto it = containing(g_allocations, address);
  if (it != g_allocations.end()) {
    it->second.allowed.insert(resolved.begin(), resolved.end());
    return HSA_STATUS_SUCCESS;
  }
  SIM_CHECK(containing(g_locked, address) != g_locked.end(), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  return HSA_STATUS_SUCCESS;
  SIM_CATCH
}

// --- Host memory locking ----------------------------------------------------

namespace {

// Pinning host memory: the GPU shares the host's address space, so the
// pointer for the agents is the host pointer itself.
hsa_status_t lock(void* host_ptr, size_t size, hsa_agent_t* agents, int num_agent, void** agent_ptr) {
  SIM_CHECK(host_ptr != nullptr && size != 0 && agent_ptr != nullptr && num_agent >= 0, HSA_STATUS_ERROR_INVALID_ARGUMENT);
  SIM_CHECK(num_agent == 0 || agents != nullptr, HSA_STATUS_ERROR_INVALID_ARGUMENT);
  for (int i = 0; i < num_agent; ++i) SIM_CHECK(toAgent(agents[i]) != nullptr, HSA_STATUS_ERROR_INVALID_AGENT);
  SIM_TRY
  std::lock_guard<std::mutex> guard(g_lock);
  auto [it, inserted] = g_locked.try_emplace(reinterpret_cast<uintptr_t>(host_ptr), Locked{size, 0});
  it->second.size = std::max<uint64_t>(it->second.size, size);
  ++it->second.count;
  *agent_ptr = host_ptr;
  return HSA_STATUS_SUCCESS;
  SIM_CATCH
}

}  // namespace

hsa_status_t hsa_amd_memory_lock(void* host_ptr, size_t size, hsa_agent_t* agents, int num_agent, void** agent_ptr) {
  SIM_OPEN();
  return lock(host_ptr, size, agents, num_agent, agent_ptr);
}

hsa_status_t hsa_amd_memory_lock_to_pool(void* host_ptr, size_t size, hsa_agent_t* agents, int num_agent,
                                         hsa_amd_memory_pool_t pool, uint32_t flags, void** agent_ptr) {
  SIM_OPEN();
  SIM_CHECK(toPool(pool.handle) != nullptr, HSA_STATUS_ERROR_INVALID_MEMORY_POOL);
  return lock(host_ptr, size, agents, num_agent, agent_ptr);
}

hsa_status_t hsa_amd_memory_unlock(void* host_ptr) {
  SIM_OPEN();
  std::lock_guard<std::mutex> guard(g_lock);
  auto it = g_locked.find(reinterpret_cast<uintptr_t>(host_ptr));
  if (it != g_locked.end() && --it->second.count == 0) g_locked.erase(it);
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_amd_memory_fill(void* ptr, uint32_t value, size_t count) {
  SIM_OPEN();
  SIM_CHECK(ptr != nullptr && reinterpret_cast<uintptr_t>(ptr) % sizeof(uint32_t) == 0,
            HSA_STATUS_ERROR_INVALID_ARGUMENT);
  std::fill_n(static_cast<uint32_t*>(ptr), count, value);
  return HSA_STATUS_SUCCESS;
}

// --- Pointer queries --------------------------------------------------------

hsa_status_t hsa_amd_pointer_info(const void* ptr, hsa_amd_pointer_info_t* info, void* (*alloc)(size_t),
                                  uint32_t* num_agents_accessible, hsa_agent_t** accessible) {
  SIM_OPEN();
  SIM_CHECK(ptr != nullptr && info != nullptr, HSA_STATUS_ERROR_INVALID_ARGUMENT);
  SIM_CHECK(info->size >= offsetof(hsa_amd_pointer_info_t, type) + sizeof(info->type), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  hsa_amd_pointer_info_t result{};
  result.size = uint32_t(std::min<size_t>(info->size, sizeof result));
  result.type = HSA_EXT_POINTER_TYPE_UNKNOWN;
  std::vector<const Agent*> reach;
  SIM_TRY
  {
    std::lock_guard<std::mutex> lock(g_lock);
    auto address = reinterpret_cast<uintptr_t>(ptr);
    if (auto it = containing(g_allocations, address); it != g_allocations.end()) {
      const Allocation& a = it->second;
      result.type = HSA_EXT_POINTER_TYPE_HSA;
      result.agentBaseAddress = result.hostBaseAddress = reinterpret_cast<void*>(it->first);
      result.sizeInBytes = a.size;
      result.userData = a.user_data;
      result.agentOwner = toHandle(a.pool->owner);
      result.global_flags = a.pool->global_flags;
      for (const Agent* agent : {&cpuAgent(), &gpuAgent()}) {
        if (access(agent, a.pool) == HSA_AMD_MEMORY_POOL_ACCESS_ALLOWED_BY_DEFAULT || a.allowed.count(agent) != 0) {
          reach.push_back(agent);
        }
      }
    } else if (auto lt = containing(g_locked, address); lt != g_locked.end()) {
      result.type = HSA_EXT_POINTER_TYPE_LOCKED;
      result.agentBaseAddress = result.hostBaseAddress = reinterpret_cast<void*>(lt->first);
      result.sizeInBytes = lt->second.size;
      result.userData = lt->second.user_data;
      result.agentOwner = toHandle(&cpuAgent());
      result.global_flags = HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED;
      reach.push_back(&gpuAgent());
    }
  }
  // Fields past the caller's size are left alone: the struct grows between releases.
  std::memcpy(info, &result, result.size);
  if (num_agents_accessible != nullptr) *num_agents_accessible = uint32_t(reach.size());
  if (accessible != nullptr) {
    SIM_CHECK(alloc != nullptr, HSA_STATUS_ERROR_INVALID_ARGUMENT);
    auto* list = static_cast<hsa_agent_t*>(alloc(std::max<size_t>(reach.size(), 1) * sizeof(hsa_agent_t)));
    SIM_CHECK(list != nullptr, HSA_STATUS_ERROR_OUT_OF_RESOURCES);
    for (size_t i = 0; i < reach.size(); ++i) list[i] = toHandle(reach[i]);
    *accessible = list;
  }
  return HSA_STATUS_SUCCESS;
  SIM_CATCH
}

hsa_status_t hsa_amd_pointer_info_set_userdata(const void* ptr, void* userdata) {
  SIM_OPEN();
  SIM_NOT_NULL(ptr);
  std::lock_guard<std::mutex> lock(g_lock);
  auto address = reinterpret_cast<uintptr_t>(ptr);
  if (auto it = g_allocations.find(address); it != g_allocations.end()) {
    it->second.user_data = userdata;
    return HSA_STATUS_SUCCESS;
  }
  if (auto lt = g_locked.find(address); lt != g_locked.end()) {
    lt->second.user_data = userdata;
    return HSA_STATUS_SUCCESS;
  }
  return HSA_STATUS_ERROR_INVALID_ARGUMENT;
}

}  // namespace sim_hsa
