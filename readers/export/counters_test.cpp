// Counter reports on captures written by the format's writer: per-kernel and
// per-dispatch values, derived metrics, notes, device-metric summaries, the
// roofline and what a damaged file is said to hold.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "counter_capture_builder.h"
#include "gtap/readers/capture.h"
#include "gtap/readers/counter_stats.h"

namespace {

using gtap::readers::Capture;
using gtap::readers::counterReport;
using gtap::readers::CounterReport;
using gtap::test::CounterCaptureBuilder;
namespace schema = gtap::schema;

std::string tempPath(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("gtap-counters-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

CounterReport reportOf(const std::vector<std::string>& paths, bool perDispatch = false) {
  std::vector<std::unique_ptr<Capture>> owned;
  std::vector<const Capture*> captures;
  for (const auto& p : paths) {
    owned.push_back(std::make_unique<Capture>(p));
    captures.push_back(owned.back().get());
  }
  return counterReport(captures, perDispatch);
}

uint32_t columnOf(const CounterReport& r, const std::string& name) {
  for (uint32_t i = 0; i < r.columns.size(); ++i)
    if (r.columns[i].name == name) return i;
  ADD_FAILURE() << "no column " << name;
  return 0;
}

const gtap::readers::KernelCounters& kernelOf(const CounterReport& r, const std::string& name) {
  for (const auto& k : r.kernels)
    if (k.kernel == name) return k;
  throw std::runtime_error("no kernel " + name);
}

// An HSA-like capture: GRBM_COUNT, GRBM_GUI_ACTIVE and SQ_WAVES per dispatch.
CounterCaptureBuilder hsaCapture() {
  CounterCaptureBuilder b;
  b.api = schema::Api::HSA;
  b.requested = "GRBM_COUNT,GRBM_GUI_ACTIVE,SQ_WAVES,TCP_TOTAL_CACHE_ACCESSES";
  b.sets.push_back({1, "hsaAqlProfile", "", {{"GRBM_COUNT", "cycles"}, {"GRBM_GUI_ACTIVE", "cycles"}, {"SQ_WAVES", ""}}});
  b.notes.push_back({"TCP_TOTAL_CACHE_ACCESSES", "needs another pass (2 of 2)", 1});
  // 1 GHz device clock: 1000 ns is 1000 ticks.
  b.kernel("scale", 10000, 11000, 1, {2000, 1000, 8}, {4, 1, 1});
  b.kernel("scale", 20000, 23000, 1, {4000, 3000, 24}, {12, 1, 1});
  b.kernel("copy", 30000, 30500, 0);  // not measured
  b.kernel("add", 40000, 42000, 1, {2000, 2000, 2}, {1, 1, 1});
  return b;
}

TEST(CounterReport, PerKernelTotalsMeansExtremesAndDerivedMetrics) {
  auto path = tempPath("hsa.gtap");
  ASSERT_EQ(hsaCapture().write(path), "");
  auto r = reportOf({path});
  EXPECT_TRUE(r.problems.empty()) << r.problems.front();
  EXPECT_EQ(r.measured, 3u);
  ASSERT_EQ(r.kernels.size(), 2u);  // "copy" was not measured
  const auto& scale = kernelOf(r, "scale");
  EXPECT_EQ(scale.dispatches, 2u);
  EXPECT_EQ(scale.deviceNs, 4000);
  const auto& waves = scale.values[columnOf(r, "SQ_WAVES")];
  EXPECT_EQ(waves.count, 2u);
  EXPECT_DOUBLE_EQ(waves.total, 32);
  EXPECT_DOUBLE_EQ(waves.mean(), 16);
  EXPECT_DOUBLE_EQ(waves.min, 8);
  EXPECT_DOUBLE_EQ(waves.max, 24);
  // Busy share: (1000 + 3000) / (2000 + 4000); waves per group 32 / 16;
  // frequency: GRBM_COUNT 6000 ticks over 4000 ns of device time.
  EXPECT_DOUBLE_EQ(*scale.derived.busyShare(), 4000.0 / 6000.0);
  EXPECT_DOUBLE_EQ(*scale.derived.wavesPerGroup(), 2.0);
  EXPECT_DOUBLE_EQ(*scale.derived.frequencyHz(), 6000.0 / 4000.0 * 1e9);
  const auto& add = kernelOf(r, "add");
  EXPECT_DOUBLE_EQ(*add.derived.busyShare(), 1.0);
  EXPECT_DOUBLE_EQ(*add.derived.wavesPerGroup(), 2.0);
  // What was asked for and not collected.
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_EQ(r.notes[0].note.counter, "TCP_TOTAL_CACHE_ACCESSES");
  EXPECT_EQ(r.notes[0].note.reason, "needs another pass (2 of 2)");
  EXPECT_EQ(r.requested.at(0), "GRBM_COUNT,GRBM_GUI_ACTIVE,SQ_WAVES,TCP_TOTAL_CACHE_ACCESSES");
}

TEST(CounterReport, PerDispatchRowsInFileOrder) {
  auto path = tempPath("hsa-dispatch.gtap");
  ASSERT_EQ(hsaCapture().write(path), "");
  auto r = reportOf({path}, true);
  ASSERT_EQ(r.dispatches.size(), 3u);
  EXPECT_EQ(r.dispatches[0].kernel, "scale");
  EXPECT_EQ(r.dispatches[0].index, 0u);
  EXPECT_EQ(r.dispatches[1].index, 1u);
  EXPECT_EQ(r.dispatches[2].kernel, "add");
  EXPECT_EQ(r.dispatches[2].index, 3u);  // the unmeasured copy was operation 2
  EXPECT_EQ(r.dispatches[1].durationNs, 3000);
  EXPECT_EQ(r.dispatches[1].workGroups, 12u);
  EXPECT_DOUBLE_EQ(*r.dispatches[1].value(columnOf(r, "GRBM_GUI_ACTIVE")), 3000);
  EXPECT_DOUBLE_EQ(*r.dispatches[1].derived.busyShare(), 0.75);
  EXPECT_EQ(r.deviceName(0, r.dispatches[0].device), "counting GPU");
}

TEST(CounterReport, LevelZeroNamesGiveBusyShareAndFrequency) {
  CounterCaptureBuilder b;
  b.sets.push_back({7, "levelZeroMetricQuery", "ComputeBasic",
                    {{"GpuTime", "ns"}, {"GpuCoreClocks", "cycles"}, {"GpuBusyTime", "ns"},
                     {"AvgGpuCoreFrequencyMHz", "MHz", schema::CounterType::REAL}}});
  b.kernel("k", 1000, 3000, 7, {2000, 38, 1500, 19.2});
  auto path = tempPath("ze.gtap");
  ASSERT_EQ(b.write(path), "");
  auto r = reportOf({path});
  ASSERT_EQ(r.kernels.size(), 1u);
  EXPECT_DOUBLE_EQ(*r.kernels[0].derived.busyShare(), 0.75);
  EXPECT_DOUBLE_EQ(*r.kernels[0].derived.frequencyHz(), 38.0 / 2000.0 * 1e9);
  EXPECT_FALSE(r.kernels[0].derived.wavesPerGroup());
  // A real-valued counter is read as a double, not as its bits.
  EXPECT_DOUBLE_EQ(r.kernels[0].values[columnOf(r, "AvgGpuCoreFrequencyMHz")].total, 19.2);
}

TEST(CounterReport, DeviceMetricSummariesGaugesAndRates) {
  CounterCaptureBuilder b;
  b.series.push_back({"sysman", 1000000,
                      {{"frequency actual", "MHz", false}, {"engine compute active", "ns", true}},
                      {0, 1000000, 2000000, 4000000},
                      {1000, 0, 1200, 500000, NAN, 800000, 1100, 2000000}});
  auto path = tempPath("metrics.gtap");
  ASSERT_EQ(b.write(path), "");
  auto r = reportOf({path});
  EXPECT_TRUE(r.problems.empty());
  ASSERT_EQ(r.metrics.size(), 2u);
  const auto& freq = r.metrics[0];
  EXPECT_EQ(freq.metric, "frequency actual");
  EXPECT_EQ(freq.samples, 3u);  // one NaN: not read
  EXPECT_DOUBLE_EQ(freq.min, 1000);
  EXPECT_DOUBLE_EQ(freq.max, 1200);
  EXPECT_DOUBLE_EQ(freq.mean, 1100);
  const auto& active = r.metrics[1];
  EXPECT_TRUE(active.cumulative);
  EXPECT_EQ(active.samples, 4u);
  // 2,000,000 ns of activity over 4,000,000 ns: half a second per second.
  EXPECT_DOUBLE_EQ(active.rate, 0.5e9);
  EXPECT_DOUBLE_EQ(active.max, 0.6e9);  // 1.2 ms active in the last 2 ms
  EXPECT_DOUBLE_EQ(active.min, 0.3e9);
}

TEST(CounterReport, RooflineFromFlopAndByteCounters) {
  CounterCaptureBuilder b;
  b.peakFlops = 10e12;
  b.peakBytes = 1e12;
  b.sets.push_back({3, "levelZeroMetricQuery", "Roofline",
                    {{"XVE_FP32_FLOP", "flop"}, {"GpuMemoryBytesRead", "bytes"}, {"GpuMemoryBytesWritten", ""},
                     {"FETCH_SIZE", "KB"}}});
  b.kernel("gemm", 0, 1000, 3, {8e6, 1e5, 1e5, 0});
  b.kernel("gemm", 2000, 3000, 3, {8e6, 1e5, 1e5, 0});
  b.kernel("stream", 4000, 8000, 3, {1e6, 2e6, 1e6, 1000});
  auto path = tempPath("roofline.gtap");
  ASSERT_EQ(b.write(path), "");
  auto r = reportOf({path});
  EXPECT_TRUE(r.columns[columnOf(r, "XVE_FP32_FLOP")].flops);
  EXPECT_TRUE(r.columns[columnOf(r, "GpuMemoryBytesWritten")].bytes);
  EXPECT_DOUBLE_EQ(r.columns[columnOf(r, "FETCH_SIZE")].byteScale, 1024);
  auto points = r.roofline();
  ASSERT_EQ(points.size(), 2u);
  const auto& gemm = points[0];
  EXPECT_EQ(gemm.kernel, "gemm");
  EXPECT_DOUBLE_EQ(gemm.flops, 16e6);
  EXPECT_DOUBLE_EQ(gemm.bytes, 4e5);
  EXPECT_EQ(gemm.timeNs, 2000);
  EXPECT_DOUBLE_EQ(gemm.intensity, 40);
  EXPECT_DOUBLE_EQ(gemm.flopsPerSecond, 16e6 / 2000e-9);
  EXPECT_DOUBLE_EQ(gemm.peakFlopsPerSecond, 10e12);
  EXPECT_DOUBLE_EQ(gemm.attainable, 10e12);  // past the ridge at 10 FLOP/byte
  const auto& stream = points[1];
  double bytes = 3e6 + 1000 * 1024.0;
  EXPECT_DOUBLE_EQ(stream.intensity, 1e6 / bytes);
  EXPECT_DOUBLE_EQ(stream.attainable, 1e6 / bytes * 1e12);
  EXPECT_DOUBLE_EQ(stream.ofAttainable, (1e6 / 4000e-9) / (1e6 / bytes * 1e12));
}

TEST(CounterReport, HostileCountersAreSaidNamingTheFile) {
  CounterCaptureBuilder b;
  b.sets.push_back({1, "hsaAqlProfile", "", {{"SQ_WAVES", ""}, {"GRBM_COUNT", "cycles"}}});
  b.kernel("good", 0, 100, 1, {4, 100});
  b.kernel("noset", 200, 300, 9, {1, 2});
  b.kernel("noset", 400, 500, 9, {1, 2});
  b.kernel("short", 600, 700, 1, {1, 2, 3});
  // Three samples of two metrics need six values.
  b.series.push_back({"sysman", 1000, {{"a", ""}, {"b", ""}}, {0, 1, 2}, {1, 2, 3, 4, 5}});
  auto path = tempPath("hostile.gtap");
  ASSERT_EQ(b.write(path), "");
  auto r = reportOf({path}, true);
  ASSERT_EQ(r.dispatches.size(), 1u);
  EXPECT_EQ(r.dispatches[0].kernel, "good");
  ASSERT_EQ(r.problems.size(), 3u);
  std::string all;
  for (const auto& p : r.problems) {
    EXPECT_NE(p.find(path), std::string::npos) << p;
    all += p + "\n";
  }
  EXPECT_NE(all.find("2 dispatches name counter set 9, which the file does not define"), std::string::npos) << all;
  EXPECT_NE(all.find("1 dispatch of counter set 1 carries 3 values for its 2 counters"), std::string::npos) << all;
  EXPECT_NE(all.find("device metrics hold 5 values for 3 samples of 2 metrics"), std::string::npos) << all;
  EXPECT_TRUE(r.metrics.empty());
}

TEST(CounterReport, CaptureWithoutCounters) {
  CounterCaptureBuilder b;
  b.kernel("plain", 0, 100);
  auto path = tempPath("plain.gtap");
  ASSERT_EQ(b.write(path), "");
  auto r = reportOf({path});
  EXPECT_FALSE(r.anyCounterData);
  EXPECT_EQ(r.measured, 0u);
  EXPECT_TRUE(r.kernels.empty());
  EXPECT_TRUE(r.roofline().empty());
}

}  // namespace
