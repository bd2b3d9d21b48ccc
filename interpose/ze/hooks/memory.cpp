// Allocations and frees: recorded with kind, size, device and address; the
// ranges also tell copies' directions.
#include "hook.h"

namespace gtap::ze {

namespace {
constexpr uint8_t kind(schema::MemoryKind k) { return static_cast<uint8_t>(k); }
}  // namespace

// An allocation is numbered once the runtime returned it: its address may be
// one another thread's zeMemFree gave back meanwhile, whose record (numbered
// before that free) must come first.
GTAP_ZE_HOOK(zeMemAllocHost, ze_context_handle_t context, const ze_host_mem_alloc_desc_t* desc, size_t size,
             size_t alignment, void** out) {
  ze_result_t r = real(context, desc, size, alignment, out);
  uint64_t rs = replaySeq(scope);
  if (r == ZE_RESULT_SUCCESS && out && rs)
    replayRecorder().memAllocated(rs, scope, kind(schema::MemoryKind::HOST), context, nullptr, size, alignment, *out);
  if (r == ZE_RESULT_SUCCESS && out && profiling(scope))
    profiler().allocated(kind(schema::MemoryKind::HOST), *out, size, alignment, nullptr, scope);
  return r;
}

GTAP_ZE_HOOK(zeMemAllocDevice, ze_context_handle_t context, const ze_device_mem_alloc_desc_t* desc, size_t size,
             size_t alignment, ze_device_handle_t device, void** out) {
  ze_result_t r = real(context, desc, size, alignment, device, out);
  uint64_t rs = replaySeq(scope);
  if (r == ZE_RESULT_SUCCESS && out && rs)
    replayRecorder().memAllocated(rs, scope, kind(schema::MemoryKind::DEVICE), context, device, size, alignment, *out);
  if (r == ZE_RESULT_SUCCESS && out && profiling(scope))
    profiler().allocated(kind(schema::MemoryKind::DEVICE), *out, size, alignment, device, scope);
  return r;
}

GTAP_ZE_HOOK(zeMemAllocShared, ze_context_handle_t context, const ze_device_mem_alloc_desc_t* deviceDesc,
             const ze_host_mem_alloc_desc_t* hostDesc, size_t size, size_t alignment, ze_device_handle_t device,
             void** out) {
  ze_result_t r = real(context, deviceDesc, hostDesc, size, alignment, device, out);
  uint64_t rs = replaySeq(scope);
  if (r == ZE_RESULT_SUCCESS && out && rs)
    replayRecorder().memAllocated(rs, scope, kind(schema::MemoryKind::SHARED), context, device, size, alignment, *out);
  if (r == ZE_RESULT_SUCCESS && out && profiling(scope))
    profiler().allocated(kind(schema::MemoryKind::SHARED), *out, size, alignment, device, scope);
  return r;
}

GTAP_ZE_HOOK(zeMemFree, ze_context_handle_t context, void* ptr) {
  // Recorded first: once freed, the address may be handed out again at once.
  if (ptr && profiling(scope)) profiler().freeing(ptr, scope);
  uint64_t rs = ptr && replaying(scope) ? replayRecorder().memFreeing(scope, context, ptr) : 0;
  ze_result_t r = real(context, ptr);
  if (r != ZE_RESULT_SUCCESS && rs) replayRecorder().failed(rs, scope);
  return r;
}

GTAP_ZE_HOOK(zeMemFreeExt, ze_context_handle_t context, const ze_memory_free_ext_desc_t* desc, void* ptr) {
  if (ptr && profiling(scope)) profiler().freeing(ptr, scope);
  uint64_t rs = ptr && replaying(scope) ? replayRecorder().memFreeing(scope, context, ptr) : 0;
  ze_result_t r = real(context, desc, ptr);
  if (r != ZE_RESULT_SUCCESS && rs) replayRecorder().failed(rs, scope);
  return r;
}

}  // namespace gtap::ze
