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

#define GTAP_UNPAREN(...) __VA_ARGS__
// Defines hook NAME: the entry records the call and runs the body (which
// follows the macro, with `real`, the runtime's entry, and `call`) inside a
// catch boundary; gtap's failure in the body leaves the program's call to
// the runtime, made once (internal_error.h).
#define GTAP_HSA_HOOK(name, params, args)                                                            \
  static hsa_status_t body_##name(core::RealCall<decltype(&::name)>& real, Call& call,               \
                                  GTAP_UNPAREN params);                                              \
  hsa_status_t name params {                                                                         \
    Call call(GTAP_HSA_ID(name));                                                                    \
    core::RealCall<decltype(&::name)> real(GTAP_HSA_REAL(name));                                     \
    hsa_status_t status;                                                                             \
    try {                                                                                            \
      status = body_##name(real, call, GTAP_UNPAREN args);                                           \
    } GTAP_CATCH_INTERNAL {                                                                          \
      status = real.recover("the HSA hook of " #name, GTAP_UNPAREN args);                            \
    }                                                                                                \
    return call.done(status);                                                                        \
  }                                                                                                  \
  static hsa_status_t body_##name(core::RealCall<decltype(&::name)>& real, Call& call, GTAP_UNPAREN params)

// --- queues ---

GTAP_HSA_HOOK(hsa_queue_create,
              (hsa_agent_t agent, uint32_t size, hsa_queue_type32_t type,
               void (*callback)(hsa_status_t, hsa_queue_t*, void*), void* data, uint32_t private_segment_size,
               uint32_t group_segment_size, hsa_queue_t** queue),
              (agent, size, type, callback, data, private_segment_size, group_segment_size, queue)) {
  if (!call.program())
    return real(agent, size, type, callback, data, private_segment_size, group_segment_size, queue);
  return tracker().createQueue(real, agent, size, type, callback, data, private_segment_size, group_segment_size,
                               queue, call.scope());
}

GTAP_HSA_HOOK(hsa_queue_destroy, (hsa_queue_t* queue), (queue)) {
  if (call.program()) tracker().queueDestroying(queue);
  return real(queue);
}

// --- the program's own profiling: gtap keeps profiling on ---

GTAP_HSA_HOOK(hsa_amd_profiling_set_profiler_enabled, (hsa_queue_t* queue, int enable), (queue, enable)) {
  // gtap times every packet on its queues; turning profiling off would stop that.
  if (call.program() && recordKernels()) enable = 1;
  return real(queue, enable);
}

GTAP_HSA_HOOK(hsa_amd_profiling_async_copy_enable, (bool enable), (enable)) {
  if (call.program() && recordKernels()) enable = true;
  return real(enable);
}

GTAP_HSA_HOOK(hsa_amd_profiling_get_dispatch_time,
              (hsa_agent_t agent, hsa_signal_t signal, hsa_amd_profiling_dispatch_time_t* time),
              (agent, signal, time)) {
  uint64_t start = 0, end = 0;
  if (call.program() && time && tracker().programTimes(signal, false, start, end)) {
    time->start = start;
    time->end = end;
    return HSA_STATUS_SUCCESS;
  }
  return real(agent, signal, time);
}

GTAP_HSA_HOOK(hsa_amd_profiling_get_async_copy_time,
              (hsa_signal_t signal, hsa_amd_profiling_async_copy_time_t* time),
              (signal, time)) {
  uint64_t start = 0, end = 0;
  if (call.program() && time && tracker().programTimes(signal, true, start, end)) {
    time->start = start;
    time->end = end;
    return HSA_STATUS_SUCCESS;
  }
  return real(signal, time);
}

GTAP_HSA_HOOK(hsa_signal_destroy, (hsa_signal_t signal), (signal)) {
  if (call.program()) tracker().programSignalDestroyed(signal);
  return real(signal);
}

// --- code objects and executables ---

GTAP_HSA_HOOK(hsa_code_object_reader_create_from_memory,
              (const void* code_object, size_t size, hsa_code_object_reader_t* reader),
              (code_object, size, reader)) {
  hsa_status_t s = real(code_object, size, reader);
  if (s == HSA_STATUS_SUCCESS && call.program() && reader) tracker().readerFromMemory(*reader, code_object, size);
  return s;
}

GTAP_HSA_HOOK(hsa_code_object_reader_create_from_file,
              (hsa_file_t file, hsa_code_object_reader_t* reader),
              (file, reader)) {
  hsa_status_t s = real(file, reader);
  if (s == HSA_STATUS_SUCCESS && call.program() && reader) tracker().readerFromFile(*reader, file);
  return s;
}

GTAP_HSA_HOOK(hsa_code_object_reader_destroy, (hsa_code_object_reader_t reader), (reader)) {
  hsa_status_t s = real(reader);
  if (s == HSA_STATUS_SUCCESS && call.program()) tracker().readerDestroyed(reader);
  return s;
}

GTAP_HSA_HOOK(hsa_executable_create,
              (hsa_profile_t profile, hsa_executable_state_t state, const char* options,
               hsa_executable_t* executable),
              (profile, state, options, executable)) {
  hsa_status_t s = real(profile, state, options, executable);
  if (s == HSA_STATUS_SUCCESS && call.program() && executable) tracker().executableCreated(*executable, call.scope());
  return s;
}

GTAP_HSA_HOOK(hsa_executable_create_alt,
              (hsa_profile_t profile, hsa_default_float_rounding_mode_t rounding, const char* options,
               hsa_executable_t* executable),
              (profile, rounding, options, executable)) {
  hsa_status_t s = real(profile, rounding, options, executable);
  if (s == HSA_STATUS_SUCCESS && call.program() && executable) tracker().executableCreated(*executable, call.scope());
  return s;
}

GTAP_HSA_HOOK(hsa_executable_load_agent_code_object,
              (hsa_executable_t executable, hsa_agent_t agent, hsa_code_object_reader_t reader, const char* options,
               hsa_loaded_code_object_t* loaded),
              (executable, agent, reader, options, loaded)) {
  hsa_status_t s = real(executable, agent, reader, options, loaded);
  if (s == HSA_STATUS_SUCCESS && call.program()) tracker().codeObjectLoaded(executable, agent, reader, call.scope());
  return s;
}

GTAP_HSA_HOOK(hsa_executable_freeze, (hsa_executable_t executable, const char* options), (executable, options)) {
  hsa_status_t s = real(executable, options);
  if (s == HSA_STATUS_SUCCESS && call.program()) tracker().executableFrozen(executable, call.scope());
  return s;
}

GTAP_HSA_HOOK(hsa_executable_destroy, (hsa_executable_t executable), (executable)) {
  hsa_status_t s = real(executable);
  if (s == HSA_STATUS_SUCCESS && call.program()) tracker().executableDestroyed(executable);
  return s;
}

// --- memory ---

GTAP_HSA_HOOK(hsa_amd_memory_pool_allocate,
              (hsa_amd_memory_pool_t pool, size_t size, uint32_t flags, void** ptr),
              (pool, size, flags, ptr)) {
  hsa_status_t s = real(pool, size, flags, ptr);
  if (s == HSA_STATUS_SUCCESS && call.program() && ptr) tracker().allocatedFromPool(pool.handle, *ptr, size, call.scope());
  return s;
}

GTAP_HSA_HOOK(hsa_memory_allocate, (hsa_region_t region, size_t size, void** ptr), (region, size, ptr)) {
  hsa_status_t s = real(region, size, ptr);
  if (s == HSA_STATUS_SUCCESS && call.program() && ptr) tracker().allocatedFromPool(region.handle, *ptr, size, call.scope());
  return s;
}

GTAP_HSA_HOOK(hsa_amd_memory_pool_free, (void* ptr), (ptr)) {
  if (call.program()) tracker().freeing(ptr, call.scope());
  return real(ptr);
}

GTAP_HSA_HOOK(hsa_memory_free, (void* ptr), (ptr)) {
  if (call.program()) tracker().freeing(ptr, call.scope());
  return real(ptr);
}

GTAP_HSA_HOOK(hsa_amd_memory_lock,
              (void* host_ptr, size_t size, hsa_agent_t* agents, int num_agent, void** agent_ptr),
              (host_ptr, size, agents, num_agent, agent_ptr)) {
  hsa_status_t s = real(host_ptr, size, agents, num_agent, agent_ptr);
  if (s == HSA_STATUS_SUCCESS && call.program())
    tracker().locked(host_ptr, size, agent_ptr ? *agent_ptr : nullptr, call.scope());
  return s;
}

GTAP_HSA_HOOK(hsa_amd_memory_lock_to_pool,
              (void* host_ptr, size_t size, hsa_agent_t* agents, int num_agent, hsa_amd_memory_pool_t pool,
               uint32_t flags, void** agent_ptr),
              (host_ptr, size, agents, num_agent, pool, flags, agent_ptr)) {
  hsa_status_t s = real(host_ptr, size, agents, num_agent, pool, flags, agent_ptr);
  if (s == HSA_STATUS_SUCCESS && call.program())
    tracker().locked(host_ptr, size, agent_ptr ? *agent_ptr : nullptr, call.scope());
  return s;
}

GTAP_HSA_HOOK(hsa_amd_memory_unlock, (void* host_ptr), (host_ptr)) {
  if (call.program()) tracker().unlocking(host_ptr, call.scope());
  return real(host_ptr);
}

// --- copies ---

GTAP_HSA_HOOK(hsa_amd_memory_async_copy,
              (void* dst, hsa_agent_t dst_agent, const void* src, hsa_agent_t src_agent, size_t size,
               uint32_t num_dep_signals, const hsa_signal_t* dep_signals, hsa_signal_t completion_signal),
              (dst, dst_agent, src, src_agent, size, num_dep_signals, dep_signals, completion_signal)) {
  void* token = nullptr;
  hsa_signal_t signal = completion_signal;
  if (call.program())
    signal = tracker().asyncCopyStarting(completion_signal, dst, dst_agent, src, src_agent, size, call.scope(), token);
  hsa_status_t s = real(dst, dst_agent, src, src_agent, size, num_dep_signals, dep_signals, signal);
  if (s != HSA_STATUS_SUCCESS) tracker().asyncCopyFailed(token);
  return s;
}

GTAP_HSA_HOOK(hsa_memory_copy, (void* dst, const void* src, size_t size), (dst, src, size)) {
  uint64_t begin = core::nowTicks();
  hsa_status_t s = real(dst, src, size);
  if (s == HSA_STATUS_SUCCESS && call.program()) tracker().synchronousOp(false, dst, src, size, begin, call.scope());
  return s;
}

GTAP_HSA_HOOK(hsa_amd_memory_fill, (void* ptr, uint32_t value, size_t count), (ptr, value, count)) {
  uint64_t begin = core::nowTicks();
  hsa_status_t s = real(ptr, value, count);
  if (s == HSA_STATUS_SUCCESS && call.program())
    tracker().synchronousOp(true, ptr, nullptr, count * sizeof(uint32_t), begin, call.scope());
  return s;
}

}  // namespace gtap::hsa::hooks
