// Calls that only replay needs to see: kernel state set before launches,
// list closing, host signals and fences.
#include "hook.h"

namespace gtap::ze {

namespace {
using ROp = ReplayRecorder::Op;

// Makes the call and, when it succeeded, a record naming one object.
template <typename Call>
ze_result_t recorded(core::CallScope& scope, ROp op, const void* handle, std::vector<uint64_t> values, Call&& call) {
  uint64_t rs = replaySeq(scope);
  ze_result_t r = call();
  if (r == ZE_RESULT_SUCCESS && rs) replayRecorder().simple(rs, scope, op, handle, std::move(values));
  return r;
}
}  // namespace

GTAP_ZE_HOOK(zeKernelSetArgumentValue, ze_kernel_handle_t kernel, uint32_t index, size_t size, const void* value) {
  uint64_t rs = replaySeq(scope);
  ze_result_t r = real(kernel, index, size, value);
  if (r == ZE_RESULT_SUCCESS && rs) replayRecorder().kernelArgument(rs, scope, kernel, index, size, value);
  return r;
}

GTAP_ZE_HOOK(zeKernelSetIndirectAccess, ze_kernel_handle_t kernel, ze_kernel_indirect_access_flags_t flags) {
  return recorded(scope, ROp::KERNEL_SET_INDIRECT_ACCESS, kernel, {flags}, [&] { return real(kernel, flags); });
}

GTAP_ZE_HOOK(zeKernelSetGlobalOffsetExp, ze_kernel_handle_t kernel, uint32_t x, uint32_t y, uint32_t z) {
  return recorded(scope, ROp::KERNEL_SET_GLOBAL_OFFSET, kernel, {x, y, z}, [&] { return real(kernel, x, y, z); });
}

GTAP_ZE_HOOK(zeCommandListClose, ze_command_list_handle_t list) {
  return recorded(scope, ROp::LIST_CLOSE, list, {}, [&] { return real(list); });
}

GTAP_ZE_HOOK(zeEventHostSignal, ze_event_handle_t event) {
  return recorded(scope, ROp::EVENT_HOST_SIGNAL, event, {}, [&] { return real(event); });
}

GTAP_ZE_HOOK(zeFenceCreate, ze_command_queue_handle_t queue, const ze_fence_desc_t* desc, ze_fence_handle_t* out) {
  uint64_t rs = replaySeq(scope);
  ze_result_t r = real(queue, desc, out);
  if (r == ZE_RESULT_SUCCESS && out && rs) replayRecorder().fenceCreated(rs, scope, *out, queue, desc);
  return r;
}

GTAP_ZE_HOOK(zeFenceDestroy, ze_fence_handle_t fence) {
  uint64_t rs = replaySeq(scope);
  ze_result_t r = real(fence);
  if (r == ZE_RESULT_SUCCESS && rs) replayRecorder().destroyed(rs, scope, ROp::FENCE_DESTROY, fence);
  return r;
}

GTAP_ZE_HOOK(zeFenceReset, ze_fence_handle_t fence) {
  return recorded(scope, ROp::FENCE_RESET, fence, {}, [&] { return real(fence); });
}

}  // namespace gtap::ze
