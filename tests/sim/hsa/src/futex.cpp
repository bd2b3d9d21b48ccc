#include "futex.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#include <ctime>

namespace sim_hsa::futex {

void wait(std::atomic<uint32_t>& word, uint32_t expected, uint64_t timeout_ns) {
  static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t), "futex word must be a plain 32-bit word");
  timespec ts{};
  timespec* timeout = nullptr;
  if (timeout_ns != UINT64_MAX) {
    ts.tv_sec = time_t(timeout_ns / 1'000'000'000ull);
    ts.tv_nsec = long(timeout_ns % 1'000'000'000ull);
    timeout = &ts;
  }
  // Process-private: every waiter is a thread of this process.
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected, timeout, nullptr, 0);
}

void wakeAll(std::atomic<uint32_t>& word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

}  // namespace sim_hsa::futex
