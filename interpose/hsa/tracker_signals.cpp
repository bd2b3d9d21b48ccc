#include "tracker_impl.h"


namespace gtap::hsa {

// --- gtap's completion signals --------------------------------------------------------------

hsa_signal_t Tracker::Impl::acquirePacketSignalLocked() {
  if (!freePacketSignals.empty()) {
    hsa_signal_t s = freePacketSignals.back();
    freePacketSignals.pop_back();
    return s;
  }
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
  auto it = impl_->programTimes.find(signal.handle);
  if (it == impl_->programTimes.end() || it->second.copy != copy) return false;
  start = it->second.start;
  end = it->second.end;
  return true;
}

void Tracker::programSignalDestroyed(hsa_signal_t signal) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->programTimes.erase(signal.handle);
}

}  // namespace gtap::hsa
