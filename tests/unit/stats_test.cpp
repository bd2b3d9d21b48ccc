// Percentiles from the bounded-memory histogram against exact ones.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "gtap/readers/stats.h"

using gtap::readers::Distribution;
using gtap::readers::distributionOf;
using gtap::readers::DurationHistogram;

namespace {

Distribution both(std::vector<int64_t> values, DurationHistogram& h) {
  for (int64_t v : values) h.add(v);
  return distributionOf(values);
}

}  // namespace

TEST(DurationHistogram, ExactBelow256) {
  std::vector<int64_t> values;
  for (int64_t v = 0; v < 256; ++v)
    for (int64_t k = 0; k <= v % 7; ++k) values.push_back(v);
  DurationHistogram h;
  Distribution exact = both(values, h);
  Distribution d = h.distribution();
  EXPECT_EQ(d.count, exact.count);
  EXPECT_EQ(d.total, exact.total);
  EXPECT_EQ(d.min, exact.min);
  EXPECT_EQ(d.max, exact.max);
  EXPECT_EQ(d.p50, exact.p50);
  EXPECT_EQ(d.p99, exact.p99);
}

TEST(DurationHistogram, PercentilesWithinOneBucketAboveIt) {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> spread(std::log(5000.0), 2.0);  // ns to ms, a long tail
  std::vector<int64_t> values(200000);
  for (auto& v : values) v = static_cast<int64_t>(spread(rng)) + 256;
  DurationHistogram h;
  Distribution exact = both(values, h);
  Distribution d = h.distribution();
  EXPECT_EQ(d.count, exact.count);
  EXPECT_EQ(d.total, exact.total);
  EXPECT_EQ(d.min, exact.min);
  EXPECT_EQ(d.max, exact.max);
  EXPECT_DOUBLE_EQ(d.mean, exact.mean);
  EXPECT_LE(std::abs(d.p50 - exact.p50), exact.p50 / 256 + 1) << d.p50 << " vs " << exact.p50;
  EXPECT_LE(std::abs(d.p99 - exact.p99), exact.p99 / 256 + 1) << d.p99 << " vs " << exact.p99;
}

TEST(DurationHistogram, BucketsTileTheRange) {
  // Every value falls in the bucket whose bounds hold it, and buckets follow
  // each other with no gap, up to the largest durations.
  for (size_t i = 0; i + 1 < DurationHistogram::indexOf(uint64_t{1} << 62); ++i)
    ASSERT_EQ(DurationHistogram::highest(i) + 1, DurationHistogram::lowest(i + 1)) << i;
  for (uint64_t v : {uint64_t{0}, uint64_t{255}, uint64_t{256}, uint64_t{511}, uint64_t{512}, uint64_t{123456789},
                     uint64_t{1} << 62}) {
    size_t i = DurationHistogram::indexOf(v);
    EXPECT_LE(DurationHistogram::lowest(i), v);
    EXPECT_GE(DurationHistogram::highest(i), v);
  }
}

TEST(DurationHistogram, MergeEqualsOneStream) {
  std::vector<int64_t> a{5, 900, 77777, 3}, b{12, 1 << 20, 44};
  DurationHistogram ha, hb, all;
  for (int64_t v : a) ha.add(v), all.add(v);
  for (int64_t v : b) hb.add(v), all.add(v);
  ha.merge(hb);
  Distribution m = ha.distribution(), one = all.distribution();
  EXPECT_EQ(m.count, one.count);
  EXPECT_EQ(m.total, one.total);
  EXPECT_EQ(m.min, one.min);
  EXPECT_EQ(m.max, one.max);
  EXPECT_EQ(m.p50, one.p50);
  EXPECT_EQ(m.p99, one.p99);
}

TEST(Spread, MedianOfAnOddCountIsTheMiddleOne) {
  auto s = gtap::readers::spreadOf({30, 10, 50, 20, 40});
  EXPECT_EQ(s.min, 10);
  EXPECT_EQ(s.median, 30);
  EXPECT_EQ(s.max, 50);
}

TEST(Spread, MedianOfAnEvenCountIsTheMeanOfTheMiddleTwo) {
  auto s = gtap::readers::spreadOf({40, 10, 20, 100});
  EXPECT_EQ(s.min, 10);
  EXPECT_EQ(s.median, 30);
  EXPECT_EQ(s.max, 100);
}

TEST(Spread, NothingMeasuredIsAllZero) {
  auto s = gtap::readers::spreadOf({});
  EXPECT_EQ(s.min, 0);
  EXPECT_EQ(s.median, 0);
  EXPECT_EQ(s.max, 0);
}
