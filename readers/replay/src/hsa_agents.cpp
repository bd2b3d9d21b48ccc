#include "hsa_agents.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <utility>

#include "gtap/readers/replayer.h"

namespace gtap::replay {

namespace {

using readers::ReplayError;
using readers::ReplayRecord;
using O = readers::ReplayOp;

struct RuntimePool {
  hsa_amd_memory_pool_t pool{};
  uint32_t segment = 0;
  uint32_t flags = 0;  // global segment only, as the capture records them
};

const char* typeName(uint64_t type) {
  switch (type) {
    case HSA_DEVICE_TYPE_CPU: return "CPU";
    case HSA_DEVICE_TYPE_GPU: return "GPU";
    case HSA_DEVICE_TYPE_DSP: return "DSP";
    default: return "agent";
  }
}

const char* segmentName(uint64_t segment) {
  switch (segment) {
    case HSA_AMD_SEGMENT_GLOBAL: return "global";
    case HSA_AMD_SEGMENT_READONLY: return "read-only";
    case HSA_AMD_SEGMENT_PRIVATE: return "private";
    case HSA_AMD_SEGMENT_GROUP: return "group";
    default: return "segment ?";
  }
}

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string firstIsa(const HsaFunctions& hsa, hsa_agent_t agent) {
  hsa_isa_t isa{};
  hsa.hsa_agent_iterate_isas(
      agent,
      [](hsa_isa_t i, void* data) {
        *static_cast<hsa_isa_t*>(data) = i;
        return HSA_STATUS_INFO_BREAK;
      },
      &isa);
  uint32_t length = 0;
  if (!isa.handle || hsa.hsa_isa_get_info_alt(isa, HSA_ISA_INFO_NAME_LENGTH, &length) != HSA_STATUS_SUCCESS ||
      length == 0 || length > 4096)
    return "";
  std::string name(length + 1, '\0');
  if (hsa.hsa_isa_get_info_alt(isa, HSA_ISA_INFO_NAME, name.data()) != HSA_STATUS_SUCCESS) return "";
  name.resize(name.find('\0') == std::string::npos ? name.size() : name.find('\0'));
  return name;
}

std::vector<HsaRuntimeAgent> runtimeAgents(const HsaFunctions& hsa, const std::string& file) {
  std::vector<hsa_agent_t> handles;
  hsa_status_t s = hsa.hsa_iterate_agents(
      [](hsa_agent_t a, void* data) {
        static_cast<std::vector<hsa_agent_t>*>(data)->push_back(a);
        return HSA_STATUS_SUCCESS;
      },
      &handles);
  if (s != HSA_STATUS_SUCCESS) throw ReplayError(file + ": hsa_iterate_agents returned " + hsaStatusName(hsa, s));
  std::vector<HsaRuntimeAgent> out;
  for (hsa_agent_t a : handles) {
    HsaRuntimeAgent agent;
    agent.agent = a;
    char name[64] = {};
    hsa.hsa_agent_get_info(a, HSA_AGENT_INFO_NAME, name);
    agent.name.assign(name, strnlen(name, sizeof name));
    hsa.hsa_agent_get_info(a, HSA_AGENT_INFO_DEVICE, &agent.type);
    agent.isa = firstIsa(hsa, a);
    out.push_back(std::move(agent));
  }
  return out;
}

std::vector<RuntimePool> runtimePools(const HsaFunctions& hsa, hsa_agent_t agent) {
  struct Walk {
    const HsaFunctions* hsa;
    std::vector<RuntimePool> pools;
  } walk{&hsa, {}};
  hsa.hsa_amd_agent_iterate_memory_pools(
      agent,
      [](hsa_amd_memory_pool_t p, void* data) {
        auto* w = static_cast<Walk*>(data);
        RuntimePool pool;
        pool.pool = p;
        hsa_amd_segment_t segment{};
        w->hsa->hsa_amd_memory_pool_get_info(p, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &segment);
        pool.segment = static_cast<uint32_t>(segment);
        if (segment == HSA_AMD_SEGMENT_GLOBAL)
          w->hsa->hsa_amd_memory_pool_get_info(p, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, &pool.flags);
        w->pools.push_back(pool);
        return HSA_STATUS_SUCCESS;
      },
      &walk);
  return walk.pools;
}

std::string describe(const HsaRuntimeAgent& a, size_t index) {
  std::string s = std::to_string(index) + " " + typeName(a.type) + " \"" + a.name + "\"";
  if (!a.isa.empty()) s += " (ISA " + a.isa + ")";
  return s;
}

std::string offered(const std::vector<HsaRuntimeAgent>& runtime) {
  std::string s;
  for (size_t i = 0; i < runtime.size(); ++i) s += (s.empty() ? "" : ", ") + describe(runtime[i], i);
  return s.empty() ? std::string("it has no agents") : "its agents are " + s;
}

std::string describeCaptured(schema::ReplayRecord::HsaAgent::Reader a) {
  std::string s = std::string(typeName(a.getDeviceType())) + " agent " + std::to_string(a.getAgent()) + " \"" +
                  a.getName().cStr() + "\"";
  if (a.getIsa().size()) s += std::string(" (ISA ") + a.getIsa().cStr() + ")";
  return s;
}

}  // namespace

HsaAgentMap mapHsaAgents(const HsaFunctions& hsa, const readers::Capture& capture, const readers::ReplayStream& stream,
                         std::optional<uint32_t> device, std::vector<std::string>& warnings) {
  const std::string& file = capture.path();
  HsaAgentMap map;
  map.runtime = runtimeAgents(hsa, file);
  // The captured agents in the order the program's runtime listed them.
  std::vector<const ReplayRecord*> captured;
  for (const auto& r : stream.records)
    if (r.op == O::HSA_AGENT) captured.push_back(&r);
  std::stable_sort(captured.begin(), captured.end(), [](const ReplayRecord* a, const ReplayRecord* b) {
    return a->fields.getHsaAgent().getIndex() < b->fields.getHsaAgent().getIndex();
  });
  std::vector<size_t> gpus, cpus;  // positions in map.runtime
  for (size_t i = 0; i < map.runtime.size(); ++i)
    (map.runtime[i].type == HSA_DEVICE_TYPE_CPU ? cpus : gpus).push_back(i);
  if (device && *device >= gpus.size())
    throw ReplayError(file + ": --device " + std::to_string(*device) + ": this HSA runtime has " +
                      std::to_string(gpus.size()) + " GPU agent(s), counted from 0 (" + offered(map.runtime) + ")");
  std::vector<bool> used(map.runtime.size(), false);
  size_t cpuCount = 0;
  bool firstGpu = true;
  for (const ReplayRecord* r : captured) {
    auto a = r->fields.getHsaAgent();
    std::string where = file + ": record " + readers::recordLabel(*r);
    if (map.agents.count(a.getAgent())) throw ReplayError(where + ": agent id " + std::to_string(a.getAgent()) + " is recorded twice");
    size_t chosen = map.runtime.size();
    if (a.getDeviceType() == HSA_DEVICE_TYPE_CPU) {
      if (cpus.empty()) throw ReplayError(where + ": the capture used " + describeCaptured(a) + "; this HSA runtime has no CPU agent (" + offered(map.runtime) + ")");
      if (cpuCount >= cpus.size())
        warnings.push_back(where + ": the capture used " + std::to_string(cpuCount + 1) +
                           " CPU agents, this runtime has " + std::to_string(cpus.size()) + "; " +
                           describeCaptured(a) + " replays on the last one");
      chosen = cpus[std::min(cpuCount, cpus.size() - 1)];
      ++cpuCount;
    } else {
      auto matches = [&](size_t i) {
        return static_cast<uint64_t>(map.runtime[i].type) == a.getDeviceType() && map.runtime[i].isa == a.getIsa().cStr();
      };
      if (firstGpu && device) {
        size_t i = gpus[*device];
        if (!matches(i))
          throw ReplayError(where + ": --device " + std::to_string(*device) + " is " + describe(map.runtime[i], i) +
                            ", which cannot run the code of the captured " + describeCaptured(a) +
                            " (the ISA must be the same)");
        chosen = i;
      } else {
        for (size_t i : gpus)
          if (!used[i] && matches(i)) {
            chosen = i;
            break;
          }
      }
      if (chosen == map.runtime.size())
        throw ReplayError(where + ": the capture used " + describeCaptured(a) +
                          ", which this HSA runtime does not offer (no unused agent of that type and ISA): " +
                          offered(map.runtime));
      firstGpu = false;
      used[chosen] = true;
    }
    const HsaRuntimeAgent& here = map.runtime[chosen];
    if (here.name != a.getName().cStr())
      warnings.push_back(where + ": captured " + describeCaptured(a) + " replays on " + describe(here, chosen));
    map.agents[a.getAgent()] = here.agent;
  }
  for (const auto& r : stream.records) {
    if (r.op != O::HSA_POOL) continue;
    auto p = r.fields.getHsaPool();
    std::string where = file + ": record " + readers::recordLabel(r);
    auto agent = map.agents.find(p.getAgent());
    if (agent == map.agents.end())
      throw ReplayError(where + ": pool " + std::to_string(p.getPool()) + "'s agent " + std::to_string(p.getAgent()) +
                        " has no hsaAgent record");
    std::string wanted = std::string(segmentName(p.getSegment())) + " pool with global flags " + hex(p.getGlobalFlags());
    uint32_t seen = 0;
    bool found = false;
    std::string available;
    for (const RuntimePool& pool : runtimePools(hsa, agent->second)) {
      available += (available.empty() ? "" : ", ") + std::string(segmentName(pool.segment)) + " " + hex(pool.flags);
      if (found || pool.segment != p.getSegment() || pool.flags != p.getGlobalFlags()) continue;
      if (seen++ == p.getOrdinal()) {
        map.pools[p.getPool()] = pool.pool;
        found = true;
      }
    }
    if (!found)
      throw ReplayError(where + ": the capture used pool " + std::to_string(p.getPool()) + ", " + wanted +
                        " number " + std::to_string(p.getOrdinal()) + " (from 0) of agent " +
                        std::to_string(p.getAgent()) + "; its replay agent has " + std::to_string(seen) +
                        " such pool(s) (its pools: " +
                        (available.empty() ? std::string("none") : available) + ")");
  }
  for (size_t i : cpus) {
    for (const RuntimePool& pool : runtimePools(hsa, map.runtime[i].agent))
      if (pool.segment == HSA_AMD_SEGMENT_GLOBAL && (pool.flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT)) {
        map.kernargPool = pool.pool;
        break;
      }
    if (map.kernargPool.handle) break;
  }
  return map;
}

}  // namespace gtap::replay
