// Runtime objects: devices, contexts, modules (with their binaries), kernels,
// queues, command lists, event pools and events.
#include "hook.h"
#include "device_metrics.h"

namespace gtap::ze {

namespace {
constexpr uint8_t kind(schema::ObjectKind k) { return static_cast<uint8_t>(k); }
}  // namespace

GTAP_ZE_HOOK(zeDeviceGet, ze_driver_handle_t driver, uint32_t* count, ze_device_handle_t* devices) {
  ze_result_t r = real(driver, count, devices);
  // Device metrics (GTAP_METRICS_INTERVAL_MS) are sampled in any mode.
  if (r == ZE_RESULT_SUCCESS && devices && count && (profiling(scope) || (!scope.nested() && DeviceMetrics::on())))
    profiler().devicesSeen(driver, *count, devices);
  if (r == ZE_RESULT_SUCCESS && devices && count && replaying(scope)) replayRecorder().devicesSeen(driver, *count, devices, scope);
  return r;
}

GTAP_ZE_HOOK(zeContextCreate, ze_driver_handle_t driver, const ze_context_desc_t* desc, ze_context_handle_t* out) {
  uint64_t rs = replaySeq(scope);
  ze_result_t r = real(driver, desc, out);
  if (r == ZE_RESULT_SUCCESS && out && rs) replayRecorder().contextCreated(rs, scope, *out, desc, 0, nullptr);
  if (r == ZE_RESULT_SUCCESS && out && profiling(scope))
    profiler().objectCreated(kind(schema::ObjectKind::CONTEXT), *out, nullptr, nullptr, desc ? desc->flags : 0, 0, 0, scope);
  return r;
}

GTAP_ZE_HOOK(zeContextCreateEx, ze_driver_handle_t driver, const ze_context_desc_t* desc, uint32_t numDevices,
             ze_device_handle_t* devices, ze_context_handle_t* out) {
  uint64_t rs = replaySeq(scope);
  ze_result_t r = real(driver, desc, numDevices, devices, out);
  if (r == ZE_RESULT_SUCCESS && out && rs) replayRecorder().contextCreated(rs, scope, *out, desc, numDevices, devices);
  if (r == ZE_RESULT_SUCCESS && out && profiling(scope))
    profiler().objectCreated(kind(schema::ObjectKind::CONTEXT), *out, nullptr, nullptr, desc ? desc->flags : 0, 0, 0, scope);
  return r;
}

GTAP_ZE_HOOK(zeContextDestroy, ze_context_handle_t context) {
  // gtap's own events live in the context: they go first.
  if (profiling(scope)) profiler().contextDestroying(context);
  const void* token = profiling(scope) ? profiler().objectToken(context) : nullptr;
  uint64_t rs = replaySeq(scope);
  ze_result_t r = real(context);
  if (r == ZE_RESULT_SUCCESS && token) profiler().objectDestroyed(context, token);
  if (r == ZE_RESULT_SUCCESS && rs) replayRecorder().destroyed(rs, scope, ReplayRecorder::Op::CONTEXT_DESTROY, context);
  return r;
}

GTAP_ZE_HOOK(zeModuleCreate, ze_context_handle_t context, ze_device_handle_t device, const ze_module_desc_t* desc,
             ze_module_handle_t* out, ze_module_build_log_handle_t* log) {
  uint64_t rs = replaySeq(scope);
  ze_result_t r = real(context, device, desc, out, log);
  if (r == ZE_RESULT_SUCCESS && out && rs) replayRecorder().moduleCreated(rs, scope, *out, context, device, desc);
  if (r == ZE_RESULT_SUCCESS && out && profiling(scope)) profiler().moduleCreated(*out, context, device, desc, scope);
  return r;
}

GTAP_ZE_HOOK(zeModuleDestroy, ze_module_handle_t module) {
  const void* token = profiling(scope) ? profiler().objectToken(module) : nullptr;
  uint64_t rs = replaySeq(scope);
  ze_result_t r = real(module);
  if (r == ZE_RESULT_SUCCESS && token) profiler().objectDestroyed(module, token);
  if (r == ZE_RESULT_SUCCESS && rs) replayRecorder().destroyed(rs, scope, ReplayRecorder::Op::MODULE_DESTROY, module);
  return r;
}

GTAP_ZE_HOOK(zeKernelCreate, ze_module_handle_t module, const ze_kernel_desc_t* desc, ze_kernel_handle_t* out) {
  uint64_t rs = replaySeq(scope);
  ze_result_t r = real(module, desc, out);
  if (r == ZE_RESULT_SUCCESS && out && rs) replayRecorder().kernelCreated(rs, scope, *out, module, desc);
  if (r == ZE_RESULT_SUCCESS && out && profiling(scope))
    profiler().kernelCreated(*out, module, desc ? desc->pKernelName : nullptr, scope);
  return r;
}

GTAP_ZE_HOOK(zeKernelDestroy, ze_kernel_handle_t kernel) {
  const void* token = profiling(scope) ? profiler().objectToken(kernel) : nullptr;
  uint64_t rs = replaySeq(scope);
  ze_result_t r = real(kernel);
  if (r == ZE_RESULT_SUCCESS && token) profiler().objectDestroyed(kernel, token);
  if (r == ZE_RESULT_SUCCESS && rs) replayRecorder().destroyed(rs, scope, ReplayRecorder::Op::KERNEL_DESTROY, kernel);
  return r;
}

GTAP_ZE_HOOK(zeKernelSetGroupSize, ze_kernel_handle_t kernel, uint32_t x, uint32_t y, uint32_t z) {
  uint64_t rs = replaySeq(scope);
  ze_result_t r = real(kernel, x, y, z);
  if (r == ZE_RESULT_SUCCESS && rs) replayRecorder().simple(rs, scope, ReplayRecorder::Op::KERNEL_SET_GROUP_SIZE, kernel, {x, y, z});
  if (r == ZE_RESULT_SUCCESS && profiling(scope)) profiler().kernelGroupSize(kernel, x, y, z);
  return r;
}

GTAP_ZE_HOOK(zeCommandQueueCreate, ze_context_handle_t context, ze_device_handle_t device,
             const ze_command_queue_desc_t* desc, ze_command_queue_handle_t* out) {
  uint64_t rs = replaySeq(scope);
  ze_result_t r = real(context, device, desc, out);
  if (r == ZE_RESULT_SUCCESS && out && rs) replayRecorder().queueCreated(rs, scope, *out, context, device, desc);
  if (r == ZE_RESULT_SUCCESS && out && profiling(scope))
    profiler().objectCreated(kind(schema::ObjectKind::COMMAND_QUEUE), *out, context, device, desc ? desc->flags : 0,
                      desc ? desc->ordinal : 0, desc ? desc->index : 0, scope);
  return r;
}

GTAP_ZE_HOOK(zeCommandQueueDestroy, ze_command_queue_handle_t queue) {
  if (profiling(scope)) profiler().resolve();
  const void* token = profiling(scope) ? profiler().objectToken(queue) : nullptr;
  uint64_t rs = replaySeq(scope);
  ze_result_t r = real(queue);
  if (r == ZE_RESULT_SUCCESS && token) profiler().objectDestroyed(queue, token);
  if (r == ZE_RESULT_SUCCESS && rs) replayRecorder().destroyed(rs, scope, ReplayRecorder::Op::QUEUE_DESTROY, queue);
  return r;
}

GTAP_ZE_HOOK(zeCommandListCreate, ze_context_handle_t context, ze_device_handle_t device,
             const ze_command_list_desc_t* desc, ze_command_list_handle_t* out) {
  uint64_t rs = replaySeq(scope);
  ze_result_t r = real(context, device, desc, out);
  if (r == ZE_RESULT_SUCCESS && out && rs) replayRecorder().listCreated(rs, scope, *out, context, device, desc);
  if (r == ZE_RESULT_SUCCESS && out && profiling(scope))
    profiler().listCreated(*out, context, device, false, desc ? desc->commandQueueGroupOrdinal : 0, 0,
                    desc ? desc->flags : 0, scope);
  return r;
}

GTAP_ZE_HOOK(zeCommandListCreateImmediate, ze_context_handle_t context, ze_device_handle_t device,
             const ze_command_queue_desc_t* desc, ze_command_list_handle_t* out) {
  uint64_t rs = replaySeq(scope);
  ze_result_t r = real(context, device, desc, out);
  if (r == ZE_RESULT_SUCCESS && out && rs) replayRecorder().immediateListCreated(rs, scope, *out, context, device, desc);
  if (r == ZE_RESULT_SUCCESS && out && profiling(scope))
    profiler().listCreated(*out, context, device, true, desc ? desc->ordinal : 0, desc ? desc->index : 0,
                    desc ? desc->flags : 0, scope);
  return r;
}

GTAP_ZE_HOOK(zeCommandListDestroy, ze_command_list_handle_t list) {
  if (profiling(scope)) profiler().listReset(list);
  const void* token = profiling(scope) ? profiler().objectToken(list) : nullptr;
  uint64_t rs = replaySeq(scope);
  ze_result_t r = real(list);
  if (r == ZE_RESULT_SUCCESS && token) profiler().objectDestroyed(list, token);
  if (r == ZE_RESULT_SUCCESS && rs) replayRecorder().destroyed(rs, scope, ReplayRecorder::Op::LIST_DESTROY, list);
  return r;
}

GTAP_ZE_HOOK(zeCommandListReset, ze_command_list_handle_t list) {
  if (profiling(scope)) profiler().listReset(list);
  uint64_t rs = replaySeq(scope);
  ze_result_t r = real(list);
  if (r == ZE_RESULT_SUCCESS && rs) replayRecorder().simple(rs, scope, ReplayRecorder::Op::LIST_RESET, list);
  return r;
}

namespace {
ze_result_t createEventPool(core::RealCall<decltype(&zeEventPoolCreate)>& real, core::CallScope& scope,
                            ze_context_handle_t context, const ze_event_pool_desc_t* desc, uint32_t numDevices,
                            ze_device_handle_t* devices, ze_event_pool_handle_t* out) {
  if (!desc || !profiling(scope) || !recordKernels()) return real(context, desc, numDevices, devices, out);
  constexpr ze_event_pool_flags_t kNeeded = ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP | ZE_EVENT_POOL_FLAG_HOST_VISIBLE;
  bool had = (desc->flags & kNeeded) == kNeeded;
  // IPC pools are shared with other processes: left exactly as asked.
  bool change = !had && !(desc->flags & ZE_EVENT_POOL_FLAG_IPC);
  ze_result_t r;
  if (change) {
    ze_event_pool_desc_t ours = *desc;
    ours.flags |= kNeeded;
    r = real(context, &ours, numDevices, devices, out);
    if (r != ZE_RESULT_SUCCESS) {
      real.undo();  // nothing was made: the program's own call is still to come
      change = false;
      r = real(context, desc, numDevices, devices, out);
    }
  } else {
    r = real(context, desc, numDevices, devices, out);
  }
  bool counterBased = false;
#ifdef ZE_EVENT_POOL_COUNTER_BASED_EXP_NAME
  // Counter-based pools: their events are re-armed by every call that signals them.
  for (auto* ext = static_cast<const ze_base_desc_t*>(desc->pNext); ext;
       ext = static_cast<const ze_base_desc_t*>(ext->pNext))
    counterBased |= ext->stype == ZE_STRUCTURE_TYPE_COUNTER_BASED_EVENT_POOL_EXP_DESC;
#endif
  if (r == ZE_RESULT_SUCCESS && out) profiler().eventPoolCreated(*out, had || change, counterBased);
  return r;
}
}  // namespace

// Pools the program creates get kernel timestamps (and host visibility, so
// gtap can read them); the program's events behave as before.
GTAP_ZE_HOOK(zeEventPoolCreate, ze_context_handle_t context, const ze_event_pool_desc_t* desc, uint32_t numDevices,
             ze_device_handle_t* devices, ze_event_pool_handle_t* out) {
  uint64_t rs = replaySeq(scope);
  ze_result_t r = createEventPool(real, scope, context, desc, numDevices, devices, out);
  // The pool as the program asked for it: replay makes what the program made.
  if (r == ZE_RESULT_SUCCESS && out && rs) replayRecorder().eventPoolCreated(rs, scope, *out, context, desc, numDevices, devices);
  return r;
}

GTAP_ZE_HOOK(zeEventPoolDestroy, ze_event_pool_handle_t pool) {
  if (profiling(scope)) profiler().resolve();
  const void* token = profiling(scope) ? profiler().objectToken(pool) : nullptr;
  uint64_t rs = replaySeq(scope);
  ze_result_t r = real(pool);
  if (r == ZE_RESULT_SUCCESS && token) profiler().objectDestroyed(pool, token);
  if (r == ZE_RESULT_SUCCESS && rs) replayRecorder().destroyed(rs, scope, ReplayRecorder::Op::EVENT_POOL_DESTROY, pool);
  return r;
}

GTAP_ZE_HOOK(zeEventCreate, ze_event_pool_handle_t pool, const ze_event_desc_t* desc, ze_event_handle_t* out) {
  uint64_t rs = replaySeq(scope);
  ze_result_t r = real(pool, desc, out);
  if (r == ZE_RESULT_SUCCESS && out && rs) replayRecorder().eventCreated(rs, scope, *out, pool, desc);
  if (r == ZE_RESULT_SUCCESS && out && profiling(scope)) profiler().eventCreated(*out, pool);
  return r;
}

GTAP_ZE_HOOK(zeEventDestroy, ze_event_handle_t event) {
  if (profiling(scope)) profiler().programEventEnding(event);
  const void* token = profiling(scope) ? profiler().objectToken(event) : nullptr;
  uint64_t rs = replaySeq(scope);
  ze_result_t r = real(event);
  if (r == ZE_RESULT_SUCCESS && token) profiler().eventDestroyed(event, token);
  if (r == ZE_RESULT_SUCCESS && rs) replayRecorder().destroyed(rs, scope, ReplayRecorder::Op::EVENT_DESTROY, event);
  return r;
}

GTAP_ZE_HOOK(zeEventHostReset, ze_event_handle_t event) {
  if (profiling(scope)) profiler().programEventEnding(event);
  uint64_t rs = replaySeq(scope);
  ze_result_t r = real(event);
  if (r == ZE_RESULT_SUCCESS && rs) replayRecorder().simple(rs, scope, ReplayRecorder::Op::EVENT_HOST_RESET, event);
  return r;
}

}  // namespace gtap::ze
