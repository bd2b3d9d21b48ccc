// The report filters (--kernel, --from, --to, --pid, --rank) on the reports
// over captures: api, kernels, summary, explain, executables, counters and
// diff, on two ranks' captures of the pipeline workloads, checked against
// what the workloads did and the same whatever -j is.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gtap/readers/capture.h"
#include "gtap/readers/counters.h"
#include "jsonl_rows.h"
#include "process.h"

namespace gtap::test {
namespace {

using nlohmann::json;


std::string seconds(int64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9f", static_cast<double>(ns) / 1e9);
  return buf;
}

// Rank 0: ze_pipeline executing its list (copy, fill, scale, add,
// reduce_partial, two copies, a barrier) three times, one submission each;
// rank 1: hsa_pipeline dispatching scale, add and reduce_partial three times.
// `window`: the device span of rank 0's second submission (offsets into its
// run), which holds that submission's operations and no other's; `after`: the
// end of the first submission's work (before the second is submitted).
struct Captures {
  std::string ze, hsa, counters;
  std::string from, to, after;
};

const Captures& captures() {
  static Captures c = [] {
    Captures c;
    std::string dir = freshDirectory("filters");
    c.ze = dir + "/rank-0.gtap";
    c.hsa = dir + "/rank-1.gtap";
    c.counters = dir + "/counters.gtap";
    EXPECT_EQ(runGtap({"run", "--sim", "-q", "-m", "api,kernels,memory", "-o", c.ze, "--", workload("ze_pipeline"), "3"},
                      {{"PMI_RANK", "0"}, {"PMI_SIZE", "2"}}).exitCode, 0);
    EXPECT_EQ(runGtap({"run", "--sim", "-q", "-m", "api,kernels,memory", "-o", c.hsa, "--", workload("hsa_pipeline")},
                      {{"PMI_RANK", "1"}, {"PMI_SIZE", "2"}}).exitCode, 0);
    EXPECT_EQ(runGtap({"run", "--sim", "-q", "-m", "api,kernels", "--counters", "ComputeBasic", "-o", c.counters, "--",
                    workload("ze_pipeline"), "3"}).exitCode, 0);
    auto q = runGtap({"queue", "--format=jsonl", c.ze});
    EXPECT_EQ(q.exitCode, 0) << q.err;
    auto subs = jsonlRows(q.out, "queue_submission");
    EXPECT_EQ(subs.size(), 3u) << q.out;
    if (subs.size() == 3) {
      int64_t start = subs[1]["start_at"], span = subs[1]["device_span"];
      c.from = seconds(start);
      c.to = seconds(start + span);
      c.after = seconds(subs[0]["start_at"].get<int64_t>() + subs[0]["device_span"].get<int64_t>());
    }
    return c;
  }();
  return c;
}

// Name -> count of the rows of `type` (their `key` and `count` fields).
std::map<std::string, int64_t> counts(const std::string& out, const std::string& type, const std::string& key,
                                      const std::string& count = "count") {
  std::map<std::string, int64_t> m;
  for (const auto& r : jsonlRows(out, type)) m[r[key].get<std::string>()] += r[count].get<int64_t>();
  return m;
}

// The output and the exit status of `args` with -j 1, checked equal with -j 2.
ProcessResult both(std::vector<std::string> args) {
  std::vector<std::string> one = {"-j", "1"}, two = {"-j", "2"};
  one.insert(one.end(), args.begin(), args.end());
  two.insert(two.end(), args.begin(), args.end());
  auto a = runGtap(one), b = runGtap(two);
  EXPECT_EQ(a.exitCode, b.exitCode) << a.err << b.err;
  EXPECT_EQ(a.out, b.out);
  return a;
}

TEST(Filters, ApiKeepsTheLaunchingCallsAndTheWindowsCalls) {
  const auto& c = captures();
  auto all = both({"api", "--format=jsonl", c.ze, c.hsa});
  ASSERT_EQ(all.exitCode, 0) << all.err;
  auto whole = counts(all.out, "api_function", "function");
  EXPECT_EQ(whole["zeCommandQueueExecuteCommandLists"], 3);
  // The list is appended once, scale's launch in it; HSA rings a doorbell per dispatch.
  auto k = both({"api", "--format=jsonl", "--kernel", "sc*", c.ze, c.hsa});
  ASSERT_EQ(k.exitCode, 0) << k.err;
  EXPECT_EQ(counts(k.out, "api_function", "function"),
            (std::map<std::string, int64_t>{{"zeCommandListAppendLaunchKernel", 1}, {"hsa_signal_store_screlease", 3}}));
  // After the first submission's work: the two later submissions' calls, no allocation.
  auto w = both({"api", "--format=jsonl", "--from", c.after, c.ze});
  ASSERT_EQ(w.exitCode, 0) << w.err;
  auto late = counts(w.out, "api_function", "function");
  EXPECT_EQ(late["zeCommandQueueExecuteCommandLists"], 2);
  EXPECT_EQ(late.count("zeMemAllocDevice"), 0u);
  EXPECT_EQ(late.count("zeInit"), 0u);
  EXPECT_GT(whole["zeMemAllocDevice"], 0);
  // One rank: only its API.
  auto r = both({"api", "--format=jsonl", "--rank", "1", c.ze, c.hsa});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  for (const auto& row : jsonlRows(r.out, "api_function")) EXPECT_EQ(row["api"], "hsa") << row.dump();
  EXPECT_FALSE(jsonlRows(r.out, "api_function").empty());
  // A rank no file has is a usage error; a window past the run an empty report.
  auto bad = runGtap({"api", "--rank", "7", c.ze, c.hsa});
  EXPECT_EQ(bad.exitCode, 2);
  EXPECT_NE(bad.err.find("no capture of rank 7"), std::string::npos) << bad.err;
  auto none = runGtap({"api", "--format=jsonl", "--from", "1000", c.ze});
  EXPECT_EQ(none.exitCode, 0) << none.err;
  EXPECT_TRUE(jsonlRows(none.out, "api_function").empty());
}

TEST(Filters, KernelsInTheWindowAndOfOneRank) {
  const auto& c = captures();
  auto all = both({"kernels", "--format=jsonl", c.ze, c.hsa});
  ASSERT_EQ(all.exitCode, 0) << all.err;
  EXPECT_EQ(counts(all.out, "kernel", "kernel"),
            (std::map<std::string, int64_t>{{"scale", 6}, {"add", 6}, {"reduce_partial", 6}}));
  auto k = both({"kernels", "--format=jsonl", "--kernel", "*d*", c.ze, c.hsa});
  EXPECT_EQ(counts(k.out, "kernel", "kernel"), (std::map<std::string, int64_t>{{"add", 6}, {"reduce_partial", 6}}));
  auto w = both({"kernels", "--format=jsonl", "--from", c.from, "--to", c.to, c.ze});
  EXPECT_EQ(counts(w.out, "kernel", "kernel"),
            (std::map<std::string, int64_t>{{"scale", 1}, {"add", 1}, {"reduce_partial", 1}}));
  auto r = both({"kernels", "--format=jsonl", "--rank", "0", "--kernel", "scale", c.ze, c.hsa});
  EXPECT_EQ(counts(r.out, "kernel", "kernel"), (std::map<std::string, int64_t>{{"scale", 3}}));
}

TEST(Filters, SummaryCountsOnlyWhatTheFilterKeeps) {
  const auto& c = captures();
  auto all = both({"summary", "--format=jsonl", c.ze, c.hsa});
  ASSERT_EQ(all.exitCode, 0) << all.err;
  auto procs = jsonlRows(all.out, "process_summary");
  ASSERT_EQ(procs.size(), 2u);
  EXPECT_GT(procs[0]["allocations"].get<int64_t>(), 0);
  // One rank: one process.
  auto r = both({"summary", "--format=jsonl", "--rank", "1", c.ze, c.hsa});
  auto one = jsonlRows(r.out, "process_summary");
  ASSERT_EQ(one.size(), 1u) << r.out;
  EXPECT_EQ(one[0]["file"], c.hsa);
  // After the first submission's work: no allocation is made, fewer calls, two thirds of the kernels.
  auto w = both({"summary", "--format=jsonl", "--from", c.after, c.ze});
  auto late = jsonlRows(w.out, "process_summary");
  ASSERT_EQ(late.size(), 1u);
  EXPECT_EQ(late[0]["allocations"], 0);
  EXPECT_LT(late[0]["api_calls"].get<int64_t>(), procs[0]["api_calls"].get<int64_t>());
  EXPECT_EQ(counts(w.out, "top_kernel", "kernel"),
            (std::map<std::string, int64_t>{{"scale", 2}, {"add", 2}, {"reduce_partial", 2}}));
  // --kernel: the device's kernels of that name, no copy.
  auto k = both({"summary", "--format=jsonl", "--kernel", "scale", c.ze});
  auto kp = jsonlRows(k.out, "process_summary");
  ASSERT_EQ(kp.size(), 1u);
  ASSERT_EQ(kp[0]["devices"].size(), 1u);
  EXPECT_EQ(kp[0]["devices"][0]["kernels"], 3);
  EXPECT_EQ(kp[0]["devices"][0]["copies"], 0);
  EXPECT_EQ(counts(k.out, "top_kernel", "kernel"), (std::map<std::string, int64_t>{{"scale", 3}}));
}

TEST(Filters, ExplainNamesOnlyTheKeptKernelsAndProcesses) {
  const auto& c = captures();
  auto k = both({"explain", "--format=jsonl", "--kernel", "add", c.ze, c.hsa});
  ASSERT_EQ(k.exitCode, 0) << k.err;
  auto kernels = jsonlRows(k.out, "explain_kernel");
  ASSERT_EQ(kernels.size(), 2u) << k.out;  // one a process
  for (const auto& row : kernels) {
    EXPECT_EQ(row["kernel"], "add");
    EXPECT_EQ(row["count"], 3);
  }
  auto w = both({"explain", "--format=jsonl", "--from", c.from, "--to", c.to, c.ze});
  for (const auto& row : jsonlRows(w.out, "explain_kernel")) EXPECT_EQ(row["count"], 1) << row.dump();
  EXPECT_EQ(jsonlRows(w.out, "explain_kernel").size(), 3u);
  auto r = both({"explain", "--format=jsonl", "--rank", "0", c.ze, c.hsa});
  auto procs = jsonlRows(r.out, "explain_process");
  ASSERT_EQ(procs.size(), 1u);
  EXPECT_EQ(procs[0]["file"], c.ze);
  EXPECT_EQ(runGtap({"explain", "--from", "2", "--to", "1", c.ze}).exitCode, 2);
}

TEST(Filters, ExecutablesOfTheKernelsThatRanInTheWindow) {
  const auto& c = captures();
  auto all = both({"executables", "--format=jsonl", c.ze, c.hsa});
  ASSERT_EQ(all.exitCode, 0) << all.err;
  std::set<std::string> names;
  for (const auto& row : jsonlRows(all.out, "executable_kernel")) names.insert(row["kernel"]);
  EXPECT_TRUE(names.count("scale")) << all.out;
  auto k = both({"executables", "--format=jsonl", "--kernel", "sc*", c.ze, c.hsa});
  auto kept = jsonlRows(k.out, "executable_kernel");
  ASSERT_EQ(kept.size(), 2u) << k.out;  // a module each
  for (const auto& row : kept) EXPECT_EQ(row["kernel"], "scale");
  auto r = both({"executables", "--format=jsonl", "--pid", "0", c.ze});
  EXPECT_EQ(r.exitCode, 2);
  auto w = both({"executables", "--format=jsonl", "--from", c.from, "--to", c.to, c.ze});
  std::set<std::string> ran;
  for (const auto& row : jsonlRows(w.out, "executable_kernel")) ran.insert(row["kernel"]);
  EXPECT_EQ(ran, (std::set<std::string>{"scale", "add", "reduce_partial"}));
  auto none = runGtap({"executables", "--from", "1000", c.ze});
  EXPECT_EQ(none.exitCode, 0);
  EXPECT_NE(none.out.find("no kernel ran between --from and --to"), std::string::npos) << none.out;
}

TEST(Filters, CountersOfTheKeptDispatches) {
  const auto& c = captures();
  auto all = both({"counters", "--per-dispatch", "--format=jsonl", c.counters});
  ASSERT_EQ(all.exitCode, 0) << all.err;
  EXPECT_EQ(jsonlRows(all.out, "dispatch_counter").size(), 9u);
  auto k = both({"counters", "--per-dispatch", "--format=jsonl", "--kernel", "sc*", c.counters});
  auto scale = jsonlRows(k.out, "dispatch_counter");
  ASSERT_EQ(scale.size(), 3u);
  for (const auto& row : scale) EXPECT_EQ(row["kernel"], "scale");
  // A dispatch keeps its place in the file: the same index as unfiltered.
  std::vector<json> unfilteredScale;
  for (const auto& row : jsonlRows(all.out, "dispatch_counter"))
    if (row["kernel"] == "scale") unfilteredScale.push_back(row["dispatch"]);
  ASSERT_EQ(unfilteredScale.size(), 3u);
  for (size_t i = 0; i < scale.size(); ++i) EXPECT_EQ(scale[i]["dispatch"], unfilteredScale[i]);
  auto kc = both({"counters", "--format=jsonl", "--kernel", "add", c.counters});
  for (const auto& row : jsonlRows(kc.out, "kernel_counter")) {
    EXPECT_EQ(row["kernel"], "add");
    EXPECT_EQ(row["dispatches"], 3);
  }
  auto none = runGtap({"counters", "--per-dispatch", "--format=jsonl", "--from", "1000", c.counters});
  EXPECT_EQ(none.exitCode, 0) << none.err;
  EXPECT_TRUE(jsonlRows(none.out, "dispatch_counter").empty());
  EXPECT_EQ(runGtap({"counters", "--rank", "4", c.counters}).exitCode, 2);
  EXPECT_EQ(runGtap({"counters", "--list", "--sim", "--kernel", "x"}).exitCode, 2);
}

// Device metrics sampled every 5 ms: a window keeps the samples taken in it,
// in the counters report and in the exports alike.
TEST(Filters, DeviceMetricsOnlyInTheWindow) {
  std::string file = freshDirectory("filters-metrics") + "/metrics.gtap";
  ASSERT_EQ(runGtap({"run", "--sim", "-q", "-m", "kernels", "--metrics-interval", "5", "-o", file, "--",
                     workload("ze_vector_add"), "150", "100000"})
                .exitCode,
            0);
  readers::Capture capture(file);
  const int64_t start = capture.process().startHostNs;
  std::vector<int64_t> offsets;
  for (const auto& series : readers::loadCounters(capture).metrics)
    for (int64_t t : series.times) offsets.push_back(t - start);
  std::sort(offsets.begin(), offsets.end());
  ASSERT_GE(offsets.size(), 4u);
  // From just before the second sample to just after the last but one.
  int64_t from = offsets[1] - 1000, to = offsets[offsets.size() - 2] + 1000;
  auto inside = static_cast<int64_t>(
      std::count_if(offsets.begin(), offsets.end(), [&](int64_t o) { return o >= from && o <= to; }));
  ASSERT_GT(inside, 0);
  ASSERT_LT(inside, static_cast<int64_t>(offsets.size()));
  auto samples = [&](std::vector<std::string> window) {
    std::vector<std::string> args = {"counters", "--device-metrics", "--format=jsonl", file};
    args.insert(args.end(), window.begin(), window.end());
    auto r = both(args);
    EXPECT_EQ(r.exitCode, 0) << r.err;
    return counts(r.out, "device_metric_summary", "metric", "samples");
  };
  auto all = samples({}), windowed = samples({"--from", seconds(from), "--to", seconds(to)});
  ASSERT_TRUE(all.count("frequency gpu")) << "a gauge read at every sample";
  EXPECT_EQ(all["frequency gpu"], static_cast<int64_t>(offsets.size()));
  EXPECT_EQ(windowed["frequency gpu"], inside);
  // The record exports hold the same samples: each in the window.
  auto rows = runGtap({"export", "--format=csv", "--table", "device_metrics", "-o", "-", "--from", seconds(from),
                       "--to", seconds(to), file});
  ASSERT_EQ(rows.exitCode, 0) << rows.err;
  std::istringstream lines(rows.out);
  std::string line;
  std::getline(lines, line);  // the header
  int64_t frequencyRows = 0;
  while (std::getline(lines, line)) {
    if (line.find(",frequency gpu,") == std::string::npos) continue;
    ++frequencyRows;
    // process_id,device,source,metric,units,cumulative,time_ns,value
    std::vector<std::string> fields;
    std::istringstream row(line);
    for (std::string f; std::getline(row, f, ',');) fields.push_back(f);
    ASSERT_EQ(fields.size(), 8u) << line;
    int64_t offset = std::stoll(fields[6]) - start;
    EXPECT_GE(offset, from);
    EXPECT_LE(offset, to);
  }
  EXPECT_EQ(frequencyRows, inside);
}

TEST(Filters, DiffAppliesTheFilterToBothSides) {
  const auto& c = captures();
  // Kernel scale and the calls that launched it, on both sides.
  auto k = both({"diff", "--format=jsonl", "--kernel", "sc*", c.ze, c.hsa});
  ASSERT_EQ(k.exitCode, 0) << k.err;
  std::set<std::string> names;
  for (const auto& row : jsonlRows(k.out, "diff")) names.insert(row["kind"].get<std::string>() + " " + row["name"].get<std::string>());
  EXPECT_EQ(names.count("kernel add"), 0u);
  EXPECT_EQ(names.count("api zeCommandListAppendLaunchKernel"), 1u);
  EXPECT_EQ(names.count("api hsa_signal_store_screlease"), 1u);
  EXPECT_EQ(names.count("api zeInit"), 0u);
  for (const auto& row : jsonlRows(k.out, "diff"))
    if (row["name"] == "scale") {
      EXPECT_EQ(row["count_before"], 3);
      EXPECT_EQ(row["count_after"], 3);
    }
  // A window past both runs: nothing on either side, so nothing changed.
  EXPECT_FALSE(jsonlRows(runGtap({"diff", "--format=jsonl", c.ze, c.hsa}).out, "diff").empty());
  auto w = both({"diff", "--format=jsonl", "--from", "1000", c.ze, c.hsa});
  EXPECT_EQ(w.exitCode, 0) << w.err;
  EXPECT_TRUE(jsonlRows(w.out, "diff").empty()) << w.out;
  // A rank only one side has: a usage error.
  auto r = runGtap({"diff", "--rank", "1", c.ze, c.hsa});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("no capture of rank 1"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace gtap::test
