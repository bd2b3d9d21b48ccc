// The simulated GPU's clock and the HSA system clock.
//
// Real AMD GPUs count time in their own ticks (100 MHz on recent parts),
// from their own origin; ROCr stores those raw ticks with a dispatch and
// converts them to the HSA system domain when asked. The simulated device
// does the same, so correlation code is really exercised:
//
//   device_ticks = offset + (monotonic_ns - base_ns) / 10        (100 MHz)
//   system_ns    = CLOCK_BOOTTIME ns + GTAP_SIM_HSA_SYSTEM_OFFSET (1 GHz)
//
// monotonic_ns is CLOCK_MONOTONIC, base_ns the host time of the first
// hsa_init in the process (kept across shut-down and re-init, so ticks only
// grow), offset GTAP_SIM_HSA_TICK_OFFSET or kDefaultOffset. The system domain
// is what HSA_SYSTEM_INFO_TIMESTAMP returns; ROCr takes it from the kernel
// driver's ktime_get_boottime_ns(), i.e. CLOCK_BOOTTIME, which equals
// CLOCK_MONOTONIC plus the time the machine spent suspended.
#pragma once

#include <cstdint>

namespace sim_hsa::clock {

inline constexpr uint64_t kDeviceTicksPerSecond = 100'000'000;
inline constexpr uint64_t kNsPerDeviceTick = 1'000'000'000 / kDeviceTicksPerSecond;
inline constexpr uint64_t kSystemTicksPerSecond = 1'000'000'000;
// 7 * 2^40 ticks (~21.4 h of "device uptime" at 100 MHz): far from any host
// clock reading, so mixing the domains up shows.
inline constexpr uint64_t kDefaultOffset = 7ull << 40;

uint64_t monotonicNs();
// HSA_SYSTEM_INFO_TIMESTAMP.
uint64_t systemNs();
// Fixes the base and reads the environment; idempotent.
void start();
uint64_t deviceTicks();
// hsa_amd_profiling_convert_tick_to_system_domain; exact up to the 10 ns of a tick.
uint64_t deviceTicksToSystem(uint64_t ticks);

}  // namespace sim_hsa::clock
