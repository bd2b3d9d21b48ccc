// Host time for records. The hot path reads the invariant TSC (a few ns); the
// writer converts ticks to CLOCK_MONOTONIC nanoseconds, the file's one host
// clock domain. Without an invariant TSC, ticks are CLOCK_MONOTONIC ns.
#pragma once

#include <time.h>

#if !defined(__x86_64__)
#error "libgtap.so reads the x86-64 TSC (nowTicks); configure with -DGTAP_READERS_ONLY=ON on other architectures"
#endif
#include <x86intrin.h>

#include <cstdint>

// Declared hidden, as everything of libgtap.so is: a wrapper then reads these
// globals directly, not through the GOT.
#pragma GCC visibility push(hidden)
namespace gtap::core {

extern bool g_ticksAreTsc;

inline int64_t monotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// Out of line, so the TSC read stays a few instructions where it is inlined.
__attribute__((noinline, cold)) uint64_t monotonicTicks();

inline uint64_t nowTicks() {
  if (__builtin_expect(g_ticksAreTsc, 1)) return __rdtsc();
  return monotonicTicks();
}

// Decides once per process whether the TSC is usable.
void initClock();

// Maps ticks to host ns with anchors taken by the writer: piecewise linear,
// continuous and increasing. Only the writer thread uses it.
class TickConverter {
 public:
  TickConverter();
  // Takes a new (ticks, ns) pair; call before draining records.
  void sample();
  int64_t toNs(uint64_t ticks) const;

  // The mapping of the last sample as one multiply and shift (ns per tick in
  // 16.48 fixed point), for the writer's per-record conversions: a double
  // conversion costs several times as much. toNs gives the same answers, so
  // every record of the file converts alike.
  struct Fast {
    uint64_t anchorTicks;
    int64_t anchorNs;
    uint64_t mult;  // ns per tick << 48
    int64_t toNs(uint64_t ticks) const {
      __int128 dt = static_cast<int64_t>(ticks - anchorTicks);
      return anchorNs + static_cast<int64_t>((dt * static_cast<__int128>(mult)) >> 48);
    }
    int64_t spanNs(uint64_t dticks) const {
      return static_cast<int64_t>((static_cast<unsigned __int128>(dticks) * mult) >> 48);
    }
  };
  Fast fast() const;

 private:
  uint64_t anchorTicks_ = 0;
  int64_t anchorNs_ = 0;
  double nsPerTick_ = 1.0;
  bool haveRate_ = false;
  uint64_t startTicks_ = 0;
  int64_t startNs_ = 0;
};

}  // namespace gtap::core
#pragma GCC visibility pop
