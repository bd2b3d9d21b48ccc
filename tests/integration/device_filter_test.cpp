// --kernel-filter and --dispatch-range on every front end: real workloads
// under `gtap run`, a full capture against filtered ones. A filtered capture
// keeps exactly the dispatches asked for, numbered as replay scopes number
// them; the program's output is what it is without gtap; bad ranges are
// refused by name.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "gtap/readers/capture.h"
#include "gtap/readers/device_work.h"
#include "process.h"

namespace gtap::test {
namespace {

std::string simDir() { return GTAP_TEST_SIM_DIR; }

struct Captured {
  ProcessResult result;
  std::string file;
};

Captured capture(const std::string& dir, const std::string& name, const std::vector<std::string>& options,
            const std::vector<std::string>& args = {}, const std::string& mode = "api,kernels") {
  std::string file = dir + "/" + name + ".gtap";
  std::vector<std::string> argv = {gtapBinary(), "run", "--sim", "-q", "-m", mode, "-o", file};
  argv.insert(argv.end(), options.begin(), options.end());
  argv.push_back("--");
  argv.push_back(workload(name));
  argv.insert(argv.end(), args.begin(), args.end());
  return {runProcess(argv), file};
}

ProcessResult plain(const std::string& name, const std::vector<std::string>& args = {}) {
  std::vector<std::string> argv = {workload(name)};
  argv.insert(argv.end(), args.begin(), args.end());
  return runProcess(argv, {{"ZE_ENABLE_ALT_DRIVERS", simDir() + "/libze_gtap_sim.so"},
                           {"LD_LIBRARY_PATH", simDir() + "/hsa"}});
}

// The kernel dispatches a capture holds, in the order they were handed to the
// device, each as "name@appendIndex" (an append's index among its thread's
// API events is the same in every capture of the program; a regular list's
// launch keeps it at each execution) or, for HSA packets, "name@queueIndex".
// `operation` picks IREE HAL records ("dispatch", "host_execution"); empty:
// the device level's.
std::vector<std::string> dispatches(const std::string& file, const std::string& operation = {}) {
  readers::Capture capture(file);
  auto work = readers::loadDeviceWork(capture);
  std::vector<const readers::DeviceOp*> ops;
  for (const auto& op : work.ops) {
    if (op.kind != schema::DeviceOpKind::KERNEL) continue;
    if ((op.recordedBy == schema::Api::IREE_HAL) != !operation.empty()) continue;
    if (!operation.empty() && op.operation != operation) continue;
    ops.push_back(&op);
  }
  std::sort(ops.begin(), ops.end(), [](const readers::DeviceOp* a, const readers::DeviceOp* b) {
    // Host executions in the order they started; the rest by submission.
    if (a->operation == "host_execution") return a->startNs < b->startNs;
    return std::tie(a->submitNs, a->appendIndex, a->queueIndex) < std::tie(b->submitNs, b->appendIndex, b->queueIndex);
  });
  std::vector<std::string> out;
  for (const auto* op : ops)
    out.push_back(std::string(op->name) + "@" + std::to_string(op->recordedBy == schema::Api::HSA ? op->queueIndex : op->appendIndex));
  return out;
}

std::vector<std::string> slice(const std::vector<std::string>& all, size_t first, size_t last) {
  if (last >= all.size()) return {"(a capture with fewer than " + std::to_string(last + 1) + " dispatches)"};
  return {all.begin() + static_cast<std::ptrdiff_t>(first), all.begin() + static_cast<std::ptrdiff_t>(last) + 1};
}

std::vector<std::string> names(const std::vector<std::string>& v) {
  std::vector<std::string> out;
  for (const auto& s : v) out.push_back(s.substr(0, s.find('@')));
  return out;
}

// The kernel name of each dispatch number in a replay stream, worked out as
// docs/replay.md says: an immediate list's launch carries its number, an
// execute's lists number their launches from firstDispatch on.
std::vector<std::string> replayDispatchNames(const std::string& file) {
  auto r = runProcess({gtapBinary(), "dump", "--format=jsonl", file});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  std::map<uint64_t, std::string> kernelName;
  std::map<uint64_t, std::vector<std::string>> listLaunches;
  std::map<uint64_t, std::string> numbered;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    auto rec = nlohmann::json::parse(line);
    if (!rec.contains("op")) continue;
    std::string op = rec["op"];
    if (op == "kernelCreate") kernelName[rec["kernel"]] = rec["name"];
    if (op == "listReset") listLaunches.erase(rec["list"].get<uint64_t>());
    if (op == "launchKernel") {
      std::string name = kernelName[rec["kernel"]];
      uint64_t number = rec["dispatch"];
      if (number == ~uint64_t{0})
        listLaunches[rec["list"]].push_back(name);
      else
        numbered[number] = name;
    }
    if (op == "execute") {
      uint64_t number = rec["firstDispatch"];
      for (const auto& list : rec["lists"])
        for (const auto& name : listLaunches[list.get<uint64_t>()]) numbered[number++] = name;
    }
  }
  std::vector<std::string> out;
  for (const auto& [number, name] : numbered) {
    EXPECT_EQ(number, out.size()) << "dispatch numbers run from 0 without a gap";
    out.push_back(name);
  }
  return out;
}

// Level Zero: the numbers of a full capture's replay stream select the same
// launches in a capture limited to them, on a regular list executed three
// times (numbered at each execution) and on immediate lists (numbered as
// appended); the kernel filter counts in the same numbers.
TEST(DeviceFilter, LevelZeroRangeAndKernelFilterKeepTheNumberedDispatches) {
  std::string dir = freshDirectory("filter-ze");
  for (const std::string name : {"ze_pipeline", "ze_immediate"}) {
    auto base = plain(name);
    ASSERT_EQ(base.exitCode, 0) << base.err;
    Captured full = capture(dir + "/", name, {}, {}, "api,kernels,replay");
    ASSERT_EQ(full.result.exitCode, 0) << full.result.err;
    EXPECT_EQ(full.result.out, base.out);
    auto all = dispatches(full.file);
    // ze_pipeline: one list of three launches executed three times;
    // ze_immediate: two rounds of four launches on immediate lists.
    ASSERT_EQ(all.size(), name == "ze_pipeline" ? 9u : 8u) << name;
    // The capture's own order is the replay stream's numbering.
    EXPECT_EQ(names(all), replayDispatchNames(full.file)) << name;

    std::string rangeDir = freshDirectory("filter-ze-range-" + name);
    Captured range = capture(rangeDir, name, {"--dispatch-range", "2:4"});
    ASSERT_EQ(range.result.exitCode, 0) << range.result.err;
    EXPECT_EQ(range.result.out, base.out) << "the program's work runs unchanged";
    EXPECT_EQ(dispatches(range.file), slice(all, 2, 4)) << name;

    std::string bothDir = freshDirectory("filter-ze-both-" + name);
    Captured both = capture(bothDir, name, {"--dispatch-range", "1:6", "--kernel-filter", "ad*"});
    ASSERT_EQ(both.result.exitCode, 0) << both.result.err;
    EXPECT_EQ(both.result.out, base.out);
    std::vector<std::string> expected;
    for (const auto& d : slice(all, 1, 6))
      if (d.rfind("add@", 0) == 0) expected.push_back(d);
    EXPECT_FALSE(expected.empty());
    EXPECT_EQ(dispatches(both.file), expected) << name;
  }
}

// HSA: the kernel filter matches the code object's kernel symbol (without
// ".kd"); left-out packets go on as written, so the program's results are
// the same; the range numbers kernel dispatch packets in doorbell order.
TEST(DeviceFilter, HsaKernelFilterAndRangeKeepExactlyTheirDispatches) {
  std::string dir = freshDirectory("filter-hsa");
  auto base = plain("hsa_pipeline");
  ASSERT_EQ(base.exitCode, 0) << base.err;
  Captured full = capture(dir, "hsa_pipeline", {});
  ASSERT_EQ(full.result.exitCode, 0) << full.result.err;
  auto all = dispatches(full.file);
  ASSERT_EQ(names(all), (std::vector<std::string>{"scale", "add", "reduce_partial", "scale", "add", "reduce_partial",
                                                  "scale", "add", "reduce_partial"}));

  std::string filterDir = freshDirectory("filter-hsa-kernel");
  Captured filtered = capture(filterDir, "hsa_pipeline", {"--kernel-filter", "re*"});
  ASSERT_EQ(filtered.result.exitCode, 0) << filtered.result.err;
  EXPECT_EQ(filtered.result.out, base.out);
  std::vector<std::string> reduces;
  for (const auto& d : all)
    if (d.rfind("reduce_partial@", 0) == 0) reduces.push_back(d);
  EXPECT_EQ(dispatches(filtered.file), reduces);
  // Left out means no record at all: no untimed stand-in either.
  readers::Capture c(filtered.file);
  for (const auto& op : readers::loadDeviceWork(c).ops)
    if (op.kind == schema::DeviceOpKind::KERNEL) {
      EXPECT_TRUE(op.timed) << op.name << ": " << op.note;
    }

  std::string rangeDir = freshDirectory("filter-hsa-range");
  Captured range = capture(rangeDir, "hsa_pipeline", {"--dispatch-range", "4:7"});
  ASSERT_EQ(range.result.exitCode, 0) << range.result.err;
  EXPECT_EQ(range.result.out, base.out);
  EXPECT_EQ(dispatches(range.file), slice(all, 4, 7));

  std::string bothDir = freshDirectory("filter-hsa-both");
  Captured both = capture(bothDir, "hsa_pipeline", {"--dispatch-range", "1:5", "--kernel-filter", "scale"});
  ASSERT_EQ(both.result.exitCode, 0) << both.result.err;
  EXPECT_EQ(dispatches(both.file), slice(all, 3, 3)) << "the only scale numbered 1 to 5 is 3";
}

// IREE HAL: the kernel filter matches export names, for the dispatches
// recorded into command buffers and for their runs on the host (issue_call
// and thunks alike); the range numbers recorded dispatches in call order and
// host runs in the order they start.
TEST(DeviceFilter, HalKernelFilterAndRangeKeepExactlyTheirDispatches) {
  std::string dir = freshDirectory("filter-hal");
  auto base = runProcess({workload("hal_fixture"), "100", "1"});
  ASSERT_EQ(base.exitCode, 0) << base.err;
  Captured full = capture(dir, "hal_fixture", {}, {"100", "1"});
  ASSERT_EQ(full.result.exitCode, 0) << full.result.err;
  auto recorded = dispatches(full.file, "dispatch");
  auto hostRuns = dispatches(full.file, "host_execution");
  ASSERT_EQ(recorded.size(), 11u);
  ASSERT_EQ(hostRuns.size(), 4u);

  std::string filterDir = freshDirectory("filter-hal-kernel");
  Captured filtered = capture(filterDir, "hal_fixture", {"--kernel-filter", "*copy*"}, {"100", "1"});
  ASSERT_EQ(filtered.result.exitCode, 0) << filtered.result.err;
  EXPECT_EQ(filtered.result.out, base.out);
  auto only = [](const std::vector<std::string>& v, const std::string& prefix) {
    std::vector<std::string> out;
    for (const auto& s : v)
      if (s.rfind(prefix, 0) == 0) out.push_back(s);
    return out;
  };
  EXPECT_EQ(dispatches(filtered.file, "dispatch"), only(recorded, "fixture_copy_export@"));
  EXPECT_EQ(names(dispatches(filtered.file, "host_execution")),
            names(only(hostRuns, "fixture_copy_export@")));
  EXPECT_EQ(only(recorded, "fixture_copy_export@").size(), 3u);

  std::string rangeDir = freshDirectory("filter-hal-range");
  Captured range = capture(rangeDir, "hal_fixture", {"--dispatch-range", "2:5"}, {"100", "1"});
  ASSERT_EQ(range.result.exitCode, 0) << range.result.err;
  EXPECT_EQ(range.result.out, base.out);
  EXPECT_EQ(dispatches(range.file, "dispatch"), slice(recorded, 2, 5));
  EXPECT_EQ(names(dispatches(range.file, "host_execution")), names(slice(hostRuns, 2, 3)));
}

// A filtered capture says so in `gtap info` and `gtap summary`; a complete
// one does not.
TEST(DeviceFilter, InfoAndSummaryNameTheFilter) {
  std::string dir = freshDirectory("filter-named");
  Captured full = capture(dir + "/", "ze_pipeline", {});
  ASSERT_EQ(full.result.exitCode, 0) << full.result.err;
  std::string filteredDir = freshDirectory("filter-named-filtered");
  Captured filtered = capture(filteredDir, "ze_pipeline", {"--kernel-filter", "sc*", "--dispatch-range", "0:5"});
  ASSERT_EQ(filtered.result.exitCode, 0) << filtered.result.err;
  const std::string said = "device work of kernels matching 'sc*', dispatches 0 to 5 only";
  for (const char* verb : {"info", "summary"}) {
    auto f = runProcess({gtapBinary(), verb, filtered.file});
    ASSERT_EQ(f.exitCode, 0) << f.err;
    EXPECT_NE(f.out.find("filtered     " + said), std::string::npos) << verb << ":\n" << f.out;
    auto j = runProcess({gtapBinary(), verb, "--format=jsonl", filtered.file});
    ASSERT_EQ(j.exitCode, 0) << j.err;
    EXPECT_EQ(nlohmann::json::parse(j.out.substr(0, j.out.find('\n')))["device_filter"],
              "kernels matching 'sc*', dispatches 0 to 5")
        << verb;
    auto c = runProcess({gtapBinary(), verb, full.file});
    ASSERT_EQ(c.exitCode, 0) << c.err;
    EXPECT_EQ(c.out.find("filtered"), std::string::npos) << verb << ":\n" << c.out;
  }
}

// Bad ranges: a usage error naming the option and the value in `gtap run`
// (the program never starts); set by hand in the environment, one warning
// and every dispatch recorded, and the capture does not claim a filter.
TEST(DeviceFilter, BadRangesAreRefused) {
  for (const std::string bad : {"5:3", "abc", "-1:4", "1:", ":2", "1:2:3", "+1:2", " 1:2", "1", ""}) {
    std::string dir = freshDirectory("filter-bad");
    auto r = runProcess({gtapBinary(), "run", "--sim", "-m", "api,kernels", "--dispatch-range", bad, "-o",
                         dir + "/cap.gtap", "--", workload("ze_pipeline")});
    EXPECT_EQ(r.exitCode, 2) << "'" << bad << "': " << r.err;
    EXPECT_NE(r.err.find("--dispatch-range"), std::string::npos) << r.err;
    if (!bad.empty()) {
      EXPECT_NE(r.err.find(bad), std::string::npos) << r.err;
    }
    EXPECT_TRUE(filesIn(dir).empty()) << "'" << bad << "': the program never ran";
    EXPECT_EQ(r.out, "") << "'" << bad << "'";
  }
  auto base = plain("ze_pipeline");
  for (const std::string bad : {"9:2", "x"}) {
    std::string dir = freshDirectory("filter-bad-env");
    auto r = runProcess({gtapBinary(), "run", "--sim", "-m", "api,kernels", "-o", dir + "/cap.gtap", "--",
                         workload("ze_pipeline")},
                        {{"GTAP_DISPATCH_RANGE", bad}});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_EQ(r.out, base.out);
    size_t warned = 0;
    for (size_t at = r.err.find("GTAP_DISPATCH_RANGE"); at != std::string::npos;
         at = r.err.find("GTAP_DISPATCH_RANGE", at + 1))
      ++warned;
    EXPECT_EQ(warned, 1u) << r.err;
    EXPECT_NE(r.err.find("'" + bad + "'"), std::string::npos) << r.err;
    EXPECT_EQ(dispatches(dir + "/cap.gtap").size(), 9u) << "every dispatch recorded";
    auto summary = runProcess({gtapBinary(), "summary", dir + "/cap.gtap"});
    EXPECT_EQ(summary.out.find("filtered"), std::string::npos) << summary.out;
  }
}

}  // namespace
}  // namespace gtap::test
