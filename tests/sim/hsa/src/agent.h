// The two agents: the host CPU and one simulated GPU kernel agent. Both live
// for the whole process, so their handles never dangle.
#pragma once

#include "common.h"

#include <cstdint>

namespace sim_hsa {

struct Agent {
  hsa_device_type_t type;
  uint32_t node;  // as the kernel driver numbers them: CPU 0, GPU 1
};

Agent& cpuAgent();
Agent& gpuAgent();
// Null unless the handle is one of the two agents.
Agent* toAgent(hsa_agent_t handle);
inline hsa_agent_t toHandle(const Agent* a) { return {reinterpret_cast<uint64_t>(a)}; }
inline bool isGpu(const Agent* a) { return a == &gpuAgent(); }

// What the simulated GPU reports, and the limits the runtime enforces.
namespace gpu {
inline constexpr const char* kName = "gtap-sim-gpu";
inline constexpr const char* kProductName = "gtap simulated GPU";
inline constexpr uint32_t kWavefrontSize = 64;
inline constexpr uint32_t kWorkgroupMaxSize = 1024;
inline constexpr uint32_t kQueueMinSize = 64;  // packets; smaller requests are rounded up, as ROCr does
inline constexpr uint32_t kQueueMaxSize = 131072;
inline constexpr uint32_t kQueuesMax = 128;
inline constexpr uint32_t kGroupSegmentMax = 64 * 1024;      // bytes of group memory per work-group
inline constexpr uint32_t kPrivateSegmentMax = 1024 * 1024;  // bytes of private memory per work-item
inline constexpr uint32_t kComputeUnits = 4;
}  // namespace gpu

}  // namespace sim_hsa
