// Runtime objects: devices, contexts, modules (with their binaries), kernels,
// queues, command lists, event pools and events.
#include "hook.h"

namespace gtap::ze {

namespace {
Profiler& P() { return Profiler::get(); }
constexpr uint8_t kind(schema::ObjectKind k) { return static_cast<uint8_t>(k); }
}  // namespace

GTAP_ZE_HOOK(zeDeviceGet, ze_driver_handle_t driver, uint32_t* count, ze_device_handle_t* devices) {
  ze_result_t r = real(driver, count, devices);
  if (r == ZE_RESULT_SUCCESS && devices && count && profiling(scope)) P().devicesSeen(driver, *count, devices);
  return r;
}

GTAP_ZE_HOOK(zeContextCreate, ze_driver_handle_t driver, const ze_context_desc_t* desc, ze_context_handle_t* out) {
  ze_result_t r = real(driver, desc, out);
  if (r == ZE_RESULT_SUCCESS && out && profiling(scope))
    P().objectCreated(kind(schema::ObjectKind::CONTEXT), *out, nullptr, nullptr, desc ? desc->flags : 0, 0, 0, scope);
  return r;
}

GTAP_ZE_HOOK(zeContextCreateEx, ze_driver_handle_t driver, const ze_context_desc_t* desc, uint32_t numDevices,
             ze_device_handle_t* devices, ze_context_handle_t* out) {
  ze_result_t r = real(driver, desc, numDevices, devices, out);
  if (r == ZE_RESULT_SUCCESS && out && profiling(scope))
    P().objectCreated(kind(schema::ObjectKind::CONTEXT), *out, nullptr, nullptr, desc ? desc->flags : 0, 0, 0, scope);
  return r;
}

GTAP_ZE_HOOK(zeContextDestroy, ze_context_handle_t context) {
  // gtap's own events live in the context: they go first.
  if (profiling(scope)) P().contextDestroying(context);
  ze_result_t r = real(context);
  if (r == ZE_RESULT_SUCCESS && profiling(scope)) P().objectDestroyed(context);
  return r;
}

GTAP_ZE_HOOK(zeModuleCreate, ze_context_handle_t context, ze_device_handle_t device, const ze_module_desc_t* desc,
             ze_module_handle_t* out, ze_module_build_log_handle_t* log) {
  ze_result_t r = real(context, device, desc, out, log);
  if (r == ZE_RESULT_SUCCESS && out && profiling(scope)) P().moduleCreated(*out, context, device, desc, scope);
  return r;
}

GTAP_ZE_HOOK(zeModuleDestroy, ze_module_handle_t module) {
  ze_result_t r = real(module);
  if (r == ZE_RESULT_SUCCESS && profiling(scope)) P().objectDestroyed(module);
  return r;
}

GTAP_ZE_HOOK(zeKernelCreate, ze_module_handle_t module, const ze_kernel_desc_t* desc, ze_kernel_handle_t* out) {
  ze_result_t r = real(module, desc, out);
  if (r == ZE_RESULT_SUCCESS && out && profiling(scope))
    P().kernelCreated(*out, module, desc ? desc->pKernelName : nullptr, scope);
  return r;
}

GTAP_ZE_HOOK(zeKernelDestroy, ze_kernel_handle_t kernel) {
  ze_result_t r = real(kernel);
  if (r == ZE_RESULT_SUCCESS && profiling(scope)) P().objectDestroyed(kernel);
  return r;
}

GTAP_ZE_HOOK(zeKernelSetGroupSize, ze_kernel_handle_t kernel, uint32_t x, uint32_t y, uint32_t z) {
  ze_result_t r = real(kernel, x, y, z);
  if (r == ZE_RESULT_SUCCESS && profiling(scope)) P().kernelGroupSize(kernel, x, y, z);
  return r;
}

GTAP_ZE_HOOK(zeCommandQueueCreate, ze_context_handle_t context, ze_device_handle_t device,
             const ze_command_queue_desc_t* desc, ze_command_queue_handle_t* out) {
  ze_result_t r = real(context, device, desc, out);
  if (r == ZE_RESULT_SUCCESS && out && profiling(scope))
    P().objectCreated(kind(schema::ObjectKind::COMMAND_QUEUE), *out, context, device, desc ? desc->flags : 0,
                      desc ? desc->ordinal : 0, desc ? desc->index : 0, scope);
  return r;
}

GTAP_ZE_HOOK(zeCommandQueueDestroy, ze_command_queue_handle_t queue) {
  if (profiling(scope)) P().resolve();
  ze_result_t r = real(queue);
  if (r == ZE_RESULT_SUCCESS && profiling(scope)) P().objectDestroyed(queue);
  return r;
}

GTAP_ZE_HOOK(zeCommandListCreate, ze_context_handle_t context, ze_device_handle_t device,
             const ze_command_list_desc_t* desc, ze_command_list_handle_t* out) {
  ze_result_t r = real(context, device, desc, out);
  if (r == ZE_RESULT_SUCCESS && out && profiling(scope))
    P().listCreated(*out, context, device, false, desc ? desc->commandQueueGroupOrdinal : 0, 0,
                    desc ? desc->flags : 0, scope);
  return r;
}

GTAP_ZE_HOOK(zeCommandListCreateImmediate, ze_context_handle_t context, ze_device_handle_t device,
             const ze_command_queue_desc_t* desc, ze_command_list_handle_t* out) {
  ze_result_t r = real(context, device, desc, out);
  if (r == ZE_RESULT_SUCCESS && out && profiling(scope))
    P().listCreated(*out, context, device, true, desc ? desc->ordinal : 0, desc ? desc->index : 0,
                    desc ? desc->flags : 0, scope);
  return r;
}

GTAP_ZE_HOOK(zeCommandListDestroy, ze_command_list_handle_t list) {
  if (profiling(scope)) P().listReset(list);
  ze_result_t r = real(list);
  if (r == ZE_RESULT_SUCCESS && profiling(scope)) P().objectDestroyed(list);
  return r;
}

GTAP_ZE_HOOK(zeCommandListReset, ze_command_list_handle_t list) {
  if (profiling(scope)) P().listReset(list);
  return real(list);
}

// Pools the program creates get kernel timestamps (and host visibility, so
// gtap can read them); the program's events behave as before.
GTAP_ZE_HOOK(zeEventPoolCreate, ze_context_handle_t context, const ze_event_pool_desc_t* desc, uint32_t numDevices,
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
      change = false;
      r = real(context, desc, numDevices, devices, out);
    }
  } else {
    r = real(context, desc, numDevices, devices, out);
  }
  if (r == ZE_RESULT_SUCCESS && out) P().eventPoolCreated(*out, had || change);
  return r;
}

GTAP_ZE_HOOK(zeEventPoolDestroy, ze_event_pool_handle_t pool) {
  if (profiling(scope)) P().resolve();
  ze_result_t r = real(pool);
  if (r == ZE_RESULT_SUCCESS && profiling(scope)) P().objectDestroyed(pool);
  return r;
}

GTAP_ZE_HOOK(zeEventCreate, ze_event_pool_handle_t pool, const ze_event_desc_t* desc, ze_event_handle_t* out) {
  ze_result_t r = real(pool, desc, out);
  if (r == ZE_RESULT_SUCCESS && out && profiling(scope)) P().eventCreated(*out, pool);
  return r;
}

GTAP_ZE_HOOK(zeEventDestroy, ze_event_handle_t event) {
  if (profiling(scope)) P().programEventEnding(event);
  ze_result_t r = real(event);
  if (r == ZE_RESULT_SUCCESS && profiling(scope)) P().eventDestroyed(event);
  return r;
}

GTAP_ZE_HOOK(zeEventHostReset, ze_event_handle_t event) {
  if (profiling(scope)) P().programEventEnding(event);
  return real(event);
}

}  // namespace gtap::ze
