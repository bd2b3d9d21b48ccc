// Counter reports on captures written by the format's writer: per-kernel and
// per-dispatch values, derived metrics, notes, device-metric summaries, the
// roofline and what a damaged file is said to hold; the exports' counter
// tracks, slice arguments, lines and tables.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sqlite3.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "counter_capture_builder.h"
#include "gtap/readers/capture.h"
#include "gtap/readers/counter_stats.h"
#include "gtap/readers/counters.h"
#include "gtap/readers/record_export.h"
#include "gtap/readers/timeline_builder.h"
#include "perfetto_trace.pb.h"

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

// A sampler writes each flush's samples as a chunk of their own: the chunks
// of one device and metric list read back as one series, in file order, so
// a rate spans the flushes.
TEST(CounterReport, DeviceMetricChunksOfOneDeviceAreOneSeries) {
  CounterCaptureBuilder b;
  std::vector<CounterCaptureBuilder::Metric> metrics = {{"engine compute active", "ns", true}};
  b.series.push_back({"sysman", 1000000, metrics, {0, 1000000}, {0, 250000}});
  b.series.push_back({"sysman", 1000000, metrics, {2000000, 4000000}, {500000, 2000000}});
  auto path = tempPath("metrics-chunks.gtap");
  ASSERT_EQ(b.write(path), "");
  gtap::readers::Capture capture(path);
  auto counters = gtap::readers::loadCounters(capture);
  ASSERT_EQ(counters.metrics.size(), 1u);
  EXPECT_EQ(counters.metrics[0].times, (std::vector<int64_t>{0, 1000000, 2000000, 4000000}));
  EXPECT_EQ(counters.metrics[0].values, (std::vector<double>{0, 250000, 500000, 2000000}));
  auto r = reportOf({path});
  ASSERT_EQ(r.metrics.size(), 1u);
  EXPECT_EQ(r.metrics[0].samples, 4u);
  EXPECT_DOUBLE_EQ(r.metrics[0].rate, 0.5e9);
}

TEST(CounterReport, RooflineFromFlopAndByteCounters) {
  CounterCaptureBuilder b;
  b.peakFlops = 10e12;
  b.peakBytes = 1e12;
  b.sets.push_back({3, "levelZeroMetricQuery", "Roofline",
                    {{"XVE_FP32_FLOP", "flop"}, {"GPU_MEMORY_BYTE_READ", "bytes"}, {"GPU_MEMORY_BYTE_WRITE", ""},
                     {"FETCH_SIZE", "KB"}, {"L3_BYTE_READ", "bytes"}, {"LOAD_STORE_CACHE_BYTE_WRITE", "bytes"},
                     {"XVE_ACTIVE", "%"}}});
  b.kernel("gemm", 0, 1000, 3, {8e6, 1e5, 1e5, 0, 9e9, 9e9, 50});
  b.kernel("gemm", 2000, 3000, 3, {8e6, 1e5, 1e5, 0, 9e9, 9e9, 50});
  b.kernel("stream", 4000, 8000, 3, {1e6, 2e6, 1e6, 1000, 9e9, 9e9, 50});
  auto path = tempPath("roofline.gtap");
  ASSERT_EQ(b.write(path), "");
  auto r = reportOf({path});
  EXPECT_TRUE(r.columns[columnOf(r, "XVE_FP32_FLOP")].flops);
  EXPECT_TRUE(r.columns[columnOf(r, "GPU_MEMORY_BYTE_READ")].bytes);
  EXPECT_TRUE(r.columns[columnOf(r, "GPU_MEMORY_BYTE_WRITE")].bytes);  // by its name
  // Cache traffic and the rest are not memory bytes.
  for (const char* name : {"L3_BYTE_READ", "LOAD_STORE_CACHE_BYTE_WRITE", "XVE_ACTIVE"}) {
    EXPECT_FALSE(r.columns[columnOf(r, name)].bytes) << name;
    EXPECT_FALSE(r.columns[columnOf(r, name)].flops) << name;
  }
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

TEST(CounterReport, SeveralFilesMergeByNameOrStayApartPerProcess) {
  auto a = hsaCapture();
  auto b = hsaCapture();
  b.pid = 777;
  auto pathA = tempPath("rank-a.gtap"), pathB = tempPath("rank-b.gtap");
  ASSERT_EQ(a.write(pathA), "");
  ASSERT_EQ(b.write(pathB), "");
  auto merged = reportOf({pathA, pathB});
  EXPECT_EQ(kernelOf(merged, "scale").dispatches, 4u);
  EXPECT_DOUBLE_EQ(kernelOf(merged, "scale").values[columnOf(merged, "SQ_WAVES")].total, 64);
  EXPECT_EQ(merged.notes.size(), 2u);  // each file's own
  std::vector<std::unique_ptr<Capture>> owned;
  std::vector<const Capture*> captures;
  for (const auto& p : {pathA, pathB}) {
    owned.push_back(std::make_unique<Capture>(p));
    captures.push_back(owned.back().get());
  }
  auto apart = counterReport(captures, true, true);
  ASSERT_EQ(apart.kernels.size(), 4u);
  EXPECT_EQ(apart.kernels[0].process, "pid 4242");
  EXPECT_EQ(apart.kernels[2].process, "pid 777");
  EXPECT_EQ(apart.kernels[3].kernel, "scale");
  EXPECT_EQ(apart.kernels[3].dispatches, 2u);
  ASSERT_EQ(apart.dispatches.size(), 6u);
  EXPECT_EQ(apart.dispatches[5].capture, 1u);
  EXPECT_EQ(apart.processes[1], "pid 777");
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


// --- Exports

// Two measured dispatches and one not, a counter not collected, a gauge and
// a cumulative metric.
std::string exportCapture(const std::string& name) {
  CounterCaptureBuilder b;
  b.sets.push_back({4, "levelZeroMetricQuery", "ComputeBasic",
                    {{"GpuTime", "ns"}, {"AvgGpuCoreFrequencyMHz", "MHz", schema::CounterType::REAL}}});
  b.notes.push_back({"XveActive", "not offered by the device"});
  b.kernel("first", 1000, 2000, 4, {1000, 19.5});
  b.kernel("plain", 3000, 4000);
  b.kernel("second", 5000, 7000, 4, {2000, 18.25});
  b.series.push_back({"sysman", 1000, {{"frequency", "MHz"}, {"engine active", "us", true}},
                      {1000, 3000, 7000}, {1500, 10, 1600, 12, NAN, 20}});
  auto path = tempPath(name);
  EXPECT_EQ(b.write(path), "");
  return path;
}

std::vector<const Capture*> pointers(const std::vector<std::unique_ptr<Capture>>& owned) {
  std::vector<const Capture*> out;
  for (const auto& c : owned) out.push_back(c.get());
  return out;
}

TEST(CounterExport, JsonLinesHoldSetsNotesValuesAndSamples) {
  std::vector<std::unique_ptr<Capture>> owned;
  owned.push_back(std::make_unique<Capture>(exportCapture("jsonl.gtap")));
  std::ostringstream out;
  std::vector<std::string> notes;
  gtap::readers::writeJsonLines(pointers(owned), out, notes);
  EXPECT_TRUE(notes.empty());
  std::vector<nlohmann::json> sets, counterNotes, values, samples;
  std::istringstream in(out.str());
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line);
    if (j["type"] == "counter_set") sets.push_back(j);
    if (j["type"] == "counter_note") counterNotes.push_back(j);
    if (j["type"] == "counters") values.push_back(j);
    if (j["type"] == "device_metric") samples.push_back(j);
  }
  ASSERT_EQ(sets.size(), 1u);
  EXPECT_EQ(sets[0]["id"], 4);
  EXPECT_EQ(sets[0]["group"], "ComputeBasic");
  EXPECT_EQ(sets[0]["counters"][1]["name"], "AvgGpuCoreFrequencyMHz");
  ASSERT_EQ(counterNotes.size(), 1u);
  EXPECT_EQ(counterNotes[0]["reason"], "not offered by the device");
  ASSERT_EQ(values.size(), 2u);
  EXPECT_EQ(values[0]["index"], 0);
  EXPECT_EQ(values[1]["index"], 2);  // the device line of the same index
  EXPECT_EQ(values[1]["values"]["GpuTime"], 2000);
  EXPECT_DOUBLE_EQ(values[1]["values"]["AvgGpuCoreFrequencyMHz"].get<double>(), 18.25);
  // Six samples, one not read.
  ASSERT_EQ(samples.size(), 5u);
  EXPECT_EQ(samples[4]["metric"], "engine active");
  EXPECT_EQ(samples[4]["cumulative"], true);
  EXPECT_EQ(samples[4]["time_ns"], 7000);
  EXPECT_EQ(samples[4]["value"], 20);
}

TEST(CounterExport, SqliteTablesAndSummary) {
  std::vector<std::unique_ptr<Capture>> owned;
  owned.push_back(std::make_unique<Capture>(exportCapture("sqlite-a.gtap")));
  owned.push_back(std::make_unique<Capture>(exportCapture("sqlite-b.gtap")));
  std::string db = tempPath("counters.db");
  std::filesystem::remove(db);
  {
    gtap::readers::OutputFile out(db, false);
    std::vector<std::string> notes;
    gtap::readers::writeSqlite(pointers(owned), out, notes);
    out.commit();
  }
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
  auto query = [&](const std::string& sql) {
    std::string out;
    char* error = nullptr;
    sqlite3_exec(
        h, sql.c_str(),
        [](void* text, int n, char** values, char**) {
          auto& s = *static_cast<std::string*>(text);
          for (int i = 0; i < n; ++i) s += std::string(i ? "|" : "") + (values[i] ? values[i] : "NULL");
          s += "\n";
          return 0;
        },
        &out, &error);
    EXPECT_EQ(error, nullptr) << error;
    return out;
  };
  // The second capture's values name its own operations and set rows.
  EXPECT_EQ(query("SELECT c.device_op_id, s.string, c.counter, c.value, c.units, cs.set_id, cs.process_id "
                  "FROM counters c JOIN device_ops o ON o.id = c.device_op_id JOIN strings s ON s.id = o.name_id "
                  "JOIN counter_sets cs ON cs.id = c.counter_set_id WHERE c.counter = 'GpuTime' ORDER BY 1"),
            "1|first|GpuTime|1000|ns|4|1\n3|second|GpuTime|2000|ns|4|1\n"
            "4|first|GpuTime|1000|ns|4|2\n6|second|GpuTime|2000|ns|4|2\n");
  EXPECT_EQ(query("SELECT kernel, counter, dispatches, total, min, max FROM counter_summary "
                  "WHERE process_id = 1 ORDER BY kernel, counter"),
            "first|AvgGpuCoreFrequencyMHz|1|19.5|19.5|19.5\nfirst|GpuTime|1|1000|1000|1000\n"
            "second|AvgGpuCoreFrequencyMHz|1|18.25|18.25|18.25\nsecond|GpuTime|1|2000|2000|2000\n");
  EXPECT_EQ(query("SELECT name, units, type FROM counter_set_counters WHERE counter_set_id = 2 ORDER BY position"),
            "GpuTime|ns|unsigned\nAvgGpuCoreFrequencyMHz|MHz|real\n");
  EXPECT_EQ(query("SELECT counter, reason FROM counter_notes WHERE process_id = 1"),
            "XveActive|not offered by the device\n");
  EXPECT_EQ(query("SELECT metric, units, cumulative, time_ns, value FROM device_metrics WHERE process_id = 2 "
                  "ORDER BY metric, time_ns"),
            "engine active|us|1|1000|10.0\nengine active|us|1|3000|12.0\nengine active|us|1|7000|20.0\n"
            "frequency|MHz|0|1000|1500.0\nfrequency|MHz|0|3000|1600.0\n");
  sqlite3_close(h);
}

TEST(CounterExport, ChromeCounterEventsAndSliceArguments) {
  std::vector<std::unique_ptr<Capture>> owned;
  owned.push_back(std::make_unique<Capture>(exportCapture("chrome.gtap")));
  std::vector<std::string> notes;
  auto timeline = gtap::readers::buildTimeline(pointers(owned), notes);
  std::ostringstream out;
  gtap::readers::writeChromeTrace(timeline, out);
  auto trace = nlohmann::json::parse(out.str());
  std::map<std::string, std::vector<std::pair<double, double>>> counters;
  std::map<std::string, nlohmann::json> kernelArgs;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "C") counters[e["name"]].emplace_back(e["ts"].get<double>(), e["args"]["value"].get<double>());
    if (e["ph"] == "X" && e["cat"] == "kernel") kernelArgs[e["name"]] = e["args"];
  }
  ASSERT_EQ(counters.size(), 2u) << out.str();
  size_t processNames = 0;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "process_name") {
      EXPECT_EQ(e["args"]["name"], "pid 4242 /usr/bin/app");
      ++processNames;
    }
  EXPECT_EQ(processNames, 1u);
  const auto& frequency = counters["counting GPU: frequency (MHz)"];
  ASSERT_EQ(frequency.size(), 2u);
  EXPECT_DOUBLE_EQ(frequency[1].first, 3.0);  // microseconds
  EXPECT_DOUBLE_EQ(frequency[1].second, 1600);
  // Cumulative: the rate between samples, per second.
  const auto& active = counters["counting GPU: engine active (us/s)"];
  ASSERT_EQ(active.size(), 2u);
  EXPECT_DOUBLE_EQ(active[0].second, 2.0 / 2000 * 1e9);
  EXPECT_DOUBLE_EQ(active[1].second, 8.0 / 4000 * 1e9);
  EXPECT_EQ(kernelArgs["second"]["GpuTime"], "2000");
  EXPECT_EQ(kernelArgs["second"]["AvgGpuCoreFrequencyMHz"], "18.25");
  EXPECT_FALSE(kernelArgs["plain"].contains("GpuTime"));
}

TEST(CounterExport, PerfettoCounterTracksAndAnnotations) {
  std::vector<std::unique_ptr<Capture>> owned;
  owned.push_back(std::make_unique<Capture>(exportCapture("perfetto.gtap")));
  std::vector<std::string> notes;
  auto timeline = gtap::readers::buildTimeline(pointers(owned), notes);
  std::ostringstream out;
  gtap::readers::writePerfettoTrace(timeline, out);
  perfetto::protos::Trace trace;
  ASSERT_TRUE(trace.ParseFromString(out.str()));
  std::map<uint64_t, std::string> counterTracks;
  std::map<std::string, std::vector<double>> values;
  std::map<std::string, std::string> annotations;
  std::map<uint64_t, std::string> processes;
  for (const auto& p : trace.packet())
    if (p.has_track_descriptor() && p.track_descriptor().has_process())
      processes[p.track_descriptor().uuid()] = p.track_descriptor().process().process_name();
  for (const auto& p : trace.packet())
    if (p.has_track_descriptor() && p.track_descriptor().has_counter()) {
      counterTracks[p.track_descriptor().uuid()] = p.track_descriptor().name();
      ASSERT_TRUE(processes.count(p.track_descriptor().parent_uuid()));
      EXPECT_EQ(processes[p.track_descriptor().parent_uuid()], "pid 4242 /usr/bin/app");
    }
  EXPECT_EQ(processes.size(), 1u);
  for (const auto& p : trace.packet()) {
    if (!p.has_track_event()) continue;
    const auto& e = p.track_event();
    if (e.type() == perfetto::protos::TrackEvent::TYPE_COUNTER) {
      ASSERT_TRUE(counterTracks.count(e.track_uuid()));
      values[counterTracks[e.track_uuid()]].push_back(e.double_counter_value());
    }
    if (e.type() == perfetto::protos::TrackEvent::TYPE_SLICE_BEGIN && e.name() == "first")
      for (const auto& a : e.debug_annotations()) annotations[a.name()] = a.string_value();
  }
  ASSERT_EQ(counterTracks.size(), 2u);
  EXPECT_EQ(values["counting GPU: frequency (MHz)"], (std::vector<double>{1500, 1600}));
  EXPECT_EQ(values["counting GPU: engine active (us/s)"].size(), 2u);
  EXPECT_EQ(annotations["GpuTime"], "1000");
  EXPECT_EQ(annotations["AvgGpuCoreFrequencyMHz"], "19.5");
}

TEST(CounterExport, AProcessWithOnlyDeviceMetricsIsNamedByThem) {
  CounterCaptureBuilder b;
  b.pid = 99;
  b.series.push_back({"sysman", 1000, {{"frequency", "MHz"}}, {1000, 2000}, {1500, 1400}});
  auto path = tempPath("metrics-only.gtap");
  ASSERT_EQ(b.write(path), "");
  std::vector<std::unique_ptr<Capture>> owned;
  owned.push_back(std::make_unique<Capture>(path));
  std::vector<std::string> notes;
  auto timeline = gtap::readers::buildTimeline(pointers(owned), notes);
  ASSERT_TRUE(timeline.tracks.empty());
  ASSERT_EQ(timeline.counters.size(), 1u);
  std::ostringstream chrome;
  gtap::readers::writeChromeTrace(timeline, chrome);
  auto trace = nlohmann::json::parse(chrome.str());
  size_t named = 0, points = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name" && e["pid"] == 99 && e["args"]["name"] == "pid 99 /usr/bin/app")
      ++named;
    if (e["ph"] == "C" && e["pid"] == 99) ++points;
  }
  EXPECT_EQ(named, 1u) << chrome.str();
  EXPECT_EQ(points, 2u);
  std::ostringstream perfetto;
  gtap::readers::writePerfettoTrace(timeline, perfetto);
  perfetto::protos::Trace parsed;
  ASSERT_TRUE(parsed.ParseFromString(perfetto.str()));
  uint64_t process = 0, parent = 1;
  for (const auto& p : parsed.packet()) {
    if (!p.has_track_descriptor()) continue;
    const auto& d = p.track_descriptor();
    if (d.has_process() && d.process().pid() == 99) process = d.uuid();
    if (d.has_counter()) parent = d.parent_uuid();
  }
  EXPECT_NE(process, 0u);
  EXPECT_EQ(parent, process);
}

TEST(CounterExport, DamagedCountersAreNotedAndLeftOut) {
  CounterCaptureBuilder b;
  b.sets.push_back({1, "hsaAqlProfile", "", {{"SQ_WAVES"}}});
  b.kernel("ghost", 0, 100, 3, {1});
  b.kernel("long", 200, 300, 1, {1, 2});
  auto path = tempPath("damaged-export.gtap");
  ASSERT_EQ(b.write(path), "");
  std::vector<std::unique_ptr<Capture>> owned;
  owned.push_back(std::make_unique<Capture>(path));
  std::ostringstream jsonl;
  std::vector<std::string> notes;
  gtap::readers::writeJsonLines(pointers(owned), jsonl, notes);
  EXPECT_EQ(jsonl.str().find("\"type\":\"counters\""), std::string::npos);
  std::vector<std::string> timelineNotes;
  auto timeline = gtap::readers::buildTimeline(pointers(owned), timelineNotes);
  for (const auto* list : {&notes, &timelineNotes}) {
    std::string all;
    for (const auto& n : *list) all += n + "\n";
    EXPECT_NE(all.find(path + ": 1 dispatch names counter set 3, which the file does not define"), std::string::npos)
        << all;
    EXPECT_NE(all.find(path + ": 1 dispatch of counter set 1 carries a number of values other than its 1 counters"),
              std::string::npos)
        << all;
  }
  for (const auto& s : timeline.slices)
    for (const auto& a : s.args) EXPECT_NE(a.first, "SQ_WAVES");
}

TEST(CounterExport, NoCountersNoNewOutput) {
  CounterCaptureBuilder b;
  b.kernel("plain", 0, 100);
  auto path = tempPath("plain-export.gtap");
  ASSERT_EQ(b.write(path), "");
  std::vector<std::unique_ptr<Capture>> owned;
  owned.push_back(std::make_unique<Capture>(path));
  std::vector<std::string> notes;
  auto timeline = gtap::readers::buildTimeline(pointers(owned), notes);
  EXPECT_TRUE(timeline.counters.empty());
  std::ostringstream chrome, jsonl;
  gtap::readers::writeChromeTrace(timeline, chrome);
  EXPECT_EQ(chrome.str().find("\"ph\":\"C\""), std::string::npos);
  gtap::readers::writeJsonLines(pointers(owned), jsonl, notes);
  // Beyond the schema line, which names every row type.
  std::string rows = jsonl.str().substr(jsonl.str().find('\n'));
  EXPECT_EQ(rows.find("\"type\":\"counter"), std::string::npos) << rows;
  EXPECT_EQ(rows.find("\"counters\""), std::string::npos) << rows;
  EXPECT_EQ(rows.find("device_metric"), std::string::npos) << rows;
}

}  // namespace
