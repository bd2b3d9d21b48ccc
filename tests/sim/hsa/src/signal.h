// Signals. A signal handle is the address of an amd_signal_t, as in ROCr, so
// programs and tools that read the value or the profiling timestamps through
// that block (hsa_amd_signal_value_pointer, start_ts/end_ts) work unchanged.
// The runtime's own state follows the block in the same allocation.
//
// Signal memory is never returned to the system: destroyed signals go back
// to a free list, so a stale handle reads a dead signal, never unmapped
// memory.
#pragma once

#include "common.h"
#include "futex.h"

#include <hsa/amd_hsa_signal.h>

#include <atomic>
#include <cstdint>

namespace sim_hsa {

struct Agent;

// Told when its doorbell signal is written (intercept queues, which process
// new packets in the writing thread as ROCr's do).
class DoorbellListener {
 public:
  virtual void doorbellRung() = 0;

 protected:
  ~DoorbellListener() = default;
};

struct alignas(AMD_SIGNAL_ALIGN_BYTES) Signal {
  amd_signal_t abi;
  std::atomic<uint32_t> magic{0};
  bool runtime_owned = false;                      // queue doorbells: not for hsa_signal_destroy
  futex::Epoch epoch;                              // bumped on every change of the value
  std::atomic<const Agent*> copy_agent{nullptr};   // who timed the last async copy
  std::atomic<DoorbellListener*> listener{nullptr};
  Signal* next_free = nullptr;

  int64_t& value() { return *const_cast<int64_t*>(&abi.value); }
};

// Null unless the handle is a live signal.
Signal* toSignal(hsa_signal_t handle);
inline hsa_signal_t toHandle(Signal* s) { return {reinterpret_cast<uint64_t>(&s->abi)}; }
// Null when out of memory.
Signal* newSignal(int64_t initial, bool runtime_owned = false);
void deleteSignal(Signal* s);
// At the last hsa_shut_down: every signal becomes invalid.
void deleteAllSignals();

// Bumped whenever any signal changes: what waits on several signals sleep on.
futex::Epoch& anySignalChanged();

bool conditionHolds(hsa_signal_condition_t condition, int64_t value, int64_t compare);
int64_t loadValue(Signal* s, std::memory_order order);
void storeValue(Signal* s, int64_t value, std::memory_order order);
int64_t subtractValue(Signal* s, int64_t amount, std::memory_order order);
// Waits as hsa_signal_wait_* do; returns the value that satisfied the
// condition, or the last value seen when the timeout (ns) passed.
int64_t waitValue(Signal* s, hsa_signal_condition_t condition, int64_t compare, uint64_t timeout_ns,
                  hsa_wait_state_t state, std::memory_order order);

}  // namespace sim_hsa
