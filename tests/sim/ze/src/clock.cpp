#include "clock.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <mutex>

namespace sim::clock {

namespace {

struct State {
  uint64_t base_ns = 0;
  uint64_t offset = kDefaultOffset;
};

State g_state;
std::once_flag g_once;

uint64_t offsetFromEnvironment() {
  const char* text = std::getenv("GTAP_SIM_ZE_TICK_OFFSET");
  if (text == nullptr || *text == '\0') return kDefaultOffset;
  errno = 0;
  char* end = nullptr;
  unsigned long long v = std::strtoull(text, &end, 0);
  if (errno != 0 || end == text || *end != '\0') {
    std::fprintf(stderr,
                 "gtap simulated Level Zero driver: ignoring GTAP_SIM_ZE_TICK_OFFSET=\"%s\" "
                 "(not an unsigned integer)\n",
                 text);
    return kDefaultOffset;
  }
  return v;
}

}  // namespace

uint64_t hostNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
}

void start() {
  std::call_once(g_once, [] {
    g_state.offset = offsetFromEnvironment();
    g_state.base_ns = hostNs();
  });
}

uint64_t ticksAt(uint64_t host_ns) {
  start();
  return ticksAtStarted(host_ns);
}

uint64_t ticksAtStarted(uint64_t host_ns) {
  uint64_t delta = host_ns > g_state.base_ns ? host_ns - g_state.base_ns : 0;
  // 19.2e6 / 1e9 == 12 / 625; the product stays exact for ~48 years of delta.
  return g_state.offset + delta * 12 / 625;
}

}  // namespace sim::clock
