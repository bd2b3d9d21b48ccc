// What GTAP_COUNTERS / --counters asks for, and how it splits into passes.
// Shared by the launcher (to refuse a counter no device offers before the
// program starts, and to list passes), libgtap.so (to collect one pass) and
// `gtap bench --counters` (to replay once per pass).
//
// A device offers counters in groups: a Level Zero metric group (one group
// is active per pass, so each group is its own pass), an HSA hardware block
// (any blocks together, each with as many counters per pass as it has
// counter registers). A request names counters as the runtime spells them,
// or whole groups; each resolves to (group, counter) pairs, which are put in
// the first pass that can take them, in the order asked.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gtap::format {

// One counter a device offers.
struct OfferedCounter {
  std::string group;    // Level Zero metric group, HSA block
  std::string name;     // as the runtime spells it
  // Level Zero: a group is collected alone (one group per pass). HSA: blocks
  // share a pass, each taking at most `perPass` of its counters (0: no limit).
  bool exclusive = false;
  uint32_t perPass = 0;
};

struct PlannedCounter {
  std::string group, name;
  uint32_t offered = 0;  // index into the offering
};

struct CounterPlan {
  std::vector<std::vector<PlannedCounter>> passes;
  std::vector<std::string> unknown;  // names asked for that the device does not offer
  // The names, each once, as the user gave them ("GpuTime,ComputeBasic").
  std::vector<std::string> requested;
};

// Splits "A,B C" (commas or spaces) into names; empty names are dropped.
inline std::vector<std::string> splitCounterList(std::string_view text) {
  std::vector<std::string> out;
  std::string cur;
  auto flush = [&] {
    if (!cur.empty()) {
      bool seen = false;
      for (const auto& n : out) seen |= n == cur;
      if (!seen) out.push_back(cur);
    }
    cur.clear();
  };
  for (char c : text) {
    if (c == ',' || c == ' ' || c == '\t' || c == '\n') flush();
    else cur += c;
  }
  flush();
  return out;
}

// Plans the passes for `request` on a device offering `offered`. A name that
// is a group's takes the whole group (every counter of it); a counter's name
// takes that counter, from the group already planned when several offer it,
// else from the first that does.
inline CounterPlan planCounters(std::string_view request, const std::vector<OfferedCounter>& offered) {
  CounterPlan plan;
  plan.requested = splitCounterList(request);
  std::vector<PlannedCounter> wanted;
  auto add = [&](uint32_t i) {
    for (const auto& w : wanted)
      if (w.group == offered[i].group && w.name == offered[i].name) return;
    wanted.push_back({offered[i].group, offered[i].name, i});
  };
  for (const auto& name : plan.requested) {
    bool found = false;
    for (uint32_t i = 0; i < offered.size(); ++i)
      if (offered[i].group == name) {
        add(i);
        found = true;
      }
    if (found) continue;
    int64_t pick = -1;
    for (uint32_t i = 0; i < offered.size() && pick < 0; ++i) {
      if (offered[i].name != name) continue;
      for (const auto& w : wanted)
        if (w.group == offered[i].group) pick = i;
    }
    for (uint32_t i = 0; i < offered.size() && pick < 0; ++i)
      if (offered[i].name == name) pick = i;
    if (pick < 0) {
      plan.unknown.push_back(name);
      continue;
    }
    add(static_cast<uint32_t>(pick));
  }
  for (const auto& w : wanted) {
    const OfferedCounter& o = offered[w.offered];
    bool placed = false;
    for (auto& pass : plan.passes) {
      uint32_t sameGroup = 0;
      bool otherExclusive = false;
      for (const auto& p : pass) {
        if (p.group == w.group) ++sameGroup;
        else if (o.exclusive || offered[p.offered].exclusive) otherExclusive = true;
      }
      if (otherExclusive || (o.perPass && sameGroup >= o.perPass)) continue;
      pass.push_back(w);
      placed = true;
      break;
    }
    if (!placed) plan.passes.push_back({w});
  }
  return plan;
}

}  // namespace gtap::format
