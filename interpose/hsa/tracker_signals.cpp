#include "tracker_impl.h"


namespace gtap::hsa {

// --- gtap's completion signals --------------------------------------------------------------

hsa_signal_t Tracker::Impl::newPacketSignal() {
  // Only the device waits on it (the host just loads it): no interrupt, which
  // on ROCr would take one of the process's limited kernel events.
  hsa_signal_t s{};
  if (GTAP_HSA_CALL(hsa_amd_signal_create, 1, 0, nullptr, HSA_AMD_SIGNAL_AMD_GPU_ONLY, &s) == HSA_STATUS_SUCCESS)
    return s;
  if (GTAP_HSA_REAL(hsa_signal_create)(1, 0, nullptr, &s) != HSA_STATUS_SUCCESS) return hsa_signal_t{0};
  return s;
}

hsa_signal_t Tracker::Impl::acquireSignalLocked() {
  if (!freeSignals.empty()) {
    hsa_signal_t s = freeSignals.back();
    freeSignals.pop_back();
    return s;
  }
  hsa_signal_t s{};
  if (GTAP_HSA_REAL(hsa_signal_create)(1, 0, nullptr, &s) != HSA_STATUS_SUCCESS) return hsa_signal_t{0};
  return s;
}

// --- the program's own profiling queries ------------------------------------------------------

bool Tracker::programTimes(hsa_signal_t signal, bool copy, uint64_t& start, uint64_t& end) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  // The program has seen its signal complete: gtap's packet before it is done.
  if (impl_->loaded && !copy) impl_->collectAllLocked();
  return impl_->programTimes.get(signal.handle, copy, start, end);
}

void Tracker::programSignalDestroyed(hsa_signal_t signal) { impl_->programTimes.put(signal.handle, false, false, 0, 0); }

// --- the program's signals' times, without a lock ------------------------------------------

ProgramTimesTable::Entry* ProgramTimesTable::find(uint64_t signal, bool insert) {
  if (signal == 0) return nullptr;
  size_t at = static_cast<size_t>((signal >> 4) * 0x9e3779b97f4a7c15ull >> 40);
  for (size_t i = 0; i < kProbes; ++i) {
    Entry& e = entries_[(at + i) & (kEntries - 1)];
    uint64_t key = e.key.load(std::memory_order_acquire);
    if (key == signal) return &e;
    if (key != 0) continue;
    if (!insert) return nullptr;
    if (e.key.compare_exchange_strong(key, signal, std::memory_order_acq_rel) || key == signal) return &e;
  }
  return nullptr;  // full around it: the program's queries on it go to the runtime
}

void ProgramTimesTable::put(uint64_t signal, bool copy, bool valid, uint64_t start, uint64_t end) {
  Entry* e = find(signal, valid);
  if (!e) return;
  uint32_t seq = e->sequence.load(std::memory_order_relaxed);
  // Two threads reading completions of one signal on two queues at once: the
  // second waits for the first's few stores.
  while ((seq & 1) || !e->sequence.compare_exchange_weak(seq, seq + 1, std::memory_order_acquire))
    seq = e->sequence.load(std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  e->start = start;
  e->end = end;
  e->copy = copy;
  e->valid = valid;
  e->sequence.store(seq + 2, std::memory_order_release);
}

bool ProgramTimesTable::get(uint64_t signal, bool copy, uint64_t& start, uint64_t& end) {
  Entry* e = find(signal, false);
  if (!e) return false;
  for (;;) {
    uint32_t seq = e->sequence.load(std::memory_order_acquire);
    if (seq & 1) continue;
    bool valid = e->valid, isCopy = e->copy;
    uint64_t s = e->start, t = e->end;
    std::atomic_thread_fence(std::memory_order_acquire);
    if (e->sequence.load(std::memory_order_relaxed) != seq) continue;
    if (!valid || isCopy != copy) return false;
    start = s;
    end = t;
    return true;
  }
}

void ProgramTimesTable::clear() {
  for (Entry& e : entries_) {
    e.valid = false;
    e.key.store(0, std::memory_order_relaxed);
  }
}

}  // namespace gtap::hsa
