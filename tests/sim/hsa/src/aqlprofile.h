// AMD's AQL profile extension (hsa_ven_amd_aqlprofile.h), reached through
// hsa_system_get_major_extension_table(HSA_EXTENSION_AMD_AQLPROFILE, 1, ...).
// A tool fills a profile, asks for start and stop packets, puts them around
// the work to measure on a queue, and reads one value per event once the stop
// packet completed. The counters are what the queue's packet processor really
// did in between (tests/sim/README.md, "AQL profile extension").
#pragma once

#include "common.h"
#include "queue.h"

#include <cstdint>

namespace sim_hsa {

// What a queue's packet processor has done since it was created.
struct QueueCounters {
  uint64_t busy_ticks = 0;  // device ticks spent running kernel dispatches
  uint64_t cp_busy_ticks = 0;  // device ticks spent on packets of any kind (taken to completed)
  uint64_t waves = 0;       // wavefronts of the work-groups that ran
};

// Wavefronts a dispatch launches: per work-group, ceil(work-items / 64).
uint64_t dispatchWaves(const hsa_kernel_dispatch_packet_t& packet);

// Whether a vendor-specific packet is one aqlprofile_start/stop/read filled.
bool isProfilePacket(const AqlPacket& packet);
// Runs it on the packet processor: start records the counters, stop writes
// the differences into the profile's output buffer.
hsa_status_t runProfilePacket(const AqlPacket& packet, const QueueCounters& counters);

}  // namespace sim_hsa
