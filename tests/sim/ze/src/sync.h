// One lock and one condition variable for every state change the host may
// wait on (events, fences, queue progress). A single broadcast point keeps
// waits across object kinds (a queue worker waiting on an event a host thread
// signals) simple and free of lost wake-ups; contention is irrelevant here.
#pragma once

#include <ze_api.h>

#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace sim::sync {

std::mutex& mutex();
std::condition_variable& cv();

// In a forked child only, before anything else runs (fork.cpp).
void replaceAfterFork();

// Wakes every waiter; call with the lock held or just after releasing it.
inline void notifyAll() { cv().notify_all(); }

// Waits with Level Zero timeout semantics: 0 only checks, UINT64_MAX waits
// forever, anything else waits at most that many nanoseconds.
// Returns ZE_RESULT_SUCCESS once ready() holds, ZE_RESULT_NOT_READY otherwise.
template <class Pred>
ze_result_t waitFor(std::unique_lock<std::mutex>& lock, uint64_t timeout_ns, Pred ready) {
  if (ready()) return ZE_RESULT_SUCCESS;
  if (timeout_ns == 0) return ZE_RESULT_NOT_READY;
  // Beyond ~146 years a deadline would overflow the clock: treat as forever.
  if (timeout_ns == UINT64_MAX || timeout_ns > (uint64_t{1} << 62)) {
    cv().wait(lock, ready);
    return ZE_RESULT_SUCCESS;
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::nanoseconds(timeout_ns);
  return cv().wait_until(lock, deadline, ready) ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
}

}  // namespace sim::sync
