// Blocking on a 32-bit word until another thread changes it: the building
// block of signal waits, packet processors and worker threads.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace sim_hsa::futex {

// Sleeps while *word == expected, at most timeout_ns (UINT64_MAX: no limit).
// May return early (spurious wake-ups); callers re-check their condition.
void wait(std::atomic<uint32_t>& word, uint32_t expected, uint64_t timeout_ns);
void wakeAll(std::atomic<uint32_t>& word);

// A change counter with a count of sleepers, so that changes nobody waits
// for cost no system call. A waiter reads the epoch, re-checks its condition,
// then sleeps while the epoch is unchanged; a changer bumps the epoch after
// changing state and wakes if anyone sleeps. With sequentially consistent
// operations on both counters no wake-up is lost.
struct Epoch {
  std::atomic<uint32_t> value{0};
  std::atomic<uint32_t> sleepers{0};

  void bump() {
    value.fetch_add(1, std::memory_order_seq_cst);
    if (sleepers.load(std::memory_order_seq_cst) != 0) wakeAll(value);
  }
};

// Waits until ready() holds or timeout_ns passed (UINT64_MAX: forever);
// returns ready(). Sleeps at most slice_ns at a time, so that state changed
// behind the runtime's back (a program writing a signal's memory directly)
// is still seen.
template <class Ready>
bool waitUntil(Epoch& epoch, uint64_t timeout_ns, Ready ready, uint64_t slice_ns = 20'000'000) {
  using Clock = std::chrono::steady_clock;
  const bool forever = timeout_ns == UINT64_MAX || timeout_ns > (uint64_t{1} << 62);
  const auto deadline = forever ? Clock::time_point::max() : Clock::now() + std::chrono::nanoseconds(timeout_ns);
  for (;;) {
    uint32_t seen = epoch.value.load(std::memory_order_seq_cst);
    epoch.sleepers.fetch_add(1, std::memory_order_seq_cst);
    if (ready()) {
      epoch.sleepers.fetch_sub(1, std::memory_order_seq_cst);
      return true;
    }
    uint64_t sleep = slice_ns;
    if (!forever) {
      auto now = Clock::now();
      if (now >= deadline) {
        epoch.sleepers.fetch_sub(1, std::memory_order_seq_cst);
        return false;
      }
      auto left = uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(deadline - now).count());
      if (left < sleep) sleep = left;
    }
    wait(epoch.value, seen, sleep);
    epoch.sleepers.fetch_sub(1, std::memory_order_seq_cst);
  }
}

}  // namespace sim_hsa::futex
