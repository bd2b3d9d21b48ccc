// What the replay tests of every runtime share: a workload captured with
// `gtap run --sim`, gtap's verbs run as processes, and what their output says.
#pragma once

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <regex>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "process.h"

namespace gtap::test {

struct Captured {
  ProcessResult run;
  std::string file;
};

// `gtap run --sim -q -m MODE [OPTIONS] -o DIR/cap.gtap -- WORKLOAD ARGS`, in a
// fresh directory named after `prefix`, the workload, the mode and `tag`.
inline Captured captureWorkload(const std::string& prefix, const std::string& name,
                                const std::vector<std::string>& args, const std::string& mode,
                                const std::vector<std::string>& options, const std::string& tag) {
  std::string dir = freshDirectory(prefix + name + "-" + mode + tag);
  std::vector<std::string> argv = {gtapBinary(), "run", "--sim", "-q", "-m", mode, "-o", dir + "/cap.gtap"};
  argv.insert(argv.end(), options.begin(), options.end());
  argv.push_back("--");
  argv.push_back(workload(name));
  argv.insert(argv.end(), args.begin(), args.end());
  return {runProcess(argv), dir + "/cap.gtap"};
}

inline ProcessResult gtap(std::vector<std::string> args) {
  args.insert(args.begin(), gtapBinary());
  return runProcess(args);
}

inline size_t countLines(const std::string& out, const std::string& prefix) {
  size_t n = 0;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(prefix, 0) == 0) ++n;
  return n;
}

// "verified N read-backs, M mismatched" -> {N, M}; {-1, -1} when absent.
inline std::pair<long, long> verified(const std::string& text) {
  std::smatch m;
  static const std::regex re("verified ([0-9]+) read-backs, ([0-9]+) mismatched");
  if (!std::regex_search(text, m, re)) return {-1, -1};
  return {std::stol(m[1]), std::stol(m[2])};
}

inline long launchesReplayed(const std::string& text) {
  std::smatch m;
  static const std::regex re("([0-9]+) kernel launches");
  return std::regex_search(text, m, re) ? std::stol(m[1]) : -1;
}

// The records of `gtap dump --format=jsonl FILE`.
inline std::vector<nlohmann::json> dumpRecords(const std::string& file) {
  auto r = gtap({"dump", "--format=jsonl", file});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  std::vector<nlohmann::json> records;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line);
    if (j["type"] == "record") records.push_back(j);
  }
  return records;
}

// Parameters of the workload-by-mode replay tests, and their names:
// "WORKLOAD_replay_only" or "WORKLOAD_with_profiling".
using WorkloadMode = std::tuple<std::string, std::string>;
inline std::string workloadModeName(const ::testing::TestParamInfo<WorkloadMode>& info) {
  std::string mode = std::get<1>(info.param) == "replay" ? "replay_only" : "with_profiling";
  return std::get<0>(info.param) + "_" + mode;
}
inline auto replayModes() { return ::testing::Values("replay", "api,kernels,memory,replay"); }

}  // namespace gtap::test
