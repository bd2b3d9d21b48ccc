#include "tracker_impl.h"

#include <hsa/amd_hsa_signal.h>

#include <vector>

#include "clock.h"
#include "session.h"
#include "stack_table.h"

namespace gtap::hsa {

// --- copies --------------------------------------------------------------------------------

hsa_signal_t Tracker::asyncCopyStarting(hsa_signal_t program, const void* dst, hsa_agent_t dstAgent,
                                        const void* src, hsa_agent_t srcAgent, size_t size,
                                        const core::CallScope& scope, void*& token) {
  token = nullptr;
  if (!recordKernels() || !impl_->canTime) return program;
  std::vector<uint64_t> stack;
  if (recordStacks()) stack = core::captureStack(impl_->stackDepth);
  uint64_t ticks = core::nowTicks();
  uint32_t thread = threadIdOf(scope);
  Impl& m = *impl_;
  std::lock_guard<std::mutex> lock(m.mu);
  if (!m.loaded) return program;
  Pending* p = m.acquirePendingLocked();
  core::profile::OpRecord& rec = p->rec;
  rec.kind = schema::DeviceOpKind::COPY;
  rec.bytes = size;
  rec.direction = m.directionOf(dst, src);
  // The GPU agent the copy involves, for its clock and its copy-engine track.
  uint32_t dev = kNoDevice;
  for (hsa_agent_t a : {dstAgent, srcAgent}) {
    uint32_t d = m.deviceOf(a);
    if (d < m.devices.size() && m.devices[d].gpu) {
      dev = d;
      break;
    }
  }
  if (dev == kNoDevice)
    for (const DeviceInfo& d : m.devices)
      if (d.gpu) {
        dev = d.id;
        break;
      }
  rec.device = dev;
  if (dev < m.devices.size() && !core::deviceIndexWanted(m.devices[dev].gpuIndex)) {
    // GTAP_DEVICE_FILTER: its device's work is not recorded.
    p->rec = core::profile::OpRecord{};
    m.freePending.push_back(p);
    return program;
  }
  if (dev < m.devices.size()) {
    DeviceInfo& d = m.devices[dev];
    if (!d.copyQueue) {
      core::profile::ObjectRecord extras;
      extras.properties.emplace_back("engine", "asynchronous copies");
      d.copyQueue = m.objectLocked(schema::ObjectKind::COMMAND_QUEUE, 0, dev, 0, "copy engine", thread,
                                   std::move(extras));
    }
    rec.queue = d.copyQueue;
  }
  rec.thread = rec.submitThread = thread;
  rec.appendIndex = scope.beginIndex();
  rec.recordedBy = schema::Api::HSA;
  rec.appendTicks = rec.submitTicks = ticks;
  rec.stack = std::move(stack);
  p->program = program;
  if (!m.armLocked(p)) {
    p->rec = core::profile::OpRecord{};
    m.freePending.push_back(p);
    return program;
  }
  token = p;
  return p->mine;
}

void Tracker::asyncCopyFailed(void* token) {
  if (!token) return;
  auto* p = static_cast<Pending*>(token);
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->outstanding.erase(p);
  }
  // Nothing will reach gtap's signal: release the handler, which then only
  // recycles the entry.
  p->finished.store(true);
  GTAP_HSA_REAL(hsa_signal_store_screlease)(p->mine, 0);
}

void Tracker::synchronousOp(bool fill, const void* dst, const void* src, size_t size, uint64_t beginTicks,
                            const core::CallScope& scope) {
  if (!recordKernels()) return;
  core::profile::OpRecord rec;
  rec.kind = fill ? schema::DeviceOpKind::FILL : schema::DeviceOpKind::COPY;
  rec.bytes = size;
  rec.thread = rec.submitThread = threadIdOf(scope);
  rec.appendIndex = scope.beginIndex();
  rec.recordedBy = schema::Api::HSA;
  rec.appendTicks = rec.submitTicks = beginTicks;
  rec.note = fill ? "hsa_amd_memory_fill is synchronous: no device time" : "hsa_memory_copy is synchronous: no device time";
  if (recordStacks()) rec.stack = core::captureStack(impl_->stackDepth);
  std::lock_guard<std::mutex> lock(impl_->mu);
  rec.direction = fill ? schema::CopyDirection::UNKNOWN : impl_->directionOf(dst, src);
  for (const DeviceInfo& d : impl_->devices)
    if (d.gpu) {
      if (!core::deviceIndexWanted(d.gpuIndex)) return;  // GTAP_DEVICE_FILTER
      rec.device = d.id;
      break;
    }
  rec.completedNs = core::monotonicNs();
  impl_->out.ops.push_back(std::move(rec));
}

Pending* Tracker::Impl::acquirePendingLocked() {
  if (freePending.empty()) return new Pending();
  Pending* p = freePending.back();
  freePending.pop_back();
  return p;
}

bool Tracker::Impl::armLocked(Pending* p) {
  p->mine = acquireSignalLocked();
  if (!p->mine.handle) return false;
  p->finished.store(false, std::memory_order_relaxed);
  outstanding.insert(p);
  if (GTAP_HSA_REAL(hsa_amd_signal_async_handler)(p->mine, HSA_SIGNAL_CONDITION_EQ, 0, &Impl::onSignalled, p) !=
      HSA_STATUS_SUCCESS) {
    outstanding.erase(p);
    freeSignals.push_back(p->mine);
    p->mine = hsa_signal_t{0};
    return false;
  }
  return true;
}

// The runtime's async handler thread, once gtap's signal reached 0.
bool Tracker::Impl::onSignalled(hsa_signal_value_t, void* arg) {
  auto* p = static_cast<Pending*>(arg);
  Impl& m = *Tracker::get().impl_;
  uint8_t saved = core::t_guard;
  core::t_guard = static_cast<uint8_t>(saved | core::kGuardHsa);
  if (!p->finished.exchange(true)) {
    {
      std::lock_guard<std::mutex> lock(m.mu);
      m.outstanding.erase(p);
    }
    m.completeCopy(*p);
  }
  // Read (here or by a drain): the signal and the entry can be used again.
  GTAP_HSA_REAL(hsa_signal_store_relaxed)(p->mine, 1);
  // On the runtime's thread: gtap's failure costs the entry, nothing more.
  try {
    std::lock_guard<std::mutex> lock(m.mu);
    if (m.loaded) m.freeSignals.push_back(p->mine);
    p->rec = core::profile::OpRecord{};
    m.freePending.push_back(p);
  } GTAP_CATCH_INTERNAL {
    core::stopAfterInternalError("the HSA copy completion handler");
  }
  core::t_guard = saved;
  return false;  // once
}

// Never throws: whatever gtap fails at here, the program's signal completes.
void Tracker::Impl::completeCopy(Timed& work) {
  Timed* p = &work;
  core::profile::OpRecord& rec = p->rec;
  try {
    rec.completedNs = core::monotonicNs();
    hsa_amd_profiling_async_copy_time_t t{};
    if (GTAP_HSA_REAL(hsa_amd_profiling_get_async_copy_time)(p->mine, &t) == HSA_STATUS_SUCCESS) {
      rec.timed = true;
      rec.start = t.start;
      rec.end = t.end;
    } else {
      rec.note = "the runtime gave no copy time";
    }
    if (p->program.handle) {
      // The program's signal completes as it would have: after the work, by
      // one. Its raw profiling fields (amd_signal_t) and gtap's answer to its
      // own profiling queries carry the times the work had.
      auto* from = reinterpret_cast<amd_signal_t*>(p->mine.handle);
      auto* to = reinterpret_cast<amd_signal_t*>(p->program.handle);
      to->start_ts = from->start_ts;
      to->end_ts = from->end_ts;
      programTimes.put(p->program.handle, true, rec.timed, rec.start, rec.end);
    }
  } GTAP_CATCH_INTERNAL {
    core::stopAfterInternalError("the HSA copy completion handler");
  }
  if (p->program.handle) GTAP_HSA_REAL(hsa_signal_subtract_screlease)(p->program, 1);
  try {
    std::lock_guard<std::mutex> lock(mu);
    if (uint32_t dev = rec.device; dev < devices.size()) {
      DeviceInfo& d = devices[dev];
      if (rec.completedNs - d.lastSampleNs > kClockSampleIntervalNs) sampleClockLocked(d);
    }
    out.ops.push_back(std::move(rec));
  } GTAP_CATCH_INTERNAL {
    core::stopAfterInternalError("the HSA copy completion handler");
  }
}

// Called by the runtime on the thread that rang the program's doorbell, for

}  // namespace gtap::hsa
