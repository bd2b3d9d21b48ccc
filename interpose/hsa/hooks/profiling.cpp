// The program's own profiling: gtap keeps it on, and answers the program's
// queries on its signals with the times gtap read for them.
#include "hook.h"
#include "hsa_replay.h"

namespace gtap::hsa::hooks {

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
  uint64_t seq = replaying(call.scope()) ? ReplayRecorder::get().signalDestroyed(call.scope(), signal) : 0;
  hsa_status_t s = real(signal);
  if (s != HSA_STATUS_SUCCESS && seq) ReplayRecorder::get().failed(seq, call.scope());
  return s;
}

}  // namespace gtap::hsa::hooks
