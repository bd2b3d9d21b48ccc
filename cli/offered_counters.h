// The counters the devices offer, through each runtime's own interface:
// Level Zero's metric groups (tools API), HSA's AQL profile extension. Used by
// `gtap counters --list` and by `gtap run --counters` to refuse, before the
// program starts, a counter no device offers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gtap/format/counter_request.h"

namespace gtap::cli {

struct OfferedDevice {
  std::string runtime;  // "level-zero", "hsa"
  uint32_t index = 0;   // in the runtime's order (GTAP_DEVICE_FILTER)
  std::string label;    // what --list shows: "0.0 Simulated GPU"
  struct Counter {
    format::OfferedCounter offer;  // group, name, how groups share a pass
    std::string sampling;          // "per-dispatch", "time", ...
    std::string domain;            // Level Zero: the group's domain; HSA: the block's id
    std::string type, units, description;
    bool perDispatch = true;  // can be read around one dispatch (else sampled over time only)
  };
  std::vector<Counter> counters;
  std::vector<format::OfferedCounter> offers() const {
    std::vector<format::OfferedCounter> out;
    for (const auto& c : counters)
      if (c.perDispatch) out.push_back(c.offer);
    return out;
  }
};

// The runtime's devices and what they offer; nothing (and `note` set) when the
// runtime cannot be opened or has no devices. Both open the real runtime
// unless the simulated one was chosen first (useSimulatedZeDriver,
// useSimulatedHsaRuntime).
std::vector<OfferedDevice> offeredLevelZeroCounters(std::string& note);
std::vector<OfferedDevice> offeredHsaCounters(std::string& note);

}  // namespace gtap::cli
