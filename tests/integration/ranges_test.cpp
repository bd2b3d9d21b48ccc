// Named ranges (gtap_range_push / gtap_range_pop): ze_ranges launches scale
// once outside any range, once in "outer" and twice in "inner" (inside
// "outer"), printing "range NAME" before each launch. Kernels grouped by
// range, the Chrome export's slices and gtap info are checked against what
// it printed.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "process.h"

namespace gtap::test {
namespace {

std::string simDriver() { return std::string(GTAP_TEST_SIM_DIR) + "/libze_gtap_sim.so"; }

// Launches per range as the workload printed them ("range NAME" before each
// "launch" line), named as gtap names them ("(no range)" for none).
std::map<std::string, uint64_t> printedLaunchesPerRange(const std::string& out) {
  std::map<std::string, uint64_t> counts;
  std::istringstream in(out);
  std::string line, range;
  while (std::getline(in, line)) {
    if (line.rfind("range ", 0) == 0) range = line.substr(6) == "none" ? "(no range)" : line.substr(6);
    if (line.rfind("launch ", 0) == 0) ++counts[range];
  }
  return counts;
}

std::string capture(const std::string& dir, const std::vector<std::string>& workloadArgs, std::string* out = nullptr,
                    const std::vector<std::string>& runOptions = {}) {
  std::string file = dir + "/cap.gtap";
  std::vector<std::string> argv{gtapBinary(), "run", "--sim", "-q", "--mode=api,kernels", "-o", file};
  argv.insert(argv.end(), runOptions.begin(), runOptions.end());
  argv.push_back("--");
  argv.push_back(workload("ze_ranges"));
  argv.insert(argv.end(), workloadArgs.begin(), workloadArgs.end());
  auto r = runProcess(argv);
  EXPECT_EQ(r.exitCode, 0) << r.err;
  if (out) *out = r.out;
  return file;
}

std::map<std::string, uint64_t> kernelsByRange(const std::string& file) {
  auto r = runProcess({gtapBinary(), "kernels", "--by=range", "--format=jsonl", file});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  std::map<std::string, uint64_t> counts;
  std::istringstream in(r.out);
  std::string line;
  while (std::getline(in, line)) {
    auto row = nlohmann::json::parse(line);
    EXPECT_EQ(row["type"], "kernel") << line;
    counts[row["range"].get<std::string>()] += row["count"].get<uint64_t>();
  }
  return counts;
}

nlohmann::json info(const std::string& file) {
  auto r = runProcess({gtapBinary(), "info", "--format=jsonl", file});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  return nlohmann::json::parse(r.out.substr(0, r.out.find('\n')));
}

TEST(Ranges, KernelsByRangeCountWhatEachRangeLaunched) {
  std::string dir = freshDirectory("ranges-kernels");
  std::string out;
  std::string file = capture(dir, {}, &out);
  auto printed = printedLaunchesPerRange(out);
  ASSERT_EQ(printed, (std::map<std::string, uint64_t>{{"(no range)", 1}, {"outer", 1}, {"inner", 2}})) << out;
  EXPECT_EQ(kernelsByRange(file), printed);

  auto text = runProcess({gtapBinary(), "kernels", "--by=range", file});
  ASSERT_EQ(text.exitCode, 0) << text.err;
  EXPECT_EQ(text.out.rfind("range ", 0), 0u) << text.out;  // the first column's heading

  auto i = info(file);
  EXPECT_EQ(i["ranges"], 2);
  EXPECT_EQ(i["ranges_open_at_end"], 0);
  EXPECT_EQ(i["unmatched_range_pops"], 0);
}

// Slices of category "range" on the launching thread's track, "inner" inside
// "outer", each around exactly the launch calls the workload made in it.
TEST(Ranges, ChromeExportNestsRangesWithTheCallsInside) {
  std::string dir = freshDirectory("ranges-chrome");
  std::string file = capture(dir, {});
  auto r = runProcess({gtapBinary(), "export", "--format=chrome", "-o", "-", file});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  auto trace = nlohmann::json::parse(r.out);
  struct Slice {
    double begin, end;
    int64_t tid;
  };
  std::map<std::string, std::vector<Slice>> ranges;
  std::vector<Slice> launches;
  for (const auto& e : trace["traceEvents"]) {
    if (e.value("ph", "") != "X") continue;
    Slice s{e["ts"].get<double>(), e["ts"].get<double>() + e["dur"].get<double>(), e["tid"].get<int64_t>()};
    if (e.value("cat", "") == "range") ranges[e["name"].get<std::string>()].push_back(s);
    if (e.value("name", "") == "zeCommandListAppendLaunchKernel") launches.push_back(s);
  }
  ASSERT_EQ(ranges.size(), 2u);
  ASSERT_EQ(ranges["outer"].size(), 1u);
  ASSERT_EQ(ranges["inner"].size(), 1u);
  ASSERT_EQ(launches.size(), 4u);
  const Slice& outer = ranges["outer"][0];
  const Slice& inner = ranges["inner"][0];
  EXPECT_EQ(outer.tid, launches[0].tid);
  EXPECT_EQ(inner.tid, launches[0].tid);
  EXPECT_LE(outer.begin, inner.begin);
  EXPECT_GE(outer.end, inner.end);
  auto inside = [](const Slice& range, const std::vector<Slice>& calls) {
    size_t n = 0;
    for (const Slice& c : calls) {
      // A call is wholly in or wholly out: ranges change between calls.
      bool in = c.begin >= range.begin && c.end <= range.end;
      bool out = c.end <= range.begin || c.begin >= range.end;
      EXPECT_TRUE(in || out) << c.begin << " " << c.end << " against " << range.begin << " " << range.end;
      n += in;
    }
    return n;
  };
  EXPECT_EQ(inside(outer, launches), 3u);
  EXPECT_EQ(inside(inner, launches), 2u);
}

// Three threads push and pop while the main thread launches: each thread's
// ranges nest on its own track, and the launches count in the main thread's
// ranges only.
TEST(Ranges, EachThreadsRangesNestOnItsOwnTrack) {
  std::string dir = freshDirectory("ranges-threads");
  std::string out;
  std::string file = capture(dir, {"--threads", "3"}, &out);
  EXPECT_EQ(kernelsByRange(file), printedLaunchesPerRange(out));
  EXPECT_EQ(info(file)["ranges"], 2 + 3 * 200);
  auto r = runProcess({gtapBinary(), "export", "--format=chrome", "-o", "-", file});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  struct Slice {
    double begin, end;
  };
  std::map<int64_t, std::map<std::string, std::vector<Slice>>> perThread;  // tid -> name -> slices
  auto trace = nlohmann::json::parse(r.out);
  for (const auto& e : trace["traceEvents"]) {
    if (e.value("ph", "") != "X" || e.value("cat", "") != "range") continue;
    double begin = e["ts"].get<double>();
    perThread[e["tid"].get<int64_t>()][e["name"].get<std::string>()].push_back({begin, begin + e["dur"].get<double>()});
  }
  ASSERT_EQ(perThread.size(), 4u);
  size_t workers = 0;
  for (auto& [tid, names] : perThread) {
    if (names.count("outer")) {
      EXPECT_EQ(names.size(), 2u) << tid;  // outer and inner only
      continue;
    }
    ++workers;
    ASSERT_EQ(names["worker"].size(), 100u) << tid;
    ASSERT_EQ(names["item"].size(), 100u) << tid;
    for (size_t i = 0; i < 100; ++i) {
      // Pushed and popped in order on one thread: the i-th item in the i-th worker.
      EXPECT_LE(names["worker"][i].begin, names["item"][i].begin) << tid << " " << i;
      EXPECT_GE(names["worker"][i].end, names["item"][i].end) << tid << " " << i;
      if (i > 0) {
        EXPECT_GE(names["worker"][i].begin, names["worker"][i - 1].end) << tid << " " << i;
      }
    }
  }
  EXPECT_EQ(workers, 3u);
}

TEST(Ranges, PopsWithoutAPushAreCountedAndHarmless) {
  std::string dir = freshDirectory("ranges-stray");
  std::string out;
  std::string file = capture(dir, {"--stray-pop"}, &out);
  EXPECT_EQ(kernelsByRange(file), printedLaunchesPerRange(out));
  auto i = info(file);
  EXPECT_EQ(i["ranges"], 2);
  EXPECT_EQ(i["unmatched_range_pops"], 2);
  auto text = runProcess({gtapBinary(), "info", file});
  EXPECT_NE(text.out.find("2 pops without a push"), std::string::npos) << text.out;
}

TEST(Ranges, ARangeLeftOpenEndsWithTheCaptureMarked) {
  std::string dir = freshDirectory("ranges-open");
  std::string file = capture(dir, {"--leave-open"});
  auto i = info(file);
  EXPECT_EQ(i["ranges"], 3);
  EXPECT_EQ(i["ranges_open_at_end"], 1);
  auto r = runProcess({gtapBinary(), "export", "--format=chrome", "-o", "-", file});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  auto trace = nlohmann::json::parse(r.out);
  double lastApiEnd = 0, unclosedBegin = -1, unclosedEnd = -1;
  for (const auto& e : trace["traceEvents"]) {
    if (e.value("ph", "") != "X") continue;
    double end = e["ts"].get<double>() + e["dur"].get<double>();
    if (e.value("cat", "") == "api") lastApiEnd = std::max(lastApiEnd, end);
    if (e.value("name", "") == "unclosed") {
      EXPECT_EQ(e["cat"], "range");
      EXPECT_EQ(e["args"]["open at end"], "yes") << e.dump();
      unclosedBegin = e["ts"].get<double>();
      unclosedEnd = end;
    }
  }
  ASSERT_GE(unclosedBegin, 0);
  // Pushed before the last calls (the frees), closed only when the file was.
  EXPECT_LT(unclosedBegin, lastApiEnd);
  EXPECT_GE(unclosedEnd, lastApiEnd);
}

// Ranges pushed while recording is paused are not recorded; the kernels are
// not either.
TEST(Ranges, NoneArePushedWhilePaused) {
  std::string dir = freshDirectory("ranges-paused");
  std::string file = capture(dir, {}, nullptr, {"--start-paused"});
  EXPECT_EQ(info(file)["ranges"], 0);
  EXPECT_TRUE(kernelsByRange(file).empty());
}

TEST(Ranges, WithoutGtapTheWorkloadRunsUnchanged) {
  std::string dir = freshDirectory("ranges-plain");
  std::string traced;
  capture(dir, {"--stray-pop", "--leave-open"}, &traced);
  auto plain = runProcess({workload("ze_ranges"), "--stray-pop", "--leave-open"}, {{"ZE_ENABLE_ALT_DRIVERS", simDriver()}});
  ASSERT_EQ(plain.exitCode, 0) << plain.err;
  EXPECT_EQ(printedLaunchesPerRange(plain.out), printedLaunchesPerRange(traced));
  // Same checksum: the same work, with or without gtap.
  auto checksum = [](const std::string& out) { return out.substr(out.find("checksum ranges")).substr(0, 40); };
  ASSERT_NE(plain.out.find("checksum ranges"), std::string::npos) << plain.out;
  EXPECT_EQ(checksum(plain.out), checksum(traced));
}

}  // namespace
}  // namespace gtap::test
