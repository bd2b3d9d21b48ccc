// Work handed to the device by a call rather than a packet: async copies
// (timed through gtap's completion signal), synchronous copies and fills.
#include "hook.h"

#include "clock.h"
#include "hsa_replay.h"

namespace gtap::hsa::hooks {

// --- copies ---

GTAP_HSA_HOOK(hsa_amd_memory_async_copy,
              (void* dst, hsa_agent_t dst_agent, const void* src, hsa_agent_t src_agent, size_t size,
               uint32_t num_dep_signals, const hsa_signal_t* dep_signals, hsa_signal_t completion_signal),
              (dst, dst_agent, src, src_agent, size, num_dep_signals, dep_signals, completion_signal)) {
  void* token = nullptr;
  hsa_signal_t signal = completion_signal;
  uint64_t seq = replaying(call.scope())
                     ? ReplayRecorder::get().copying(call.scope(), dst, dst_agent, src, src_agent, size,
                                                     num_dep_signals, dep_signals, completion_signal, false)
                     : 0;
  if (call.program())
    signal = tracker().asyncCopyStarting(completion_signal, dst, dst_agent, src, src_agent, size, call.scope(), token);
  hsa_status_t s = real(dst, dst_agent, src, src_agent, size, num_dep_signals, dep_signals, signal);
  if (s != HSA_STATUS_SUCCESS) {
    tracker().asyncCopyFailed(token);
    if (seq) ReplayRecorder::get().failed(seq, call.scope());
  }
  return s;
}

GTAP_HSA_HOOK(hsa_memory_copy, (void* dst, const void* src, size_t size), (dst, src, size)) {
  uint64_t seq = replaying(call.scope()) ? ReplayRecorder::get().copying(call.scope(), dst, {}, src, {}, size, 0,
                                                                         nullptr, {}, true)
                                        : 0;
  uint64_t begin = core::nowTicks();
  hsa_status_t s = real(dst, src, size);
  if (s == HSA_STATUS_SUCCESS && call.program()) tracker().synchronousOp(false, dst, src, size, begin, call.scope());
  if (seq && s == HSA_STATUS_SUCCESS) ReplayRecorder::get().copiedSynchronously(call.scope(), seq, dst, size);
  if (seq && s != HSA_STATUS_SUCCESS) ReplayRecorder::get().failed(seq, call.scope());
  return s;
}

GTAP_HSA_HOOK(hsa_amd_memory_fill, (void* ptr, uint32_t value, size_t count), (ptr, value, count)) {
  uint64_t seq = replaying(call.scope()) ? ReplayRecorder::get().filling(call.scope(), ptr, value, count) : 0;
  uint64_t begin = core::nowTicks();
  hsa_status_t s = real(ptr, value, count);
  if (s == HSA_STATUS_SUCCESS && call.program())
    tracker().synchronousOp(true, ptr, nullptr, count * sizeof(uint32_t), begin, call.scope());
  if (seq && s != HSA_STATUS_SUCCESS) ReplayRecorder::get().failed(seq, call.scope());
  return s;
}

}  // namespace gtap::hsa::hooks
