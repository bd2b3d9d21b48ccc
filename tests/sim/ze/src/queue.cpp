// Command queues: each owns an Engine (a worker thread) that runs the
// submitted command lists in submission order.
#include "api.h"
#include "engine.h"

namespace sim {

CommandQueue::CommandQueue() : Object(kKind) {}
CommandQueue::~CommandQueue() = default;

// Shared by queues and immediate command lists, which take the same
// descriptor.
ze_result_t checkQueueDesc(const ze_command_queue_desc_t* desc) {
#ifdef GTAP_SIM_HAS_COUNTER_BASED_EVENTS
  // IN_ORDER is for immediate lists; every queue here runs in order anyway.
  SIM_CHECK(desc->flags <= (ZE_COMMAND_QUEUE_FLAG_EXPLICIT_ONLY | ZE_COMMAND_QUEUE_FLAG_IN_ORDER),
            ZE_RESULT_ERROR_INVALID_ENUMERATION);
#else
  SIM_CHECK(desc->flags <= ZE_COMMAND_QUEUE_FLAG_EXPLICIT_ONLY, ZE_RESULT_ERROR_INVALID_ENUMERATION);
#endif
  SIM_CHECK(desc->mode <= ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS, ZE_RESULT_ERROR_INVALID_ENUMERATION);
  SIM_CHECK(desc->priority <= ZE_COMMAND_QUEUE_PRIORITY_PRIORITY_HIGH, ZE_RESULT_ERROR_INVALID_ENUMERATION);
  SIM_CHECK(desc->ordinal < kNumQueueGroups, ZE_RESULT_ERROR_INVALID_ARGUMENT);
  SIM_CHECK(desc->index < queueGroup(desc->ordinal).numQueues, ZE_RESULT_ERROR_INVALID_ARGUMENT);
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeCommandQueueCreate(ze_context_handle_t hContext, ze_device_handle_t hDevice,
                                 const ze_command_queue_desc_t* desc, ze_command_queue_handle_t* phCommandQueue) {
  SIM_LOOKUP(context, Context, hContext);
  SIM_LOOKUP(device, Device, hDevice);
  SIM_NOT_NULL(desc);
  SIM_NOT_NULL(phCommandQueue);
  if (ze_result_t r = checkQueueDesc(desc); r != ZE_RESULT_SUCCESS) return r;
  auto queue = std::make_shared<CommandQueue>();
  queue->ordinal = desc->ordinal;
  queue->index = desc->index;
  queue->mode = desc->mode;
  queue->engine = std::make_unique<Engine>(!groupCanCompute(queue->ordinal));
  registerObject(queue);
  *phCommandQueue = toHandle<ze_command_queue_handle_t>(queue);
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeCommandQueueDestroy(ze_command_queue_handle_t hCommandQueue) {
  std::shared_ptr<CommandQueue> queue;
  if (ze_result_t r = take(hCommandQueue, queue); r != ZE_RESULT_SUCCESS) return r;
  queue->engine->shutdown();  // queued work still runs; then the thread ends
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeCommandQueueExecuteCommandLists(ze_command_queue_handle_t hCommandQueue, uint32_t numCommandLists,
                                              ze_command_list_handle_t* phCommandLists, ze_fence_handle_t hFence) {
  SIM_LOOKUP(queue, CommandQueue, hCommandQueue);
  SIM_NOT_NULL(phCommandLists);
  SIM_CHECK(numCommandLists != 0, ZE_RESULT_ERROR_INVALID_SIZE);
  Engine::Streams streams;
  streams.reserve(numCommandLists);
  for (uint32_t i = 0; i < numCommandLists; ++i) {
    SIM_LOOKUP(list, CommandList, phCommandLists[i]);
    SIM_CHECK(!list->immediate, ZE_RESULT_ERROR_INVALID_ARGUMENT);
    SIM_CHECK(list->ordinal == queue->ordinal, ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE);
    std::lock_guard lock(list->mutex);
    SIM_CHECK(list->closed, ZE_RESULT_ERROR_INVALID_ARGUMENT);
    // The stream of a closed list never changes (reset replaces it), so the
    // worker can read it while the program records into the list again.
    streams.push_back(list->stream);
  }
  std::shared_ptr<Fence> fence;
  if (hFence != nullptr) {
    if (ze_result_t r = lookup(hFence, fence); r != ZE_RESULT_SUCCESS) return r;
    SIM_CHECK(fence->queue == static_cast<const Object*>(queue.get()), ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT);
  }
  uint64_t seq = queue->engine->submit(std::move(streams), std::move(fence));
  if (queue->mode == ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS) return queue->engine->wait(seq, UINT64_MAX);
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeCommandQueueSynchronize(ze_command_queue_handle_t hCommandQueue, uint64_t timeout) {
  SIM_LOOKUP(queue, CommandQueue, hCommandQueue);
  return queue->engine->waitIdle(timeout);
}

}  // namespace sim
