// Count, total, mean, extremes and percentiles of a set of durations.
#pragma once

#include <cstddef>
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

// Exact (nearest-rank percentiles): reorders `values` in place.
Distribution distributionOf(std::vector<int64_t>& values);

// The least, the median and the greatest of a few measurements (all 0 when
// there are none); the median of an even count is the mean of the middle two.
struct Spread {
  int64_t min = 0, median = 0, max = 0;
};
Spread spreadOf(std::vector<int64_t> values);

// The same figures in bounded memory, for streams too long to keep (API calls).
// Count, total, mean, min and max are exact. Percentiles come from a
// log-linear histogram: each power of two from 256 up is split into 128 equal
// buckets, and a percentile is reported as the middle of its bucket (kept
// within min and max). So they are exact below 256 ns and within 1/256 of the
// true value above. Negative values count as 0.
class DurationHistogram {
 public:
  void add(int64_t v) {
    uint64_t u = v > 0 ? static_cast<uint64_t>(v) : 0;
    size_t i = indexOf(u);
    if (i >= counts_.size()) counts_.resize(i + 1);
    ++counts_[i];
    if (count_ == 0 || static_cast<int64_t>(u) < min_) min_ = static_cast<int64_t>(u);
    if (count_ == 0 || static_cast<int64_t>(u) > max_) max_ = static_cast<int64_t>(u);
    ++count_;
    total_ += static_cast<int64_t>(u);
  }
  void merge(const DurationHistogram& other);
  uint64_t count() const { return count_; }
  Distribution distribution() const;

  static constexpr uint64_t kExactBelow = 256;
  static size_t indexOf(uint64_t v) {
    if (v < kExactBelow) return static_cast<size_t>(v);
    int shift = 63 - __builtin_clzll(v) - 7;  // >= 1: v >> shift is in [128, 255]
    return kExactBelow + static_cast<size_t>(shift - 1) * 128 + static_cast<size_t>((v >> shift) - 128);
  }
  // The smallest and largest value a bucket holds.
  static uint64_t lowest(size_t index);
  static uint64_t highest(size_t index);

 private:
  std::vector<uint64_t> counts_;
  uint64_t count_ = 0;
  int64_t total_ = 0, min_ = 0, max_ = 0;
};

}  // namespace gtap::readers
