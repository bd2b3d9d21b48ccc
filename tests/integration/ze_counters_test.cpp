// Level Zero hardware counters and device metrics on the simulated driver:
// `gtap run --counters` with the Level Zero workloads, each measured launch's
// values checked against what the launch did (its work-groups and work-items
// from its shape, one kernel), on immediate and regular lists; the filters
// narrowing what is measured and recorded; requests naming what the device
// lacks or needing another pass; and device metrics sampled through Sysman
// at the interval asked, whose engine activity adds up to the device time
// gtap measured.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "gtap/readers/capture.h"
#include "gtap/readers/counters.h"
#include "gtap/readers/device_work.h"
#include "counter_helpers.h"
#include "process.h"

namespace gtap::test {
namespace {

std::string simDir() { return GTAP_TEST_SIM_DIR; }

CounterRun capture(const std::string& name, const std::vector<std::string>& options,
                   const std::vector<std::string>& args = {}, const EnvChanges& env = {}) {
  return captureWithCounters("ze-counters-", name, options, args, env);
}

ProcessResult plain(const std::string& name, const std::vector<std::string>& args = {}) {
  std::vector<std::string> argv = {workload(name)};
  argv.insert(argv.end(), args.begin(), args.end());
  return runProcess(argv, {{"ZE_ENABLE_ALT_DRIVERS", simDir() + "/libze_gtap_sim.so"}});
}

uint64_t groupsOf(const readers::DeviceOp& op) {
  return uint64_t{op.groupCount[0]} * op.groupCount[1] * op.groupCount[2];
}
uint64_t itemsPerGroup(const readers::DeviceOp& op) {
  return uint64_t{op.groupSize[0]} * op.groupSize[1] * op.groupSize[2];
}

const std::string kShape = "KernelsExecuted,WorkGroupsExecuted,WorkItemsExecuted,GpuTime";

// Checks every kernel of the capture was measured with the values its shape
// implies; returns how many there were.
size_t checkShapes(const std::string& file) {
  readers::Capture cap(file);
  auto counters = readers::loadCounters(cap);
  EXPECT_EQ(counters.requested, kShape);
  EXPECT_TRUE(counters.notes.empty());
  EXPECT_EQ(counters.sets.size(), 1u);
  if (counters.sets.size() != 1) return 0;
  const auto& set = counters.sets.begin()->second;
  EXPECT_EQ(set.source, "levelZeroMetricQuery");
  EXPECT_EQ(set.group, "ComputeBasic");
  EXPECT_EQ(set.pass, 0u);
  EXPECT_EQ(set.passes, 1u);
  std::vector<std::string> names;
  for (const auto& c : set.counters) {
    names.push_back(c.name);
    EXPECT_EQ(c.type, schema::CounterType::UNSIGNED) << c.name;
    EXPECT_FALSE(c.description.empty()) << c.name;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"KernelsExecuted", "WorkGroupsExecuted", "WorkItemsExecuted", "GpuTime"}));
  EXPECT_EQ(set.counters[3].units, "ns");
  auto work = readers::loadDeviceWork(cap);
  size_t kernels = 0;
  for (const auto& op : work.ops) {
    if (op.kind != schema::DeviceOpKind::KERNEL) {
      EXPECT_EQ(op.counterSet, 0u) << op.name;  // only launches are measured
      continue;
    }
    ++kernels;
    EXPECT_TRUE(op.timed) << op.name;
    EXPECT_EQ(op.counterSet, set.id) << op.name;
    EXPECT_FALSE(op.counterRaw().empty()) << op.name;  // the driver's raw report is kept
    auto v = valuesOf(counters, op);
    EXPECT_EQ(v["KernelsExecuted"], 1u) << op.name;
    EXPECT_EQ(v["WorkGroupsExecuted"], groupsOf(op)) << op.name;
    EXPECT_EQ(v["WorkItemsExecuted"], groupsOf(op) * itemsPerGroup(op)) << op.name;
    // The query brackets the launch: its time holds the launch's (both
    // from the 19.2 MHz device clock, rounded down to whole nanoseconds and
    // ticks: one tick of slack).
    EXPECT_GE(v["GpuTime"] + 53, static_cast<uint64_t>(op.durationNs())) << op.name;
  }
  return kernels;
}

// Immediate lists: each launch is measured on its own (ze_immediate's two
// lists, one asynchronous with events, one synchronous).
TEST(ZeCounters, ImmediateLaunchesCountWhatTheirShapeRan) {
  CounterRun run = capture("ze_immediate", {"--counters", kShape}, {"2", "1000"});
  ASSERT_EQ(run.result.exitCode, 0) << run.result.err;
  EXPECT_EQ(run.result.out, plain("ze_immediate", {"2", "1000"}).out);
  EXPECT_NE(run.result.err.find("run one at a time"), std::string::npos) << run.result.err;
  EXPECT_EQ(checkShapes(run.file), 8u);
}

// A regular list executed three times: each execution is its own op with
// its own values (the query is reset between executions, so nothing adds up).
TEST(ZeCounters, EachExecutionOfARegularListIsMeasuredOnItsOwn) {
  CounterRun run = capture("ze_vector_add", {"--counters", kShape}, {"3", "5000"});
  ASSERT_EQ(run.result.exitCode, 0) << run.result.err;
  EXPECT_EQ(run.result.out, plain("ze_vector_add", {"3", "5000"}).out);
  EXPECT_EQ(checkShapes(run.file), 3u);
  readers::Capture cap(run.file);
  auto work = readers::loadDeviceWork(cap);
  std::set<uint64_t> lists;
  for (const auto& op : work.ops)
    if (op.kind == schema::DeviceOpKind::KERNEL) {
      lists.insert(op.list);
      EXPECT_EQ(groupsOf(op), 20u);  // 5000 elements in groups of 256
    }
  EXPECT_EQ(lists.size(), 1u);
}

// --kernel-filter and --dispatch-range: dispatches left out carry no
// counters (and are not recorded); the others are measured as usual.
TEST(ZeCounters, FiltersNarrowWhatIsMeasured) {
  {
    CounterRun run = capture("ze_immediate", {"--counters", kShape, "--kernel-filter", "scale"}, {"2", "1000"});
    ASSERT_EQ(run.result.exitCode, 0) << run.result.err;
    readers::Capture cap(run.file);
    auto counters = readers::loadCounters(cap);
    auto work = readers::loadDeviceWork(cap);
    size_t measured = 0;
    for (const auto& op : work.ops) {
      if (op.kind != schema::DeviceOpKind::KERNEL) continue;
      EXPECT_EQ(op.name, "scale");
      EXPECT_NE(op.counterSet, 0u);
      EXPECT_EQ(valuesOf(counters, op)["KernelsExecuted"], 1u);
      ++measured;
    }
    EXPECT_EQ(measured, 4u);
  }
  {
    CounterRun run = capture("ze_immediate", {"--counters", kShape, "--dispatch-range", "2:4"}, {"2", "1000"});
    ASSERT_EQ(run.result.exitCode, 0) << run.result.err;
    readers::Capture cap(run.file);
    auto work = readers::loadDeviceWork(cap);
    std::vector<std::string> names;
    for (const auto& op : work.ops)
      if (op.kind == schema::DeviceOpKind::KERNEL) {
        EXPECT_NE(op.counterSet, 0u);
        names.push_back(std::string(op.name));
      }
    // Per round: scale and add on the asynchronous list, then on the synchronous one.
    EXPECT_EQ(names, (std::vector<std::string>{"scale", "add", "scale"}));
  }
  {
    // A regular list's launches are numbered at each execution: the second
    // of three executions only.
    CounterRun run = capture("ze_vector_add", {"--counters", kShape, "--dispatch-range", "1:1"}, {"3", "5000"});
    ASSERT_EQ(run.result.exitCode, 0) << run.result.err;
    EXPECT_EQ(checkShapes(run.file), 1u);
  }
}

// --queue-filter: ze_immediate's second immediate list (queue number 1, the
// synchronous one) only, and no regular list executed on another queue;
// --device-filter: a device the process does not have
// leaves everything unrecorded.
TEST(ZeCounters, QueueAndDeviceFiltersLeaveOtherWorkUnrecorded) {
  {
    CounterRun run = capture("ze_immediate", {"--counters", kShape, "--queue-filter", "1"}, {"2", "1000"});
    ASSERT_EQ(run.result.exitCode, 0) << run.result.err;
    EXPECT_EQ(run.result.out, plain("ze_immediate", {"2", "1000"}).out);
    readers::Capture cap(run.file);
    auto work = readers::loadDeviceWork(cap);
    std::set<uint64_t> queues;
    size_t kernels = 0;
    for (const auto& op : work.ops) {
      queues.insert(op.queue);
      if (op.kind == schema::DeviceOpKind::KERNEL) {
        ++kernels;
        EXPECT_NE(op.counterSet, 0u);
      }
    }
    ASSERT_EQ(queues.size(), 1u);
    EXPECT_EQ(property(work.objects.at(*queues.begin()), "number"), "1");
    EXPECT_EQ(kernels, 4u);
  }
  {
    // A regular list counts for the queue executing it: ze_vector_add's one
    // queue is number 0, so queue 1 alone records none of its work.
    CounterRun run = capture("ze_vector_add", {"--counters", kShape, "--queue-filter", "1"}, {"2", "1000"});
    ASSERT_EQ(run.result.exitCode, 0) << run.result.err;
    EXPECT_EQ(run.result.out, plain("ze_vector_add", {"2", "1000"}).out);
    readers::Capture cap(run.file);
    EXPECT_TRUE(readers::loadDeviceWork(cap).ops.empty());
  }
  {
    CounterRun run = capture("ze_immediate", {"-m", "kernels", "--device-filter", "1"}, {"1", "1000"});
    ASSERT_EQ(run.result.exitCode, 0) << run.result.err;
    readers::Capture cap(run.file);
    EXPECT_TRUE(readers::loadDeviceWork(cap).ops.empty());
  }
  {
    CounterRun run = capture("ze_immediate", {"--counters", kShape, "--device-filter", "0"}, {"1", "1000"});
    ASSERT_EQ(run.result.exitCode, 0) << run.result.err;
    EXPECT_EQ(checkShapes(run.file), 4u);
  }
}

TEST(ZeCounters, ACounterNoDeviceOffersIsRefusedUnlessOptional) {
  CounterRun refused = capture("ze_immediate", {"--counters", "Nope"}, {"1", "1000"});
  EXPECT_EQ(refused.result.exitCode, 2);
  EXPECT_NE(refused.result.err.find("'Nope' not offered by any device"), std::string::npos) << refused.result.err;
  EXPECT_EQ(refused.result.out.find("checksum"), std::string::npos) << "the program did not run";

  CounterRun optional = capture("ze_immediate", {"--counters", "Nope,GpuTime", "--counters-optional"}, {"1", "1000"});
  ASSERT_EQ(optional.result.exitCode, 0) << optional.result.err;
  EXPECT_EQ(optional.result.out, plain("ze_immediate", {"1", "1000"}).out);
  readers::Capture cap(optional.file);
  auto counters = readers::loadCounters(cap);
  EXPECT_EQ(notesFor(counters, "Nope"), std::vector<std::string>{"not offered by the device"});
  size_t measured = 0;
  for (const auto& op : readers::loadDeviceWork(cap).ops)
    if (op.kind == schema::DeviceOpKind::KERNEL) {
      EXPECT_EQ(valuesOf(counters, op).count("GpuTime"), 1u);
      ++measured;
    }
  EXPECT_EQ(measured, 4u);

  // GTAP_COUNTERS set by hand (the launcher did not check): said once, the
  // program runs unmeasured.
  std::string dir = freshDirectory("ze-counters-by-hand");
  auto byHand = runProcess({gtapBinary(), "run", "--sim", "-o", dir + "/cap.gtap", "--", workload("ze_immediate"),
                            "1", "1000"},
                           {{"GTAP_COUNTERS", "Nope"}});
  ASSERT_EQ(byHand.exitCode, 0) << byHand.err;
  EXPECT_NE(byHand.err.find("no Level Zero device measures any of Nope"), std::string::npos) << byHand.err;
  readers::Capture cap2(dir + "/cap.gtap");
  for (const auto& op : readers::loadDeviceWork(cap2).ops) EXPECT_EQ(op.counterSet, 0u);
}

// One metric group per pass: two groups are two passes. The simulated
// device's ComputeTiming (time, clocks, frequency) and ComputeWork (kernels,
// work-groups, work-items) are both measured by queries; the first run
// collects ComputeTiming and notes ComputeWork's counters as needing another
// pass, which --counter-pass 1 collects.
TEST(ZeCounters, TwoGroupsNeedTwoPasses) {
  const std::string request = "ComputeTiming,ComputeWork";
  CounterRun first = capture("ze_immediate", {"--counters", request}, {"1", "1000"});
  ASSERT_EQ(first.result.exitCode, 0) << first.result.err;
  EXPECT_NE(first.result.err.find("needs 2 passes"), std::string::npos) << first.result.err;
  readers::Capture cap(first.file);
  auto counters = readers::loadCounters(cap);
  ASSERT_EQ(counters.sets.size(), 1u);
  const auto& set = counters.sets.begin()->second;
  EXPECT_EQ(set.group, "ComputeTiming");
  EXPECT_EQ(set.pass, 0u);
  EXPECT_EQ(set.passes, 2u);
  for (const char* name : {"KernelsExecuted", "WorkGroupsExecuted", "WorkItemsExecuted"})
    EXPECT_EQ(notesFor(counters, name), std::vector<std::string>{"needs another pass (2 of 2)"}) << name;
  size_t measured = 0;
  for (const auto& op : readers::loadDeviceWork(cap).ops)
    if (op.kind == schema::DeviceOpKind::KERNEL) {
      auto v = valuesOf(counters, op);
      EXPECT_GE(v["GpuTime"] + 53, static_cast<uint64_t>(op.durationNs()));
      EXPECT_EQ(v.count("KernelsExecuted"), 0u);
      ++measured;
    }
  EXPECT_EQ(measured, 4u);

  CounterRun second = capture("ze_immediate", {"--counters", request, "--counter-pass", "1"}, {"1", "1000"});
  ASSERT_EQ(second.result.exitCode, 0) << second.result.err;
  readers::Capture cap2(second.file);
  auto counters2 = readers::loadCounters(cap2);
  ASSERT_EQ(counters2.sets.size(), 1u);
  const auto& set2 = counters2.sets.begin()->second;
  EXPECT_EQ(set2.group, "ComputeWork");
  EXPECT_EQ(set2.pass, 1u);
  EXPECT_EQ(set2.passes, 2u);
  EXPECT_EQ(notesFor(counters2, "GpuTime"), std::vector<std::string>{"needs another pass (1 of 2)"});
  measured = 0;
  for (const auto& op : readers::loadDeviceWork(cap2).ops)
    if (op.kind == schema::DeviceOpKind::KERNEL) {
      auto v = valuesOf(counters2, op);
      EXPECT_EQ(v["KernelsExecuted"], 1u);
      EXPECT_EQ(v["WorkGroupsExecuted"], groupsOf(op));
      EXPECT_EQ(v["WorkItemsExecuted"], groupsOf(op) * itemsPerGroup(op));
      ++measured;
    }
  EXPECT_EQ(measured, 4u);
}

// Device metrics every 5 ms through Sysman while ze_vector_add keeps the
// device busy.
TEST(ZeCounters, DeviceMetricsAreSampledAtTheIntervalAndFollowTheDevice) {
  constexpr int64_t kIntervalNs = 5'000'000;
  CounterRun run = capture("ze_vector_add", {"-m", "kernels", "--metrics-interval", "5"}, {"150", "100000"});
  ASSERT_EQ(run.result.exitCode, 0) << run.result.err;
  readers::Capture cap(run.file);
  auto counters = readers::loadCounters(cap);
  ASSERT_FALSE(counters.metrics.empty());
  // The chunks of the one device, in file order, joined.
  std::vector<int64_t> times;
  std::vector<double> active;
  for (const auto& m : counters.metrics) {
    EXPECT_EQ(m.source, "sysman");
    EXPECT_EQ(m.intervalNs, uint64_t(kIntervalNs));
    EXPECT_TRUE(m.note.empty()) << m.note;
    size_t compute = m.metrics.size(), frequency = m.metrics.size();
    for (size_t i = 0; i < m.metrics.size(); ++i) {
      if (m.metrics[i].name == "engine compute active") compute = i;
      if (m.metrics[i].name == "frequency gpu") frequency = i;
    }
    ASSERT_LT(compute, m.metrics.size());
    ASSERT_LT(frequency, m.metrics.size());
    EXPECT_TRUE(m.metrics[compute].cumulative);
    EXPECT_EQ(m.metrics[compute].units, "ns");
    EXPECT_FALSE(m.metrics[frequency].cumulative);
    for (size_t s = 0; s < m.times.size(); ++s) {
      times.push_back(m.times[s]);
      active.push_back(m.at(s, compute));
      EXPECT_DOUBLE_EQ(m.at(s, frequency), 19.2);  // the simulated clock's constant rate
    }
  }
  ASSERT_GE(times.size(), 3u);
  ASSERT_TRUE(std::is_sorted(times.begin(), times.end()));
  // The first sample is taken when the program finds the device, the last at
  // exit; those between are due every interval after the first (a busy
  // machine makes them later, never earlier), so the count is bounded by
  // the sampled span over the interval, and a loose lower bound says the
  // thread did sample all along.
  int64_t span = times.back() - times.front();
  double expected = double(span) / kIntervalNs;
  EXPECT_LE(double(times.size()), expected + 2) << span;
  EXPECT_GE(double(times.size()), expected / 4) << span;
  // The thread's k-th sample is due k intervals after the first (one that
  // comes late does not move the ones after it); 1 ms of slack for the
  // clock reads around it.
  for (size_t k = 1; k + 1 < times.size(); ++k)
    EXPECT_GE(times[k] - times[0], int64_t(k) * kIntervalNs - 1'000'000) << "sample " << k;

  // The device's busy time as gtap measured it: every op's device time (the
  // queue is in order, nothing overlaps).
  auto work = readers::loadDeviceWork(cap);
  int64_t busy = 0;
  size_t ops = 0;
  for (const auto& op : work.ops) {
    ASSERT_TRUE(op.timed) << op.name;
    busy += op.durationNs();
    ++ops;
  }
  double engine = active.back() - active.front();
  // The engine's active time runs from when a command starts to when its
  // signal is written, in whole microseconds; the ops' device times from
  // their kernel timestamps: per command the engine counts a little more
  // (its signal, gtap's timestamp event) and loses under a microsecond to
  // rounding. Over a run whose work is long against that, the two agree
  // within 25% plus a few microseconds per op.
  EXPECT_NEAR(engine, double(busy), 0.05 * double(busy) + 2000.0 * double(ops))
      << "engine " << engine << " ns, ops " << busy << " ns over " << ops << " ops";
}

// A device without Sysman (the program set ZES_ENABLE_SYSMAN=0, which gtap
// leaves as it is): one record with why, no samples, one line on stderr;
// the program runs as ever.
TEST(ZeCounters, ADeviceWithoutSysmanGetsANoteInsteadOfSamples) {
  CounterRun run = capture("ze_vector_add", {"-m", "kernels", "--metrics-interval", "5"}, {"2", "1000"},
                           {{"ZES_ENABLE_SYSMAN", "0"}});
  ASSERT_EQ(run.result.exitCode, 0) << run.result.err;
  EXPECT_EQ(run.result.out, plain("ze_vector_add", {"2", "1000"}).out);
  size_t said = 0;
  for (size_t at = run.result.err.find("is not sampled"); at != std::string::npos;
       at = run.result.err.find("is not sampled", at + 1))
    ++said;
  EXPECT_EQ(said, 1u) << run.result.err;
  readers::Capture cap(run.file);
  auto counters = readers::loadCounters(cap);
  ASSERT_EQ(counters.metrics.size(), 1u);
  EXPECT_NE(counters.metrics[0].note.find("ZES_ENABLE_SYSMAN"), std::string::npos) << counters.metrics[0].note;
  EXPECT_TRUE(counters.metrics[0].times.empty());
  EXPECT_TRUE(counters.metrics[0].metrics.empty());
}

}  // namespace
}  // namespace gtap::test
