// gtap bench runs in two processes: the command (bench_command.cpp) starts
// itself again as a worker under libgtap.so in kernels mode
// (bench_worker.cpp), which replays and times; the command then reads the
// worker's timings and profile and reports.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "replay_options.h"

namespace gtap::cli {

struct BenchOptions {
  ReplaySourceOptions source;
  int iterations = 10;
  std::string scope;
  std::string profile;
  std::string format = "text";
  std::string counters;      // --counters: collected while replaying, one replay per pass
  std::string workerResult;  // set in the worker: where it writes its timings
};

// What the worker measured: per iteration, the timed time, and every timed
// window (CLOCK_MONOTONIC ns) so that device work can be matched to them.
struct BenchTimings {
  std::vector<int64_t> iterationNs;
  std::vector<std::pair<int64_t, int64_t>> windows;
};

int runBenchWorker(const BenchOptions& o);
bool writeBenchTimings(const std::string& path, const BenchTimings& t, std::string& error);
bool readBenchTimings(const std::string& path, BenchTimings& t, std::string& error);

}  // namespace gtap::cli
