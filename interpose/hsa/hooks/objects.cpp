// Runtime objects: queues (made as intercept queues, so their packets are
// seen), code object readers, executables and the kernels they hold.
#include "hook.h"
#include "hsa_replay.h"

namespace gtap::hsa::hooks {

// --- queues ---

GTAP_HSA_HOOK(hsa_queue_create,
              (hsa_agent_t agent, uint32_t size, hsa_queue_type32_t type,
               void (*callback)(hsa_status_t, hsa_queue_t*, void*), void* data, uint32_t private_segment_size,
               uint32_t group_segment_size, hsa_queue_t** queue),
              (agent, size, type, callback, data, private_segment_size, group_segment_size, queue)) {
  if (!call.program())
    return real(agent, size, type, callback, data, private_segment_size, group_segment_size, queue);
  hsa_status_t s = tracker().createQueue(real, agent, size, type, callback, data, private_segment_size,
                                         group_segment_size, queue, call.scope());
  if (s == HSA_STATUS_SUCCESS && queue && *queue && replaying(call.scope()))
    ReplayRecorder::get().queueCreated(call.scope(), *queue, agent, size, type, private_segment_size,
                                       group_segment_size);
  return s;
}

GTAP_HSA_HOOK(hsa_queue_destroy, (hsa_queue_t* queue), (queue)) {
  if (call.program()) tracker().queueDestroying(queue);
  uint64_t seq = replaying(call.scope()) ? ReplayRecorder::get().queueDestroyed(call.scope(), queue) : 0;
  hsa_status_t s = real(queue);
  if (s != HSA_STATUS_SUCCESS && seq) ReplayRecorder::get().failed(seq, call.scope());
  return s;
}

// --- code objects and executables ---

GTAP_HSA_HOOK(hsa_code_object_reader_create_from_memory,
              (const void* code_object, size_t size, hsa_code_object_reader_t* reader),
              (code_object, size, reader)) {
  hsa_status_t s = real(code_object, size, reader);
  if (s == HSA_STATUS_SUCCESS && call.program() && reader) {
    tracker().readerFromMemory(*reader, code_object, size);
    if (replaying(call.scope())) ReplayRecorder::get().codeObject(call.scope(), *reader, code_object, size);
  }
  return s;
}

GTAP_HSA_HOOK(hsa_code_object_reader_create_from_file,
              (hsa_file_t file, hsa_code_object_reader_t* reader),
              (file, reader)) {
  hsa_status_t s = real(file, reader);
  if (s == HSA_STATUS_SUCCESS && call.program() && reader) {
    tracker().readerFromFile(*reader, file);
    const void* bytes = nullptr;
    size_t size = 0;
    if (replaying(call.scope())) {
      if (tracker().readerBytes(*reader, bytes, size))
        ReplayRecorder::get().codeObject(call.scope(), *reader, bytes, size);
      else
        ReplayRecorder::get().unsupported(call.scope(), "a code object file gtap could not read");
    }
  }
  return s;
}

GTAP_HSA_HOOK(hsa_code_object_reader_destroy, (hsa_code_object_reader_t reader), (reader)) {
  uint64_t seq = replaying(call.scope()) ? ReplayRecorder::get().codeObjectDestroyed(call.scope(), reader) : 0;
  hsa_status_t s = real(reader);
  if (s == HSA_STATUS_SUCCESS && call.program()) tracker().readerDestroyed(reader);
  if (s != HSA_STATUS_SUCCESS && seq) ReplayRecorder::get().failed(seq, call.scope());
  return s;
}

GTAP_HSA_HOOK(hsa_executable_create,
              (hsa_profile_t profile, hsa_executable_state_t state, const char* options,
               hsa_executable_t* executable),
              (profile, state, options, executable)) {
  hsa_status_t s = real(profile, state, options, executable);
  if (s == HSA_STATUS_SUCCESS && call.program() && executable) {
    tracker().executableCreated(*executable, call.scope());
    if (replaying(call.scope()))
      ReplayRecorder::get().executableCreated(call.scope(), *executable, profile,
                                              HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, options);
  }
  return s;
}

GTAP_HSA_HOOK(hsa_executable_create_alt,
              (hsa_profile_t profile, hsa_default_float_rounding_mode_t rounding, const char* options,
               hsa_executable_t* executable),
              (profile, rounding, options, executable)) {
  hsa_status_t s = real(profile, rounding, options, executable);
  if (s == HSA_STATUS_SUCCESS && call.program() && executable) {
    tracker().executableCreated(*executable, call.scope());
    if (replaying(call.scope()))
      ReplayRecorder::get().executableCreated(call.scope(), *executable, profile, rounding, options);
  }
  return s;
}

GTAP_HSA_HOOK(hsa_executable_load_agent_code_object,
              (hsa_executable_t executable, hsa_agent_t agent, hsa_code_object_reader_t reader, const char* options,
               hsa_loaded_code_object_t* loaded),
              (executable, agent, reader, options, loaded)) {
  hsa_status_t s = real(executable, agent, reader, options, loaded);
  if (s == HSA_STATUS_SUCCESS && call.program()) {
    tracker().codeObjectLoaded(executable, agent, reader, call.scope());
    if (replaying(call.scope()))
      ReplayRecorder::get().codeObjectLoaded(call.scope(), executable, agent, reader, options);
  }
  return s;
}

GTAP_HSA_HOOK(hsa_executable_freeze, (hsa_executable_t executable, const char* options), (executable, options)) {
  hsa_status_t s = real(executable, options);
  if (s == HSA_STATUS_SUCCESS && call.program()) {
    tracker().executableFrozen(executable, call.scope());
    if (replaying(call.scope())) ReplayRecorder::get().executableFrozen(call.scope(), executable);
  }
  return s;
}

GTAP_HSA_HOOK(hsa_executable_destroy, (hsa_executable_t executable), (executable)) {
  uint64_t seq = replaying(call.scope()) ? ReplayRecorder::get().executableDestroyed(call.scope(), executable) : 0;
  hsa_status_t s = real(executable);
  if (s == HSA_STATUS_SUCCESS && call.program()) tracker().executableDestroyed(executable);
  if (s != HSA_STATUS_SUCCESS && seq) ReplayRecorder::get().failed(seq, call.scope());
  return s;
}

}  // namespace gtap::hsa::hooks
