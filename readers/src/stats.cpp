#include "gtap/readers/stats.h"

#include <algorithm>

namespace gtap::readers {

namespace {
// Nearest-rank percentile of sorted values.
int64_t percentile(const std::vector<int64_t>& sorted, double p) {
  size_t rank = static_cast<size_t>(p / 100.0 * static_cast<double>(sorted.size()) + 0.999999);
  rank = std::clamp<size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}
}  // namespace

Distribution distributionOf(std::vector<int64_t>& values) {
  Distribution d;
  d.count = values.size();
  if (values.empty()) return d;
  std::sort(values.begin(), values.end());
  for (int64_t v : values) d.total += v;
  d.min = values.front();
  d.max = values.back();
  d.mean = static_cast<double>(d.total) / static_cast<double>(d.count);
  d.p50 = percentile(values, 50);
  d.p99 = percentile(values, 99);
  return d;
}

}  // namespace gtap::readers
