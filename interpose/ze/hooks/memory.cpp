// Allocations and frees: recorded with kind, size, device and address; the
// ranges also tell copies' directions.
#include "hook.h"

namespace gtap::ze {

namespace {
Profiler& P() { return Profiler::get(); }
constexpr uint8_t kind(schema::MemoryKind k) { return static_cast<uint8_t>(k); }
}  // namespace

GTAP_ZE_HOOK(zeMemAllocHost, ze_context_handle_t context, const ze_host_mem_alloc_desc_t* desc, size_t size,
             size_t alignment, void** out) {
  ze_result_t r = real(context, desc, size, alignment, out);
  if (r == ZE_RESULT_SUCCESS && out && profiling(scope))
    P().allocated(kind(schema::MemoryKind::HOST), *out, size, alignment, nullptr, scope);
  return r;
}

GTAP_ZE_HOOK(zeMemAllocDevice, ze_context_handle_t context, const ze_device_mem_alloc_desc_t* desc, size_t size,
             size_t alignment, ze_device_handle_t device, void** out) {
  ze_result_t r = real(context, desc, size, alignment, device, out);
  if (r == ZE_RESULT_SUCCESS && out && profiling(scope))
    P().allocated(kind(schema::MemoryKind::DEVICE), *out, size, alignment, device, scope);
  return r;
}

GTAP_ZE_HOOK(zeMemAllocShared, ze_context_handle_t context, const ze_device_mem_alloc_desc_t* deviceDesc,
             const ze_host_mem_alloc_desc_t* hostDesc, size_t size, size_t alignment, ze_device_handle_t device,
             void** out) {
  ze_result_t r = real(context, deviceDesc, hostDesc, size, alignment, device, out);
  if (r == ZE_RESULT_SUCCESS && out && profiling(scope))
    P().allocated(kind(schema::MemoryKind::SHARED), *out, size, alignment, device, scope);
  return r;
}

GTAP_ZE_HOOK(zeMemFree, ze_context_handle_t context, void* ptr) {
  // Recorded first: once freed, the address may be handed out again at once.
  if (ptr && profiling(scope)) P().freeing(ptr, scope);
  return real(context, ptr);
}

}  // namespace gtap::ze
