// Fences: signaled by a queue's worker when the command lists of the
// zeCommandQueueExecuteCommandLists call that carried them have finished.
#include "api.h"
#include "objects.h"
#include "sync.h"

namespace sim {

ze_result_t zeFenceCreate(ze_command_queue_handle_t hCommandQueue, const ze_fence_desc_t* desc,
                          ze_fence_handle_t* phFence) {
  SIM_LOOKUP(queue, CommandQueue, hCommandQueue);
  SIM_NOT_NULL(desc);
  SIM_NOT_NULL(phFence);
  SIM_CHECK(desc->flags <= ZE_FENCE_FLAG_SIGNALED, ZE_RESULT_ERROR_INVALID_ENUMERATION);
  auto fence = std::make_shared<Fence>(static_cast<const Object*>(queue.get()));
  fence->signaled = (desc->flags & ZE_FENCE_FLAG_SIGNALED) != 0;  // not shared yet: no lock needed
  registerObject(fence);
  *phFence = toHandle<ze_fence_handle_t>(fence);
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeFenceDestroy(ze_fence_handle_t hFence) {
  std::shared_ptr<Fence> fence;
  return take(hFence, fence);
}

ze_result_t zeFenceHostSynchronize(ze_fence_handle_t hFence, uint64_t timeout) {
  SIM_LOOKUP(fence, Fence, hFence);
  std::unique_lock lock(sync::mutex());
  return sync::waitFor(lock, timeout, [&] { return fence->signaled; });
}

ze_result_t zeFenceQueryStatus(ze_fence_handle_t hFence) {
  SIM_LOOKUP(fence, Fence, hFence);
  std::lock_guard lock(sync::mutex());
  return fence->signaled ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
}

ze_result_t zeFenceReset(ze_fence_handle_t hFence) {
  SIM_LOOKUP(fence, Fence, hFence);
  std::lock_guard lock(sync::mutex());
  fence->signaled = false;
  return ZE_RESULT_SUCCESS;
}

}  // namespace sim
