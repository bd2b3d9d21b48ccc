// The counters HSA agents offer through the AQL profile extension
// (offered_counters.h): the counters gtap knows by name (aql_counters.h) whose
// event the agent's validate_event accepts, with how many of its block one
// pass can count (get_info BLOCK_COUNTERS).
#include <dlfcn.h>
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <hsa/hsa_ven_amd_aqlprofile.h>

#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "gtap/format/aql_counters.h"
#include "install_paths.h"
#include "offered_counters.h"

namespace gtap::cli {

namespace {

#define GTAP_COUNTERS_HSA(X) X(hsa_init) X(hsa_iterate_agents) X(hsa_agent_get_info) X(hsa_system_get_major_extension_table)

struct HsaCounterFunctions {
#define GTAP_COUNTERS_DECLARE(name) decltype(&::name) name = nullptr;
  GTAP_COUNTERS_HSA(GTAP_COUNTERS_DECLARE)
#undef GTAP_COUNTERS_DECLARE
};

// The runtime the program would get: gtap's simulated one when --sim put its
// folder first on LD_LIBRARY_PATH (read only when a process starts, so it is
// opened here by its absolute path), ROCr otherwise. Never linked.
std::string runtimePath() {
  std::string sim = (gtapLibraryDirectory() / "sim" / "hsa").string();
  const char* path = std::getenv("LD_LIBRARY_PATH");
  std::string first = path ? std::string(path).substr(0, std::string(path).find(':')) : "";
  if (first == sim) return sim + "/libhsa-runtime64.so.1";
  return "libhsa-runtime64.so.1";
}

HsaCounterFunctions loadRuntime(std::string& error) {
  HsaCounterFunctions f;
  std::string path = runtimePath();
  void* runtime = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!runtime) {
    error = "cannot open the HSA runtime " + path + ": " + dlerror();
    return f;
  }
#define GTAP_COUNTERS_LOOKUP(name)                                   \
  f.name = reinterpret_cast<decltype(f.name)>(dlsym(runtime, #name)); \
  if (!f.name && error.empty()) error = "the HSA runtime " + path + " has no " #name;
  GTAP_COUNTERS_HSA(GTAP_COUNTERS_LOOKUP)
#undef GTAP_COUNTERS_LOOKUP
  return f;
}

std::string agentName(const HsaCounterFunctions& hsa, hsa_agent_t agent) {
  char name[64] = {};
  if (hsa.hsa_agent_get_info(agent, HSA_AGENT_INFO_NAME, name) != HSA_STATUS_SUCCESS) return {};
  name[sizeof name - 1] = '\0';
  return name;
}

}  // namespace

std::vector<OfferedDevice> offeredHsaCounters(std::string& note) {
  std::vector<OfferedDevice> out;
  std::string error;
  HsaCounterFunctions hsa = loadRuntime(error);
  if (!error.empty()) {
    note = error;
    return out;
  }
  hsa_status_t r = hsa.hsa_init();
  if (r != HSA_STATUS_SUCCESS) {
    std::ostringstream s;
    s << "the HSA runtime " << runtimePath() << " would not start (hsa_init returned 0x" << std::hex
      << static_cast<uint32_t>(r) << ")";
    note = s.str();
    return out;
  }
  // The runtime stays open: shutting it down here would gain nothing, and a
  // real runtime's shut-down may take a while.
  std::vector<hsa_agent_t> gpus;
  std::pair<HsaCounterFunctions*, std::vector<hsa_agent_t>*> ctx{&hsa, &gpus};
  hsa.hsa_iterate_agents(
      [](hsa_agent_t a, void* v) {
        auto* f = static_cast<std::pair<HsaCounterFunctions*, std::vector<hsa_agent_t>*>*>(v);
        hsa_device_type_t type{};
        if (f->first->hsa_agent_get_info(a, HSA_AGENT_INFO_DEVICE, &type) == HSA_STATUS_SUCCESS &&
            type == HSA_DEVICE_TYPE_GPU)
          f->second->push_back(a);
        return HSA_STATUS_SUCCESS;
      },
      &ctx);
  if (gpus.empty()) {
    note = "no HSA GPU agent";
    return out;
  }
  hsa_ven_amd_aqlprofile_1_00_pfn_t aql{};
  if (hsa.hsa_system_get_major_extension_table(HSA_EXTENSION_AMD_AQLPROFILE, 1, sizeof aql, &aql) !=
          HSA_STATUS_SUCCESS ||
      !aql.hsa_ven_amd_aqlprofile_validate_event || !aql.hsa_ven_amd_aqlprofile_get_info) {
    note = "the HSA runtime has no AQL profile extension (HSA_EXTENSION_AMD_AQLPROFILE)";
    for (uint32_t i = 0; i < gpus.size(); ++i) {
      OfferedDevice& dev = out.emplace_back();
      dev.runtime = "hsa";
      dev.index = i;
      dev.label = std::to_string(i) + " " + agentName(hsa, gpus[i]);
    }
    return out;
  }
  for (uint32_t i = 0; i < gpus.size(); ++i) {
    OfferedDevice& dev = out.emplace_back();
    dev.runtime = "hsa";
    dev.index = i;
    dev.label = std::to_string(i) + " " + agentName(hsa, gpus[i]);
    std::map<uint32_t, uint32_t> perPass;  // by block
    for (const format::AqlCounter& c : format::kAqlCounters) {
      hsa_ven_amd_aqlprofile_event_t event{static_cast<hsa_ven_amd_aqlprofile_block_name_t>(c.block), 0, c.eventId};
      bool valid = false;
      if (aql.hsa_ven_amd_aqlprofile_validate_event(gpus[i], &event, &valid) != HSA_STATUS_SUCCESS || !valid)
        continue;
      auto known = perPass.find(c.block);
      if (known == perPass.end()) {
        hsa_ven_amd_aqlprofile_profile_t profile{};
        profile.agent = gpus[i];
        profile.type = HSA_VEN_AMD_AQLPROFILE_EVENT_TYPE_PMC;
        profile.events = &event;
        profile.event_count = 1;
        uint32_t counters = 0;
        if (aql.hsa_ven_amd_aqlprofile_get_info(&profile, HSA_VEN_AMD_AQLPROFILE_INFO_BLOCK_COUNTERS, &counters) !=
            HSA_STATUS_SUCCESS)
          counters = 1;  // one at a time is always possible
        known = perPass.emplace(c.block, counters).first;
      }
      OfferedDevice::Counter counter;
      counter.offer.group = std::string(format::aqlBlockName(c.block));
      counter.offer.name = c.name;
      counter.offer.exclusive = false;
      counter.offer.perPass = known->second;
      counter.sampling = "per-dispatch";
      counter.domain = "block " + std::to_string(c.block) + ", " + std::to_string(known->second) + " per pass";
      counter.type = "event";
      counter.units = "count";
      counter.description = c.description;
      dev.counters.push_back(std::move(counter));
    }
  }
  return out;
}

}  // namespace gtap::cli
