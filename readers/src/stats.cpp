#include "gtap/readers/stats.h"

#include <algorithm>

namespace gtap::readers {

namespace {
// The nearest rank (from 1) of percentile p among n values.
size_t rankOf(double p, size_t n) {
  size_t rank = static_cast<size_t>(p / 100.0 * static_cast<double>(n) + 0.999999);
  return std::clamp<size_t>(rank, 1, n);
}
}  // namespace

Distribution distributionOf(std::vector<int64_t>& values) {
  Distribution d;
  d.count = values.size();
  if (values.empty()) return d;
  d.min = d.max = values.front();
  for (int64_t v : values) {
    d.total += v;
    d.min = std::min(d.min, v);
    d.max = std::max(d.max, v);
  }
  d.mean = static_cast<double>(d.total) / static_cast<double>(d.count);
  // Selection, not a sort: the 99th percentile's place, then the median's
  // among the values not above it.
  auto at99 = values.begin() + static_cast<std::ptrdiff_t>(rankOf(99, values.size()) - 1);
  std::nth_element(values.begin(), at99, values.end());
  d.p99 = *at99;
  auto at50 = values.begin() + static_cast<std::ptrdiff_t>(rankOf(50, values.size()) - 1);
  std::nth_element(values.begin(), at50, at99);
  d.p50 = at50 == at99 ? d.p99 : *at50;
  return d;
}

uint64_t DurationHistogram::lowest(size_t index) {
  if (index < kExactBelow) return index;
  size_t shift = (index - kExactBelow) / 128 + 1;
  return (uint64_t{128} + (index - kExactBelow) % 128) << shift;
}

uint64_t DurationHistogram::highest(size_t index) {
  if (index < kExactBelow) return index;
  size_t shift = (index - kExactBelow) / 128 + 1;
  return lowest(index) + (uint64_t{1} << shift) - 1;
}

void DurationHistogram::merge(const DurationHistogram& other) {
  if (other.count_ == 0) return;
  if (other.counts_.size() > counts_.size()) counts_.resize(other.counts_.size());
  for (size_t i = 0; i < other.counts_.size(); ++i) counts_[i] += other.counts_[i];
  min_ = count_ == 0 ? other.min_ : std::min(min_, other.min_);
  max_ = count_ == 0 ? other.max_ : std::max(max_, other.max_);
  count_ += other.count_;
  total_ += other.total_;
}

Distribution DurationHistogram::distribution() const {
  Distribution d;
  d.count = count_;
  if (count_ == 0) return d;
  d.total = total_;
  d.min = min_;
  d.max = max_;
  d.mean = static_cast<double>(total_) / static_cast<double>(count_);
  auto at = [&](double p) {
    uint64_t rank = static_cast<uint64_t>(p / 100.0 * static_cast<double>(count_) + 0.999999);
    rank = std::clamp<uint64_t>(rank, 1, count_);
    uint64_t seen = 0;
    for (size_t i = 0; i < counts_.size(); ++i) {
      seen += counts_[i];
      if (seen >= rank) {
        uint64_t lo = lowest(i), hi = highest(i);
        int64_t mid = static_cast<int64_t>(lo + (hi - lo) / 2);
        return std::clamp(mid, min_, max_);
      }
    }
    return max_;
  };
  d.p50 = at(50);
  d.p99 = at(99);
  return d;
}

Spread spreadOf(std::vector<int64_t> values) {
  Spread s;
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  s.min = values.front();
  s.max = values.back();
  s.median = n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
  return s;
}

}  // namespace gtap::readers
