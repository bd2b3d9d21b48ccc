// The simulated device clock.
//
// Real GPUs count timestamps in their own ticks, at their own rate, from their
// own origin; tools must correlate that clock with the host's. The simulated
// device does the same so correlation code is really exercised:
//
//   device_ticks = offset + (host_ns - base_ns) * 19.2 MHz
//
// host_ns is CLOCK_MONOTONIC, base_ns the host time when the clock was first
// used (zeInit), offset defaults to kDefaultOffset and can be set with the
// environment variable GTAP_SIM_ZE_TICK_OFFSET (decimal, or hex with 0x).
// Global timestamps keep all 64 bits; kernel timestamps keep the low
// kKernelValidBits, so they wrap every 2^32 / 19.2 MHz = ~223.7 s.
#pragma once

#include <cstdint>

namespace sim::clock {

inline constexpr uint64_t kTicksPerSecond = 19'200'000;
// 1e9 / 19.2e6 = 52.083 ns per tick; the pre-1.2 property reports it truncated,
// as drivers do.
inline constexpr uint64_t kLegacyNsPerTick = 52;
inline constexpr uint32_t kGlobalValidBits = 64;
inline constexpr uint32_t kKernelValidBits = 32;
// 3 * 2^40 ticks (~47.7 h of "device uptime"): far from the host clock and a
// multiple of 2^32, so by default the kernel counter starts near zero.
inline constexpr uint64_t kDefaultOffset = 3ull << 40;

// Reads CLOCK_MONOTONIC in nanoseconds.
uint64_t hostNs();
// Fixes the base and reads the offset from the environment; idempotent.
void start();
// Device ticks at a given host time (full 64 bits).
uint64_t ticksAt(uint64_t host_ns);
// The same once start() has run (zeInit); async-signal-safe, for the
// sampling signal handler.
uint64_t ticksAtStarted(uint64_t host_ns);
inline uint64_t nowTicks() { return ticksAt(hostNs()); }
inline uint64_t kernelTicks(uint64_t ticks) {
  return kKernelValidBits >= 64 ? ticks : ticks & ((uint64_t{1} << kKernelValidBits) - 1);
}

}  // namespace sim::clock
