/* The slots of IREE's newest device vtable (iree_hal_device_vtable_t, 36
 * slots), in order, for the IREE-shaped test programs: X(method) for each, so
 * a program lists its table as
 *
 *   #define DEVICE_SLOT(name) (const void*)iree_hal_<impl>_device_##name,
 *   static const void* const iree_hal_<impl>_device_vtable[36] = {HAL_DEVICE_SLOTS(DEVICE_SLOT)};
 */
#ifndef GTAP_TEST_HAL_DEVICE_SLOTS_H
#define GTAP_TEST_HAL_DEVICE_SLOTS_H

#define HAL_DEVICE_SLOTS(X)                                                                                    \
  X(destroy) X(id) X(host_allocator) X(device_allocator) X(replace_device_allocator)                          \
  X(replace_channel_provider) X(trim) X(query_i64) X(query_capabilities) X(topology_info)                     \
  X(refine_topology_edge) X(assign_topology_info) X(create_channel) X(create_command_buffer) X(create_event)  \
  X(create_executable_cache) X(import_file) X(create_semaphore) X(query_semaphore_compatibility)               \
  X(query_queue_pool_backend) X(queue_alloca) X(queue_dealloca) X(queue_fill) X(queue_update) X(queue_copy)    \
  X(queue_read) X(queue_write) X(queue_host_call) X(queue_dispatch) X(queue_execute) X(queue_flush)            \
  X(profiling_begin) X(profiling_flush) X(profiling_end) X(external_capture_begin) X(external_capture_end)

#endif
