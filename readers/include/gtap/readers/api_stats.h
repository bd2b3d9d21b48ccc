// Per-function statistics of API calls over one or more captures.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gtap/readers/capture.h"

namespace gtap::readers {

struct FunctionStats {
  std::string name;
  std::string api;
  uint64_t count = 0;       // finished calls
  uint64_t unfinished = 0;  // begun, never ended (the process died in them)
  uint64_t failed = 0;      // returned an error (isErrorResult)
  int64_t totalNs = 0;
  int64_t minNs = 0;
  int64_t maxNs = 0;
  int64_t p50Ns = 0;
  int64_t p99Ns = 0;
  double meanNs = 0;
};

struct ApiSummary {
  std::vector<FunctionStats> functions;  // by total time, largest first
  uint64_t events = 0;
  uint64_t calls = 0;
};

ApiSummary summarizeApi(const std::vector<const Capture*>& captures);

}  // namespace gtap::readers
