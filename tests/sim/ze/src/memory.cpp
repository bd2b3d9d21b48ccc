// Unified shared memory. Every kind of allocation is ordinary host memory
// here; the driver only remembers what kind the program asked for, so
// zeMemGetAllocProperties and zeMemGetAddressRange answer like a real driver.
//
// Allocations are page aligned and padded to whole pages (64 KiB for device
// memory, like real device heaps), so a tool that write-protects an
// allocation's pages never touches another allocation.
#include "api.h"
#include "objects.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

namespace sim {

namespace {

constexpr size_t kHostPage = 4096;
constexpr size_t kDevicePage = 64 * 1024;
constexpr uint64_t kMaxAllocSize = 4ull << 30;  // matches maxMemAllocSize

struct Allocation {
  size_t size;
  ze_memory_type_t type;
  const void* device;  // handle of the associated device, or null
  uint64_t id;
};

struct Allocations {
  std::mutex mutex;
  std::map<uintptr_t, Allocation> byBase;
  uint64_t nextId = 1;
};

Allocations*& allocationsSlot() {
  static Allocations* a = new Allocations;  // outlives static destruction
  return a;
}

Allocations& allocations() { return *allocationsSlot(); }

// Finds the allocation containing ptr; caller holds the mutex.
std::map<uintptr_t, Allocation>::iterator findContaining(Allocations& a, const void* ptr) {
  auto p = reinterpret_cast<uintptr_t>(ptr);
  auto it = a.byBase.upper_bound(p);
  if (it == a.byBase.begin()) return a.byBase.end();
  --it;
  return p < it->first + it->second.size ? it : a.byBase.end();
}

ze_result_t allocate(ze_memory_type_t type, size_t size, size_t alignment, const void* device, void** pptr) {
  SIM_CHECK(size != 0, ZE_RESULT_ERROR_UNSUPPORTED_SIZE);
  SIM_CHECK((alignment & (alignment - 1)) == 0, ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT);
  SIM_CHECK(size <= kMaxAllocSize, ZE_RESULT_ERROR_UNSUPPORTED_SIZE);
  size_t page = type == ZE_MEMORY_TYPE_DEVICE ? kDevicePage : kHostPage;
  size_t align = alignment > page ? alignment : page;
  size_t padded = (size + page - 1) / page * page;
  void* p = nullptr;
  if (posix_memalign(&p, align, padded) != 0 || p == nullptr) {
    return type == ZE_MEMORY_TYPE_HOST ? ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY : ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
  }
  // Zeroed, so runs (and replays) never depend on leftovers of earlier ones.
  std::memset(p, 0, padded);
  auto& a = allocations();
  {
    std::lock_guard lock(a.mutex);
    a.byBase[reinterpret_cast<uintptr_t>(p)] = Allocation{size, type, device, a.nextId++};
  }
  *pptr = p;
  return ZE_RESULT_SUCCESS;
}

ze_result_t release(void* ptr) {
  auto& a = allocations();
  {
    std::lock_guard lock(a.mutex);
    auto it = a.byBase.find(reinterpret_cast<uintptr_t>(ptr));
    // Only the base address of a live allocation may be freed.
    if (it == a.byBase.end()) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    a.byBase.erase(it);
  }
  std::free(ptr);
  return ZE_RESULT_SUCCESS;
}

constexpr ze_device_mem_alloc_flags_t kDeviceFlags = 0x7;
constexpr ze_host_mem_alloc_flags_t kHostFlags = 0xf;

}  // namespace

// Allocations stay valid in a forked child (its memory is a copy), so their
// records move to a fresh table with a lock no thread of the parent holds.
void memoryForkPrepare() { allocations().mutex.lock(); }
void memoryForkParent() { allocations().mutex.unlock(); }
void memoryForkChild() {
  Allocations* old = allocationsSlot();
  auto* fresh = new Allocations;
  fresh->byBase = old->byBase;
  fresh->nextId = old->nextId;
  allocationsSlot() = fresh;  // the old table stays locked and unused
}

ze_result_t zeMemAllocShared(ze_context_handle_t hContext, const ze_device_mem_alloc_desc_t* device_desc,
                             const ze_host_mem_alloc_desc_t* host_desc, size_t size, size_t alignment,
                             ze_device_handle_t hDevice, void** pptr) {
  SIM_LOOKUP(context, Context, hContext);
  std::shared_ptr<Device> device;
  if (hDevice != nullptr) {  // optional: no device means host-affine shared memory
    if (ze_result_t r = lookup(hDevice, device); r != ZE_RESULT_SUCCESS) return r;
  }
  SIM_NOT_NULL(device_desc);
  SIM_NOT_NULL(host_desc);
  SIM_NOT_NULL(pptr);
  SIM_CHECK(device_desc->flags <= kDeviceFlags, ZE_RESULT_ERROR_INVALID_ENUMERATION);
  SIM_CHECK(host_desc->flags <= kHostFlags, ZE_RESULT_ERROR_INVALID_ENUMERATION);
  SIM_CHECK(device_desc->ordinal == 0, ZE_RESULT_ERROR_INVALID_ARGUMENT);  // one memory
  return allocate(ZE_MEMORY_TYPE_SHARED, size, alignment, static_cast<const Object*>(device.get()), pptr);
}

ze_result_t zeMemAllocDevice(ze_context_handle_t hContext, const ze_device_mem_alloc_desc_t* device_desc,
                             size_t size, size_t alignment, ze_device_handle_t hDevice, void** pptr) {
  SIM_LOOKUP(context, Context, hContext);
  SIM_LOOKUP(device, Device, hDevice);
  SIM_NOT_NULL(device_desc);
  SIM_NOT_NULL(pptr);
  SIM_CHECK(device_desc->flags <= kDeviceFlags, ZE_RESULT_ERROR_INVALID_ENUMERATION);
  SIM_CHECK(device_desc->ordinal == 0, ZE_RESULT_ERROR_INVALID_ARGUMENT);
  return allocate(ZE_MEMORY_TYPE_DEVICE, size, alignment, static_cast<const Object*>(device.get()), pptr);
}

ze_result_t zeMemAllocHost(ze_context_handle_t hContext, const ze_host_mem_alloc_desc_t* host_desc, size_t size,
                           size_t alignment, void** pptr) {
  SIM_LOOKUP(context, Context, hContext);
  SIM_NOT_NULL(host_desc);
  SIM_NOT_NULL(pptr);
  SIM_CHECK(host_desc->flags <= kHostFlags, ZE_RESULT_ERROR_INVALID_ENUMERATION);
  return allocate(ZE_MEMORY_TYPE_HOST, size, alignment, nullptr, pptr);
}

ze_result_t zeMemFree(ze_context_handle_t hContext, void* ptr) {
  SIM_LOOKUP(context, Context, hContext);
  SIM_NOT_NULL(ptr);
  return release(ptr);
}

ze_result_t zeMemFreeExt(ze_context_handle_t hContext, const ze_memory_free_ext_desc_t* pMemFreeDesc, void* ptr) {
  SIM_LOOKUP(context, Context, hContext);
  SIM_NOT_NULL(pMemFreeDesc);
  SIM_NOT_NULL(ptr);
  SIM_CHECK(pMemFreeDesc->freePolicy <= 0x3, ZE_RESULT_ERROR_INVALID_ENUMERATION);
  // Every policy frees at once: the program must not free memory queued work
  // still uses, exactly as with zeMemFree.
  return release(ptr);
}

ze_result_t zeMemGetAllocProperties(ze_context_handle_t hContext, const void* ptr,
                                    ze_memory_allocation_properties_t* props, ze_device_handle_t* phDevice) {
  SIM_LOOKUP(context, Context, hContext);
  SIM_NOT_NULL(ptr);
  SIM_NOT_NULL(props);
  auto& a = allocations();
  std::lock_guard lock(a.mutex);
  auto it = findContaining(a, ptr);
  if (it == a.byBase.end()) {
    // Not ours: the specification's answer is "unknown", not an error.
    props->type = ZE_MEMORY_TYPE_UNKNOWN;
    props->id = 0;
    props->pageSize = 0;
    if (phDevice != nullptr) *phDevice = nullptr;
    return ZE_RESULT_SUCCESS;
  }
  const Allocation& alloc = it->second;
  props->type = alloc.type;
  props->id = alloc.id;
  props->pageSize = alloc.type == ZE_MEMORY_TYPE_DEVICE ? kDevicePage : kHostPage;
  if (phDevice != nullptr) {
    *phDevice = reinterpret_cast<ze_device_handle_t>(const_cast<void*>(alloc.device));
  }
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeMemGetAddressRange(ze_context_handle_t hContext, const void* ptr, void** pBase, size_t* pSize) {
  SIM_LOOKUP(context, Context, hContext);
  SIM_NOT_NULL(ptr);
  auto& a = allocations();
  std::lock_guard lock(a.mutex);
  auto it = findContaining(a, ptr);
  if (it == a.byBase.end()) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  if (pBase != nullptr) *pBase = reinterpret_cast<void*>(it->first);
  if (pSize != nullptr) *pSize = it->second.size;
  return ZE_RESULT_SUCCESS;
}

}  // namespace sim
