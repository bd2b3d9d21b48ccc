// Count, total, mean, extremes and percentiles of a set of durations.
#pragma once

#include <cstdint>
#include <vector>

namespace gtap::readers {

struct Distribution {
  uint64_t count = 0;
  int64_t total = 0;
  int64_t min = 0;
  int64_t max = 0;
  int64_t p50 = 0;
  int64_t p99 = 0;
  double mean = 0;
};

// Sorts `values` in place.
Distribution distributionOf(std::vector<int64_t>& values);

}  // namespace gtap::readers
