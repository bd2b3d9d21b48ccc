// The HSA table entries gtap does more for than record the call (listed in
// hooked_functions.txt). Each records its call like the generic wrapper, calls
// the runtime's entry, and tells the tracker what the program made or did.
#include "hsa_tables.h"
#include "tracker.h"

namespace gtap::hsa::hooks {

namespace {

// A recorded call whose result the hook may look at before the end record.
class Call {
 public:
  explicit Call(uint16_t id) : scope_(core::kGuardHsa, id) {}
  hsa_status_t done(hsa_status_t status) {
    scope_.end(static_cast<int32_t>(status));
    return status;
  }
  // The program's call (not the runtime's own, nor gtap's), while recording.
  bool program() const { return scope_.thread() != nullptr; }
  const core::CallScope& scope() const { return scope_; }

 private:
  core::CallScope scope_;
};

Tracker& tracker() { return Tracker::get(); }

}  // namespace

// --- queues ---

hsa_status_t hsa_queue_create(hsa_agent_t agent, uint32_t size, hsa_queue_type32_t type,
                              void (*callback)(hsa_status_t, hsa_queue_t*, void*), void* data,
                              uint32_t private_segment_size, uint32_t group_segment_size, hsa_queue_t** queue) {
  Call call(GTAP_HSA_ID(hsa_queue_create));
  if (!call.program())
    return call.done(GTAP_HSA_REAL(hsa_queue_create)(agent, size, type, callback, data, private_segment_size,
                                                     group_segment_size, queue));
  return call.done(tracker().createQueue(agent, size, type, callback, data, private_segment_size,
                                         group_segment_size, queue, call.scope()));
}

hsa_status_t hsa_queue_destroy(hsa_queue_t* queue) {
  Call call(GTAP_HSA_ID(hsa_queue_destroy));
  if (call.program()) tracker().queueDestroying(queue);
  return call.done(GTAP_HSA_REAL(hsa_queue_destroy)(queue));
}

// --- the program's own profiling: gtap keeps profiling on ---

hsa_status_t hsa_amd_profiling_set_profiler_enabled(hsa_queue_t* queue, int enable) {
  Call call(GTAP_HSA_ID(hsa_amd_profiling_set_profiler_enabled));
  // gtap times every packet on its queues; turning profiling off would stop that.
  if (call.program() && recordKernels()) enable = 1;
  return call.done(GTAP_HSA_REAL(hsa_amd_profiling_set_profiler_enabled)(queue, enable));
}

hsa_status_t hsa_amd_profiling_async_copy_enable(bool enable) {
  Call call(GTAP_HSA_ID(hsa_amd_profiling_async_copy_enable));
  if (call.program() && recordKernels()) enable = true;
  return call.done(GTAP_HSA_REAL(hsa_amd_profiling_async_copy_enable)(enable));
}

hsa_status_t hsa_amd_profiling_get_dispatch_time(hsa_agent_t agent, hsa_signal_t signal,
                                                 hsa_amd_profiling_dispatch_time_t* time) {
  Call call(GTAP_HSA_ID(hsa_amd_profiling_get_dispatch_time));
  uint64_t start = 0, end = 0;
  if (call.program() && time && tracker().programTimes(signal, false, start, end)) {
    time->start = start;
    time->end = end;
    return call.done(HSA_STATUS_SUCCESS);
  }
  return call.done(GTAP_HSA_REAL(hsa_amd_profiling_get_dispatch_time)(agent, signal, time));
}

hsa_status_t hsa_amd_profiling_get_async_copy_time(hsa_signal_t signal, hsa_amd_profiling_async_copy_time_t* time) {
  Call call(GTAP_HSA_ID(hsa_amd_profiling_get_async_copy_time));
  uint64_t start = 0, end = 0;
  if (call.program() && time && tracker().programTimes(signal, true, start, end)) {
    time->start = start;
    time->end = end;
    return call.done(HSA_STATUS_SUCCESS);
  }
  return call.done(GTAP_HSA_REAL(hsa_amd_profiling_get_async_copy_time)(signal, time));
}

hsa_status_t hsa_signal_destroy(hsa_signal_t signal) {
  Call call(GTAP_HSA_ID(hsa_signal_destroy));
  if (call.program()) tracker().programSignalDestroyed(signal);
  return call.done(GTAP_HSA_REAL(hsa_signal_destroy)(signal));
}

// --- code objects and executables ---

hsa_status_t hsa_code_object_reader_create_from_memory(const void* code_object, size_t size,
                                                       hsa_code_object_reader_t* reader) {
  Call call(GTAP_HSA_ID(hsa_code_object_reader_create_from_memory));
  hsa_status_t s = GTAP_HSA_REAL(hsa_code_object_reader_create_from_memory)(code_object, size, reader);
  if (s == HSA_STATUS_SUCCESS && call.program() && reader) tracker().readerFromMemory(*reader, code_object, size);
  return call.done(s);
}

hsa_status_t hsa_code_object_reader_create_from_file(hsa_file_t file, hsa_code_object_reader_t* reader) {
  Call call(GTAP_HSA_ID(hsa_code_object_reader_create_from_file));
  hsa_status_t s = GTAP_HSA_REAL(hsa_code_object_reader_create_from_file)(file, reader);
  if (s == HSA_STATUS_SUCCESS && call.program() && reader) tracker().readerFromFile(*reader, file);
  return call.done(s);
}

hsa_status_t hsa_code_object_reader_destroy(hsa_code_object_reader_t reader) {
  Call call(GTAP_HSA_ID(hsa_code_object_reader_destroy));
  hsa_status_t s = GTAP_HSA_REAL(hsa_code_object_reader_destroy)(reader);
  if (s == HSA_STATUS_SUCCESS && call.program()) tracker().readerDestroyed(reader);
  return call.done(s);
}

hsa_status_t hsa_executable_create(hsa_profile_t profile, hsa_executable_state_t state, const char* options,
                                   hsa_executable_t* executable) {
  Call call(GTAP_HSA_ID(hsa_executable_create));
  hsa_status_t s = GTAP_HSA_REAL(hsa_executable_create)(profile, state, options, executable);
  if (s == HSA_STATUS_SUCCESS && call.program() && executable) tracker().executableCreated(*executable, call.scope());
  return call.done(s);
}

hsa_status_t hsa_executable_create_alt(hsa_profile_t profile, hsa_default_float_rounding_mode_t rounding,
                                       const char* options, hsa_executable_t* executable) {
  Call call(GTAP_HSA_ID(hsa_executable_create_alt));
  hsa_status_t s = GTAP_HSA_REAL(hsa_executable_create_alt)(profile, rounding, options, executable);
  if (s == HSA_STATUS_SUCCESS && call.program() && executable) tracker().executableCreated(*executable, call.scope());
  return call.done(s);
}

hsa_status_t hsa_executable_load_agent_code_object(hsa_executable_t executable, hsa_agent_t agent,
                                                   hsa_code_object_reader_t reader, const char* options,
                                                   hsa_loaded_code_object_t* loaded) {
  Call call(GTAP_HSA_ID(hsa_executable_load_agent_code_object));
  hsa_status_t s = GTAP_HSA_REAL(hsa_executable_load_agent_code_object)(executable, agent, reader, options, loaded);
  if (s == HSA_STATUS_SUCCESS && call.program()) tracker().codeObjectLoaded(executable, agent, reader, call.scope());
  return call.done(s);
}

hsa_status_t hsa_executable_freeze(hsa_executable_t executable, const char* options) {
  Call call(GTAP_HSA_ID(hsa_executable_freeze));
  hsa_status_t s = GTAP_HSA_REAL(hsa_executable_freeze)(executable, options);
  if (s == HSA_STATUS_SUCCESS && call.program()) tracker().executableFrozen(executable, call.scope());
  return call.done(s);
}

hsa_status_t hsa_executable_destroy(hsa_executable_t executable) {
  Call call(GTAP_HSA_ID(hsa_executable_destroy));
  hsa_status_t s = GTAP_HSA_REAL(hsa_executable_destroy)(executable);
  if (s == HSA_STATUS_SUCCESS && call.program()) tracker().executableDestroyed(executable);
  return call.done(s);
}

// --- memory ---

hsa_status_t hsa_amd_memory_pool_allocate(hsa_amd_memory_pool_t pool, size_t size, uint32_t flags, void** ptr) {
  Call call(GTAP_HSA_ID(hsa_amd_memory_pool_allocate));
  hsa_status_t s = GTAP_HSA_REAL(hsa_amd_memory_pool_allocate)(pool, size, flags, ptr);
  if (s == HSA_STATUS_SUCCESS && call.program() && ptr) tracker().allocatedFromPool(pool.handle, *ptr, size, call.scope());
  return call.done(s);
}

hsa_status_t hsa_memory_allocate(hsa_region_t region, size_t size, void** ptr) {
  Call call(GTAP_HSA_ID(hsa_memory_allocate));
  hsa_status_t s = GTAP_HSA_REAL(hsa_memory_allocate)(region, size, ptr);
  if (s == HSA_STATUS_SUCCESS && call.program() && ptr) tracker().allocatedFromPool(region.handle, *ptr, size, call.scope());
  return call.done(s);
}

hsa_status_t hsa_amd_memory_pool_free(void* ptr) {
  Call call(GTAP_HSA_ID(hsa_amd_memory_pool_free));
  if (call.program()) tracker().freeing(ptr, call.scope());
  return call.done(GTAP_HSA_REAL(hsa_amd_memory_pool_free)(ptr));
}

hsa_status_t hsa_memory_free(void* ptr) {
  Call call(GTAP_HSA_ID(hsa_memory_free));
  if (call.program()) tracker().freeing(ptr, call.scope());
  return call.done(GTAP_HSA_REAL(hsa_memory_free)(ptr));
}

hsa_status_t hsa_amd_memory_lock(void* host_ptr, size_t size, hsa_agent_t* agents, int num_agent, void** agent_ptr) {
  Call call(GTAP_HSA_ID(hsa_amd_memory_lock));
  hsa_status_t s = GTAP_HSA_REAL(hsa_amd_memory_lock)(host_ptr, size, agents, num_agent, agent_ptr);
  if (s == HSA_STATUS_SUCCESS && call.program())
    tracker().locked(host_ptr, size, agent_ptr ? *agent_ptr : nullptr, call.scope());
  return call.done(s);
}

hsa_status_t hsa_amd_memory_lock_to_pool(void* host_ptr, size_t size, hsa_agent_t* agents, int num_agent,
                                         hsa_amd_memory_pool_t pool, uint32_t flags, void** agent_ptr) {
  Call call(GTAP_HSA_ID(hsa_amd_memory_lock_to_pool));
  hsa_status_t s = GTAP_HSA_REAL(hsa_amd_memory_lock_to_pool)(host_ptr, size, agents, num_agent, pool, flags, agent_ptr);
  if (s == HSA_STATUS_SUCCESS && call.program())
    tracker().locked(host_ptr, size, agent_ptr ? *agent_ptr : nullptr, call.scope());
  return call.done(s);
}

hsa_status_t hsa_amd_memory_unlock(void* host_ptr) {
  Call call(GTAP_HSA_ID(hsa_amd_memory_unlock));
  if (call.program()) tracker().unlocking(host_ptr, call.scope());
  return call.done(GTAP_HSA_REAL(hsa_amd_memory_unlock)(host_ptr));
}

// --- copies ---

hsa_status_t hsa_amd_memory_async_copy(void* dst, hsa_agent_t dst_agent, const void* src, hsa_agent_t src_agent,
                                       size_t size, uint32_t num_dep_signals, const hsa_signal_t* dep_signals,
                                       hsa_signal_t completion_signal) {
  Call call(GTAP_HSA_ID(hsa_amd_memory_async_copy));
  void* token = nullptr;
  hsa_signal_t signal = completion_signal;
  if (call.program())
    signal = tracker().asyncCopyStarting(completion_signal, dst, dst_agent, src, src_agent, size, call.scope(), token);
  hsa_status_t s = GTAP_HSA_REAL(hsa_amd_memory_async_copy)(dst, dst_agent, src, src_agent, size, num_dep_signals,
                                                            dep_signals, signal);
  if (s != HSA_STATUS_SUCCESS) tracker().asyncCopyFailed(token);
  return call.done(s);
}

hsa_status_t hsa_memory_copy(void* dst, const void* src, size_t size) {
  Call call(GTAP_HSA_ID(hsa_memory_copy));
  uint64_t begin = core::nowTicks();
  hsa_status_t s = GTAP_HSA_REAL(hsa_memory_copy)(dst, src, size);
  if (s == HSA_STATUS_SUCCESS && call.program()) tracker().synchronousOp(false, dst, src, size, begin, call.scope());
  return call.done(s);
}

hsa_status_t hsa_amd_memory_fill(void* ptr, uint32_t value, size_t count) {
  Call call(GTAP_HSA_ID(hsa_amd_memory_fill));
  uint64_t begin = core::nowTicks();
  hsa_status_t s = GTAP_HSA_REAL(hsa_amd_memory_fill)(ptr, value, count);
  if (s == HSA_STATUS_SUCCESS && call.program())
    tracker().synchronousOp(true, ptr, nullptr, count * sizeof(uint32_t), begin, call.scope());
  return call.done(s);
}

}  // namespace gtap::hsa::hooks
