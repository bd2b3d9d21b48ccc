// gtap bench --counters: counters collected while replaying a capture on the
// simulated devices, one replay per pass, joined per dispatch. The values
// are checked against what each dispatch did (its launch shape, as the
// capture's own kernel records hold it), and a list that needs several
// passes joins to what each pass alone gives.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "gtap/readers/capture.h"
#include "gtap/readers/device_work.h"
#include "replay_helpers.h"

namespace gtap::test {
namespace {

struct Launch {
  std::string kernel;
  uint64_t groups = 0, items = 0;
};

// The kernel dispatches the capture recorded, in submission order.
std::vector<Launch> launches(const std::string& file) {
  readers::Capture capture(file);
  readers::DeviceWork work = readers::loadDeviceWork(capture);
  std::vector<const readers::DeviceOp*> ops;
  for (const auto& op : work.ops)
    if (op.kind == schema::DeviceOpKind::KERNEL) ops.push_back(&op);
  std::stable_sort(ops.begin(), ops.end(), [](auto* a, auto* b) {
    return (a->submitNs ? a->submitNs : a->appendNs) < (b->submitNs ? b->submitNs : b->appendNs);
  });
  std::vector<Launch> out;
  for (const auto* op : ops) {
    Launch l{std::string(op->name)};
    l.groups = uint64_t{op->groupCount[0]} * op->groupCount[1] * op->groupCount[2];
    l.items = l.groups * op->groupSize[0] * op->groupSize[1] * op->groupSize[2];
    out.push_back(l);
  }
  return out;
}

nlohmann::json benchCounters(const std::string& file, const std::string& list) {
  auto r = gtap({"bench", "--sim", "--iterations", "1", "--format", "json", "--counters", list, file});
  EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
  if (r.exitCode != 0) return {};
  return nlohmann::json::parse(r.out)["counters"];
}

size_t column(const nlohmann::json& counters, const std::string& name) {
  const auto& names = counters["names"];
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return i;
  ADD_FAILURE() << "no column " << name << " in " << names.dump();
  return 0;
}

TEST(BenchCounters, LevelZeroReplayCountsWhatEachDispatchDid) {
  Captured c = captureWorkload("bench-counters-", "ze_pipeline", {}, "api,kernels,replay", {}, "");
  ASSERT_EQ(c.run.exitCode, 0) << c.run.err;
  std::vector<Launch> expected = launches(c.file);
  ASSERT_FALSE(expected.empty());
  nlohmann::json counters = benchCounters(c.file, "WorkGroupsExecuted,WorkItemsExecuted,KernelsExecuted");
  ASSERT_FALSE(counters.is_null());
  EXPECT_EQ(counters["passes"], 1);
  const auto& dispatches = counters["dispatches"];
  ASSERT_EQ(dispatches.size(), expected.size()) << counters.dump();
  size_t groups = column(counters, "WorkGroupsExecuted"), items = column(counters, "WorkItemsExecuted"),
         kernels = column(counters, "KernelsExecuted");
  for (size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE("dispatch " + std::to_string(i));
    EXPECT_EQ(dispatches[i]["kernel"], expected[i].kernel);
    EXPECT_EQ(dispatches[i]["values"][groups].get<double>(), static_cast<double>(expected[i].groups));
    EXPECT_EQ(dispatches[i]["values"][items].get<double>(), static_cast<double>(expected[i].items));
    EXPECT_EQ(dispatches[i]["values"][kernels].get<double>(), 1.0);
  }
}

// Two query groups of one domain need a pass each: joined, each dispatch has
// both groups' counters, and each equals what its group's pass alone gives.
TEST(BenchCounters, LevelZeroGroupsOfOneDomainJoinToWhatEachPassGives) {
  Captured c = captureWorkload("bench-counters-", "ze_pipeline", {}, "api,kernels,replay", {}, "-two");
  ASSERT_EQ(c.run.exitCode, 0) << c.run.err;
  std::vector<Launch> expected = launches(c.file);
  nlohmann::json joined = benchCounters(c.file, "ComputeWork,ComputeTiming");
  nlohmann::json work = benchCounters(c.file, "ComputeWork");
  ASSERT_FALSE(joined.is_null());
  ASSERT_FALSE(work.is_null());
  EXPECT_EQ(joined["passes"], 2);
  EXPECT_EQ(work["passes"], 1);
  ASSERT_EQ(joined["dispatches"].size(), expected.size());
  ASSERT_EQ(work["dispatches"].size(), expected.size());
  size_t items = column(joined, "WorkItemsExecuted"), itemsAlone = column(work, "WorkItemsExecuted"),
         clocks = column(joined, "GpuCoreClocks");
  for (size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE("dispatch " + std::to_string(i));
    const auto& d = joined["dispatches"][i];
    EXPECT_EQ(d["values"][items], work["dispatches"][i]["values"][itemsAlone]);
    EXPECT_EQ(d["values"][items].get<double>(), static_cast<double>(expected[i].items));
    EXPECT_GT(d["values"][clocks].get<double>(), 0);  // the second pass's
  }
}

// On HSA the simulated GRBM block counts two events at a time: three GRBM
// events and SQ_WAVES take two passes. Joined, each dispatch has every
// counter; the deterministic one (waves) equals what a single pass gives.
TEST(BenchCounters, HsaListOfTwoPassesJoinsToWhatOnePassGives) {
  Captured c = captureWorkload("bench-counters-", "hsa_two_queues", {}, "api,kernels,replay", {}, "");
  ASSERT_EQ(c.run.exitCode, 0) << c.run.err;
  std::vector<Launch> expected = launches(c.file);
  ASSERT_FALSE(expected.empty());
  nlohmann::json joined = benchCounters(c.file, "SQ_WAVES,GRBM_COUNT,GRBM_GUI_ACTIVE,GRBM_CP_BUSY");
  nlohmann::json alone = benchCounters(c.file, "SQ_WAVES");
  ASSERT_FALSE(joined.is_null());
  ASSERT_FALSE(alone.is_null());
  EXPECT_EQ(joined["passes"], 2);
  EXPECT_EQ(alone["passes"], 1);
  ASSERT_EQ(joined["dispatches"].size(), expected.size()) << joined.dump();
  ASSERT_EQ(alone["dispatches"].size(), expected.size()) << alone.dump();
  size_t waves = column(joined, "SQ_WAVES"), wavesAlone = column(alone, "SQ_WAVES");
  for (size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE("dispatch " + std::to_string(i));
    const auto& d = joined["dispatches"][i];
    EXPECT_EQ(d["kernel"], expected[i].kernel);
    EXPECT_EQ(alone["dispatches"][i]["kernel"], expected[i].kernel);
    // Every counter of both passes is there.
    for (size_t k = 0; k < d["values"].size(); ++k) EXPECT_FALSE(d["values"][k].is_null()) << joined["names"][k];
    EXPECT_EQ(d["values"][waves], alone["dispatches"][i]["values"][wavesAlone]);
    EXPECT_GT(d["values"][waves].get<double>(), 0);
  }
}

TEST(BenchCounters, ACounterNoDeviceOffersIsRefused) {
  Captured c = captureWorkload("bench-counters-", "ze_vector_add", {}, "replay", {}, "");
  ASSERT_EQ(c.run.exitCode, 0) << c.run.err;
  auto r = gtap({"bench", "--sim", "--iterations", "1", "--counters", "NoSuchCounter", c.file});
  EXPECT_EQ(r.exitCode, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("NoSuchCounter"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace gtap::test
