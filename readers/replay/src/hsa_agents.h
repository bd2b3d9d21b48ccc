// The captured HSA agents and memory pools found in the replay's runtime:
// GPU agents matched by their first ISA's name (the N-th matching GPU with
// --device N), CPU agents by type, pools by their agent, segment, global
// flags and ordinal among those of the same kind.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gtap/readers/capture.h"
#include "gtap/readers/replay_stream.h"
#include "hsa_functions.h"

namespace gtap::replay {

// One agent of the replay's runtime.
struct HsaRuntimeAgent {
  hsa_agent_t agent{};
  hsa_device_type_t type = HSA_DEVICE_TYPE_CPU;
  std::string name;
  std::string isa;  // its first ISA's name; empty without one
};

struct HsaAgentMap {
  std::vector<HsaRuntimeAgent> runtime;           // every agent, in hsa_iterate_agents order
  std::map<uint64_t, hsa_agent_t> agents;         // by the capture's agent id
  std::map<uint64_t, hsa_amd_memory_pool_t> pools;  // by the capture's pool id
  // A pool of a CPU agent with HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT,
  // for kernarg segments outside every captured allocation (0: none).
  hsa_amd_memory_pool_t kernargPool{};
};

// Throws ReplayError before anything runs when a captured agent or pool has
// no counterpart, naming it and what the runtime offers. `device`: the
// replay GPU (counted from 0 among the runtime's GPU agents) the first
// captured GPU agent must map to. A differing agent name is a warning.
HsaAgentMap mapHsaAgents(const HsaFunctions& hsa, const readers::Capture& capture, const readers::ReplayStream& stream,
                         std::optional<uint32_t> device, std::vector<std::string>& warnings);

}  // namespace gtap::replay
