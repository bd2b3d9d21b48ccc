#include "clock.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace gtap::core {

bool g_ticksAreTsc = false;

uint64_t monotonicTicks() { return static_cast<uint64_t>(monotonicNs()); }

namespace {
// The TSC is a valid clock across cores and power states only when the CPU says
// so; otherwise fall back to clock_gettime.
bool cpuHasInvariantTsc() {
  FILE* f = std::fopen("/proc/cpuinfo", "re");
  if (!f) return false;
  char line[4096];
  bool constant = false, nonstop = false;
  while (std::fgets(line, sizeof line, f)) {
    if (std::strncmp(line, "flags", 5) != 0) continue;
    constant = std::strstr(line, " constant_tsc") != nullptr;
    nonstop = std::strstr(line, " nonstop_tsc") != nullptr;
    break;
  }
  std::fclose(f);
  return constant && nonstop;
}

void pair(uint64_t& ticks, int64_t& ns) {
  // Bracket the clock read between two tick reads and keep the tightest of a
  // few brackets: a thread preempted inside one would put the pair off by the
  // preemption, and the rate taken over a few milliseconds with it.
  uint64_t best = UINT64_MAX;
  for (int attempt = 0; attempt < 5; ++attempt) {
    uint64_t a = nowTicks();
    int64_t n = monotonicNs();
    uint64_t b = nowTicks();
    if (b - a < best) {
      best = b - a;
      ticks = a + (b - a) / 2;
      ns = n;
    }
  }
}

// Anchors closer together than this would give a noisy rate.
constexpr int64_t kMinAnchorSpanNs = 5'000'000;
}  // namespace

void initClock() {
  const char* force = std::getenv("GTAP_CLOCK");
  if (force && std::strcmp(force, "monotonic") == 0) {
    g_ticksAreTsc = false;
    return;
  }
  g_ticksAreTsc = cpuHasInvariantTsc();
}

TickConverter::TickConverter() {
  pair(anchorTicks_, anchorNs_);
  startTicks_ = anchorTicks_;
  startNs_ = anchorNs_;
  if (!g_ticksAreTsc) {
    nsPerTick_ = 1.0;
    haveRate_ = true;
  }
}

void TickConverter::sample() {
  if (!g_ticksAreTsc) return;
  uint64_t t;
  int64_t ns;
  pair(t, ns);
  if (!haveRate_) {
    // First rate: wait out the minimum span (only at the first drain, on the
    // writer thread) so even a very short run converts accurately.
    while (ns - startNs_ < kMinAnchorSpanNs) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      pair(t, ns);
    }
    nsPerTick_ = static_cast<double>(ns - startNs_) / static_cast<double>(t - startTicks_);
    haveRate_ = true;
    return;  // keep the start anchor: the first segment runs from session start
  }
  // Re-anchor at the measured pair with the whole-run average rate: errors do
  // not accumulate, and the rate steadies as the run grows. A re-anchor may move
  // the mapping by a few hundred ns; the writer keeps each thread's times
  // non-decreasing.
  if (ns - anchorNs_ < kMinAnchorSpanNs || t <= anchorTicks_) return;
  nsPerTick_ = static_cast<double>(ns - startNs_) / static_cast<double>(t - startTicks_);
  anchorNs_ = ns;
  anchorTicks_ = t;
}

TickConverter::Fast TickConverter::fast() const {
  if (!g_ticksAreTsc) return {0, 0, uint64_t{1} << 48};
  return {anchorTicks_, anchorNs_, static_cast<uint64_t>(nsPerTick_ * 281474976710656.0 + 0.5)};
}

int64_t TickConverter::toNs(uint64_t ticks) const {
  if (!g_ticksAreTsc) return static_cast<int64_t>(ticks);
  return fast().toNs(ticks);
}

}  // namespace gtap::core
