// What the counter tests of every runtime share: a workload run under
// `gtap run --sim` with counter options, and what its capture says about
// each measured dispatch.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "gtap/readers/counters.h"
#include "gtap/readers/device_work.h"
#include "process.h"

namespace gtap::test {

struct CounterRun {
  ProcessResult result;
  std::string file;
};

// `gtap run --sim -o DIR/cap.gtap OPTIONS -- WORKLOAD ARGS` in a fresh
// directory named after `prefix`, the workload and a count of runs.
inline CounterRun captureWithCounters(const std::string& prefix, const std::string& name,
                                      const std::vector<std::string>& options,
                                      const std::vector<std::string>& args = {}, const EnvChanges& env = {}) {
  static int runs = 0;
  std::string dir = freshDirectory(prefix + name + "-" + std::to_string(runs++));
  std::vector<std::string> argv = {gtapBinary(), "run", "--sim", "-o", dir + "/cap.gtap"};
  argv.insert(argv.end(), options.begin(), options.end());
  argv.push_back("--");
  argv.push_back(workload(name));
  argv.insert(argv.end(), args.begin(), args.end());
  return {runProcess(argv, env), dir + "/cap.gtap"};
}

// A measured op's values by counter name.
inline std::map<std::string, uint64_t> valuesOf(const readers::CapturedCounters& counters,
                                                const readers::DeviceOp& op) {
  std::map<std::string, uint64_t> out;
  auto set = counters.sets.find(op.counterSet);
  if (set == counters.sets.end()) return out;
  for (size_t i = 0; i < set->second.counters.size() && i < op.counterValues.size(); ++i)
    out[set->second.counters[i].name] = op.counterValues[i];
  return out;
}

// The reasons the capture gives for a counter it did not collect.
inline std::vector<std::string> notesFor(const readers::CapturedCounters& counters, const std::string& counter) {
  std::vector<std::string> out;
  for (const auto& n : counters.notes)
    if (n.counter == counter) out.push_back(n.reason);
  return out;
}

inline std::string property(const readers::Object& o, const std::string& key) {
  for (const auto& [k, v] : o.properties)
    if (k == key) return v;
  return {};
}

}  // namespace gtap::test
