// Per-function statistics of API calls over one or more captures.
#pragma once

#include <cstdint>
#include <memory>
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

// The same built a capture at a time, for readers that hold only the captures
// in flight: read() (any thread) gives what a capture adds, merge() takes
// those in the order the captures were given, finish() the summary.
class ApiSummaryBuilder {
 public:
  struct Part;
  ApiSummaryBuilder();
  ~ApiSummaryBuilder();
  static std::shared_ptr<Part> read(const Capture& capture);
  void merge(std::shared_ptr<Part> part);
  ApiSummary finish();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace gtap::readers
