#include "clock.h"

#include "common.h"

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <ctime>
#include <mutex>

namespace sim_hsa::clock {

namespace {

struct State {
  uint64_t base_ns = 0;
  uint64_t tick_offset = kDefaultOffset;
  uint64_t system_offset = 0;
  // System time minus CLOCK_MONOTONIC. Kept while a fresh reading stays
  // within a millisecond, so conversions are an exact affine map (the same
  // tick always converts to the same time) until the machine suspends.
  std::atomic<int64_t> distance{0};
};

State g_state;
std::once_flag g_once;

uint64_t readNs(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
}

uint64_t fromEnvironment(const char* name, uint64_t fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  errno = 0;
  char* end = nullptr;
  unsigned long long v = std::strtoull(text, &end, 0);
  if (errno != 0 || end == text || *end != '\0' || *text == '-') {
    warn("ignoring %s=\"%s\" (not an unsigned integer)", name, text);
    return fallback;
  }
  return v;
}

int64_t measureDistance() {
  uint64_t m1 = readNs(CLOCK_MONOTONIC);
  uint64_t s = readNs(CLOCK_BOOTTIME) + g_state.system_offset;
  uint64_t m2 = readNs(CLOCK_MONOTONIC);
  return int64_t(s) - int64_t(m1 + (m2 - m1) / 2);
}

}  // namespace

uint64_t monotonicNs() { return readNs(CLOCK_MONOTONIC); }

uint64_t systemNs() {
  start();
  return readNs(CLOCK_BOOTTIME) + g_state.system_offset;
}

void start() {
  std::call_once(g_once, [] {
    g_state.tick_offset = fromEnvironment("GTAP_SIM_HSA_TICK_OFFSET", kDefaultOffset);
    g_state.system_offset = fromEnvironment("GTAP_SIM_HSA_SYSTEM_OFFSET", 0);
    g_state.base_ns = monotonicNs();
    g_state.distance.store(measureDistance(), std::memory_order_relaxed);
  });
}

uint64_t deviceTicks() {
  start();
  uint64_t now = monotonicNs();
  uint64_t delta = now > g_state.base_ns ? now - g_state.base_ns : 0;
  return g_state.tick_offset + delta / kNsPerDeviceTick;
}

uint64_t deviceTicksToSystem(uint64_t ticks) {
  start();
  // Back to CLOCK_MONOTONIC, then across to the system domain by the
  // distance between the two clocks (it only changes when the machine
  // suspends). Signed, so ticks from before hsa_init convert too.
  int64_t monotonic = int64_t(g_state.base_ns) + (int64_t(ticks - g_state.tick_offset) * int64_t(kNsPerDeviceTick));
  int64_t distance = g_state.distance.load(std::memory_order_relaxed);
  int64_t now = measureDistance();
  if (now - distance > 1'000'000 || distance - now > 1'000'000) {
    g_state.distance.store(now, std::memory_order_relaxed);
    distance = now;
  }
  return uint64_t(monotonic + distance);
}

}  // namespace sim_hsa::clock
