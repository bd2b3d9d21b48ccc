// HSA hardware counters on the simulated runtime: `gtap run --counters` with
// the HSA workloads, each measured dispatch's values checked against what the
// dispatch did (its waves from the launch, its busy time from its device
// time), the filters narrowing what is measured, requests that need another
// pass or name what the device lacks, `gtap counters --list`, and device
// metrics (none on the simulated agent).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "gtap/readers/capture.h"
#include "gtap/readers/counters.h"
#include "gtap/readers/device_work.h"
#include "counter_helpers.h"
#include "process.h"

namespace gtap::test {
namespace {

std::string simHsaDir() { return std::string(GTAP_TEST_SIM_DIR) + "/hsa"; }

// The simulated agent's wavefront size (HSA_AGENT_INFO_WAVEFRONT_SIZE) and
// device clock (tests/sim/README.md, "The clocks"): 100 MHz.
constexpr uint64_t kWavefront = 64;
constexpr int64_t kNsPerDeviceTick = 10;

CounterRun capture(const std::string& name, const std::vector<std::string>& options,
                   const std::vector<std::string>& args = {}) {
  return captureWithCounters("hsa-counters-", name, options, args);
}

ProcessResult plain(const std::string& name, const std::vector<std::string>& args = {}) {
  std::vector<std::string> argv = {workload(name)};
  argv.insert(argv.end(), args.begin(), args.end());
  return runProcess(argv, {{"LD_LIBRARY_PATH", simHsaDir()}});
}

// Waves a dispatch launches: per work-group ceil(work-items / wavefront),
// the partial groups at the grid's far edge with their own size.
uint64_t wavesOf(const readers::DeviceOp& op) {
  uint64_t waves = 0;
  for (int kind = 0; kind < 8; ++kind) {
    uint64_t groups = 1, items = 1;
    for (int d = 0; d < 3; ++d) {
      uint64_t grid = d < static_cast<int>(op.gridSize.size()) ? op.gridSize[d] : 1;
      uint64_t wg = std::max<uint32_t>(op.groupSize[d], 1);
      bool partial = (kind >> d) & 1;
      groups *= partial ? (grid % wg ? 1 : 0) : grid / wg;
      items *= partial ? grid % wg : wg;
    }
    waves += groups * ((items + kWavefront - 1) / kWavefront);
  }
  return waves;
}

TEST(HsaCounters, EachDispatchCountsItsOwnWavesAndBusyTime) {
  CounterRun run = capture("hsa_pipeline", {"--counters", "SQ_WAVES,GRBM_COUNT,GRBM_GUI_ACTIVE"});
  ASSERT_EQ(run.result.exitCode, 0) << run.result.err;
  EXPECT_NE(run.result.err.find("measured dispatch runs alone, one at a time"), std::string::npos) << run.result.err;
  auto base = plain("hsa_pipeline");
  ASSERT_EQ(base.exitCode, 0) << base.err;
  EXPECT_EQ(run.result.out, base.out);  // the program's results are unchanged

  readers::Capture cap(run.file);
  auto counters = readers::loadCounters(cap);
  EXPECT_TRUE(counters.problems.empty());
  EXPECT_EQ(counters.requested, "SQ_WAVES,GRBM_COUNT,GRBM_GUI_ACTIVE");
  ASSERT_EQ(counters.sets.size(), 1u);
  const auto& set = counters.sets.begin()->second;
  EXPECT_EQ(set.source, "hsaAqlProfile");
  EXPECT_EQ(set.passes, 1u);
  std::map<std::string, std::string> blocks;
  for (const auto& c : set.counters) blocks[c.name] = c.block;
  EXPECT_EQ(blocks, (std::map<std::string, std::string>{
                        {"SQ_WAVES", "SQ"}, {"GRBM_COUNT", "GRBM"}, {"GRBM_GUI_ACTIVE", "GRBM"}}));
  EXPECT_TRUE(counters.notes.empty());

  auto work = readers::loadDeviceWork(cap);
  size_t kernels = 0;
  for (const auto& op : work.ops) {
    if (op.kind != schema::DeviceOpKind::KERNEL) {
      EXPECT_EQ(op.counterSet, 0u) << "only dispatches are measured";
      continue;
    }
    ++kernels;
    ASSERT_EQ(op.counterSet, set.id) << op.name;
    ASSERT_TRUE(op.timed) << op.name;
    auto v = valuesOf(counters, op);
    EXPECT_EQ(v["SQ_WAVES"], wavesOf(op)) << op.name;
    EXPECT_EQ(v["SQ_WAVES"], 512u) << op.name;  // 32768 work-items in groups of 128: 256 groups of 2 waves
    // GRBM_GUI_ACTIVE: the ticks the dispatch ran, within its device time;
    // GRBM_COUNT: from the start packet to the stop packet, around it.
    EXPECT_GT(v["GRBM_GUI_ACTIVE"], 0u) << op.name;
    EXPECT_GE(v["GRBM_COUNT"], v["GRBM_GUI_ACTIVE"]) << op.name;
    const int64_t busyNs = static_cast<int64_t>(v["GRBM_GUI_ACTIVE"]) * kNsPerDeviceTick;
    const int64_t countNs = static_cast<int64_t>(v["GRBM_COUNT"]) * kNsPerDeviceTick;
    EXPECT_LE(busyNs, op.durationNs() + kNsPerDeviceTick) << op.name;
    EXPECT_GE(countNs + kNsPerDeviceTick, op.durationNs()) << op.name;
    EXPECT_FALSE(op.counterRaw().empty()) << "the output buffer is kept as raw data";
  }
  EXPECT_EQ(kernels, 9u);
}

// The IREE HAL front end over HSA: its dispatches become HSA packets, which
// are measured there; the HAL's own records of them (recordedBy ireeHal,
// untimed) carry no counters, and the filters apply to the HAL's export
// names as to any kernel's.
TEST(HsaCounters, IreeHalDispatchesAreMeasuredAsTheHsaPacketsTheyBecome) {
  for (bool filtered : {false, true}) {
    SCOPED_TRACE(filtered ? "--kernel-filter scale" : "every kernel");
    std::vector<std::string> options = {"--counters", "SQ_WAVES"};
    if (filtered) options.insert(options.end(), {"--kernel-filter", "scale"});
    CounterRun run = capture("hal_on_hsa", options);
    ASSERT_EQ(run.result.exitCode, 0) << run.result.err;
    readers::Capture cap(run.file);
    auto counters = readers::loadCounters(cap);
    auto work = readers::loadDeviceWork(cap);
    size_t measured = 0, hal = 0;
    for (const auto& op : work.ops) {
      if (op.kind != schema::DeviceOpKind::KERNEL) continue;
      if (op.recordedBy == schema::Api::IREE_HAL) {
        ++hal;
        EXPECT_EQ(op.counterSet, 0u) << "the HAL's record of " << op.name;
        continue;
      }
      if (filtered) {
        EXPECT_EQ(op.name, "scale");
      }
      ASSERT_NE(op.counterSet, 0u) << op.name;
      EXPECT_EQ(valuesOf(counters, op)["SQ_WAVES"], wavesOf(op)) << op.name;
      ++measured;
    }
    EXPECT_GT(hal, 0u);
    EXPECT_GT(measured, 0u);
  }
}

// The kernel filter and the dispatch range leave dispatches unrecorded and
// unmeasured; the queue filter does the same for a whole queue.
TEST(HsaCounters, FiltersNarrowWhatIsMeasured) {
  {
    CounterRun run = capture("hsa_pipeline", {"--counters", "SQ_WAVES", "--kernel-filter", "add"});
    ASSERT_EQ(run.result.exitCode, 0) << run.result.err;
    readers::Capture cap(run.file);
    auto work = readers::loadDeviceWork(cap);
    size_t measured = 0;
    for (const auto& op : work.ops) {
      if (op.kind != schema::DeviceOpKind::KERNEL) continue;
      EXPECT_EQ(op.name, "add");
      EXPECT_NE(op.counterSet, 0u);
      ++measured;
    }
    EXPECT_EQ(measured, 3u);
  }
  {
    CounterRun run = capture("hsa_pipeline", {"--counters", "SQ_WAVES", "--dispatch-range", "2:4"});
    ASSERT_EQ(run.result.exitCode, 0) << run.result.err;
    readers::Capture cap(run.file);
    auto work = readers::loadDeviceWork(cap);
    // In the order they ran (the file's order is the order they were read).
    std::vector<std::pair<int64_t, std::string>> ran;
    for (const auto& op : work.ops)
      if (op.kind == schema::DeviceOpKind::KERNEL && op.counterSet) ran.emplace_back(op.startNs, std::string(op.name));
    std::sort(ran.begin(), ran.end());
    std::vector<std::string> names;
    for (const auto& [start, name] : ran) names.push_back(name);
    EXPECT_EQ(names, (std::vector<std::string>{"reduce_partial", "scale", "add"}));
  }
  {
    CounterRun run = capture("hsa_two_queues", {"--counters", "SQ_WAVES", "--queue-filter", "1"});
    ASSERT_EQ(run.result.exitCode, 0) << run.result.err;
    auto base = plain("hsa_two_queues");
    EXPECT_EQ(run.result.out, base.out);
    readers::Capture cap(run.file);
    auto work = readers::loadDeviceWork(cap);
    std::set<uint64_t> queues;
    size_t kernels = 0;
    for (const auto& op : work.ops) {
      if (op.kind == schema::DeviceOpKind::COPY) continue;
      queues.insert(op.queue);
      if (op.kind == schema::DeviceOpKind::KERNEL) {
        ++kernels;
        EXPECT_NE(op.counterSet, 0u);
        EXPECT_EQ(op.name, "combine");  // queue 2's only kernel (its second queue, number 1)
      }
    }
    ASSERT_EQ(queues.size(), 1u);
    EXPECT_EQ(property(work.objects.at(*queues.begin()), "number"), "1");
    EXPECT_EQ(kernels, 3u);
  }
}

// The device filter numbers the GPU agents from 0 in the runtime's order: the
// simulated runtime has one, so filtering for another leaves its work
// unrecorded (dispatches, barriers and copies alike), and filtering for it
// keeps every dispatch measured.
TEST(HsaCounters, TheDeviceFilterSelectsAgents) {
  CounterRun other = capture("hsa_pipeline", {"-m", "kernels", "--device-filter", "1"});
  ASSERT_EQ(other.result.exitCode, 0) << other.result.err;
  EXPECT_EQ(other.result.out, plain("hsa_pipeline").out);
  {
    readers::Capture cap(other.file);
    auto work = readers::loadDeviceWork(cap);
    EXPECT_TRUE(work.ops.empty()) << work.ops.size() << " device operations, the first " << work.ops[0].name;
  }
  CounterRun agent = capture("hsa_pipeline", {"--counters", "SQ_WAVES", "--device-filter", "0"});
  ASSERT_EQ(agent.result.exitCode, 0) << agent.result.err;
  readers::Capture cap(agent.file);
  auto work = readers::loadDeviceWork(cap);
  size_t measured = 0;
  for (const auto& op : work.ops)
    if (op.kind == schema::DeviceOpKind::KERNEL && op.counterSet) ++measured;
  EXPECT_EQ(measured, 9u);
}

TEST(HsaCounters, ACounterNoDeviceOffersIsRefusedUnlessOptional) {
  CounterRun refused = capture("hsa_pipeline", {"--counters", "SQ_WAVES,NO_SUCH_COUNTER"});
  EXPECT_EQ(refused.result.exitCode, 2);
  EXPECT_NE(refused.result.err.find("'NO_SUCH_COUNTER' not offered by any device"), std::string::npos)
      << refused.result.err;
  EXPECT_EQ(refused.result.out.find("checksum"), std::string::npos) << "the program did not run";

  CounterRun optional = capture("hsa_pipeline", {"--counters", "SQ_WAVES,NO_SUCH_COUNTER", "--counters-optional"});
  ASSERT_EQ(optional.result.exitCode, 0) << optional.result.err;
  EXPECT_EQ(optional.result.out, plain("hsa_pipeline").out);
  readers::Capture cap(optional.file);
  auto counters = readers::loadCounters(cap);
  EXPECT_EQ(notesFor(counters, "NO_SUCH_COUNTER"), std::vector<std::string>{"not offered by the device"});
  auto work = readers::loadDeviceWork(cap);
  for (const auto& op : work.ops) {
    if (op.kind == schema::DeviceOpKind::KERNEL) {
      EXPECT_EQ(valuesOf(counters, op).count("SQ_WAVES"), 1u);
    }
  }
}

// GRBM counts two events at once: a third needs another pass, which
// --counter-pass 1 collects.
TEST(HsaCounters, MoreThanABlockCountsAtOnceNeedsAnotherPass) {
  const std::string request = "GRBM_COUNT,GRBM_GUI_ACTIVE,GRBM_CP_BUSY";
  CounterRun first = capture("hsa_pipeline", {"--counters", request});
  ASSERT_EQ(first.result.exitCode, 0) << first.result.err;
  EXPECT_NE(first.result.err.find("needs 2 passes"), std::string::npos) << first.result.err;
  readers::Capture cap(first.file);
  auto counters = readers::loadCounters(cap);
  ASSERT_EQ(counters.sets.size(), 1u);
  const auto& set = counters.sets.begin()->second;
  EXPECT_EQ(set.pass, 0u);
  EXPECT_EQ(set.passes, 2u);
  ASSERT_EQ(set.counters.size(), 2u);
  EXPECT_EQ(set.counters[0].name, "GRBM_COUNT");
  EXPECT_EQ(set.counters[1].name, "GRBM_GUI_ACTIVE");
  EXPECT_EQ(notesFor(counters, "GRBM_CP_BUSY"), std::vector<std::string>{"needs another pass (2 of 2)"});

  CounterRun second = capture("hsa_pipeline", {"--counters", request, "--counter-pass", "1"});
  ASSERT_EQ(second.result.exitCode, 0) << second.result.err;
  readers::Capture cap2(second.file);
  auto counters2 = readers::loadCounters(cap2);
  ASSERT_EQ(counters2.sets.size(), 1u);
  const auto& set2 = counters2.sets.begin()->second;
  EXPECT_EQ(set2.pass, 1u);
  ASSERT_EQ(set2.counters.size(), 1u);
  EXPECT_EQ(set2.counters[0].name, "GRBM_CP_BUSY");
  EXPECT_EQ(notesFor(counters2, "GRBM_COUNT"), std::vector<std::string>{"needs another pass (1 of 2)"});
  auto work = readers::loadDeviceWork(cap2);
  size_t measured = 0;
  for (const auto& op : work.ops) {
    if (op.kind != schema::DeviceOpKind::KERNEL) continue;
    auto v = valuesOf(counters2, op);
    // The packet processor was busy at least while the dispatch ran.
    EXPECT_GE((v["GRBM_CP_BUSY"] + 1) * kNsPerDeviceTick, static_cast<uint64_t>(op.durationNs())) << op.name;
    ++measured;
  }
  EXPECT_EQ(measured, 9u);
}

TEST(HsaCounters, ListShowsTheSimulatedAgentsCounters) {
  auto list = runProcess({gtapBinary(), "counters", "--list", "--sim", "--format=csv"});
  ASSERT_EQ(list.exitCode, 0) << list.err;
  std::vector<std::string> rows;
  std::istringstream in(list.out);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("hsa,", 0) == 0) rows.push_back(line);
  EXPECT_EQ(rows.size(), 4u) << list.out;
  std::string all;
  for (const auto& row : rows) all += row + "\n";
  for (const char* want : {"GRBM,per-dispatch,\"block 3, 2 per pass\",GRBM_COUNT",
                           "GRBM,per-dispatch,\"block 3, 2 per pass\",GRBM_GUI_ACTIVE",
                           "GRBM,per-dispatch,\"block 3, 2 per pass\",GRBM_CP_BUSY",
                           "SQ,per-dispatch,\"block 6, 8 per pass\",SQ_WAVES"})
    EXPECT_NE(all.find(want), std::string::npos) << want << "\n" << list.out;
  // Counters gtap knows that the simulated agent does not count are not listed.
  EXPECT_EQ(list.out.find("SQ_INSTS_VALU"), std::string::npos);
}

TEST(HsaCounters, NoDeviceMetricsOnTheSimulatedAgent) {
  CounterRun run = capture("hsa_pipeline", {"--metrics-interval", "5"});
  ASSERT_EQ(run.result.exitCode, 0) << run.result.err;
  EXPECT_NE(run.result.err.find("no device metrics for HSA agents"), std::string::npos) << run.result.err;
  readers::Capture cap(run.file);
  auto counters = readers::loadCounters(cap);
  size_t hsa = 0;
  for (const auto& m : counters.metrics) {
    if (m.source != "rocmSmi") continue;
    ++hsa;
    EXPECT_TRUE(m.times.empty());
    EXPECT_EQ(m.note.rfind("no device metrics: ", 0), 0u) << m.note;
    EXPECT_EQ(m.intervalNs, 5'000'000u);
  }
  EXPECT_EQ(hsa, 1u);
}

// A program that writes its packets straight into the ring, watches the
// queue's read index for room and waits on its own completion signals, and
// one that reads its dispatches' times from its own signals, run as they do
// without gtap with every dispatch measured.
TEST(HsaCounters, ProgramsThatReadTheirQueueAndSignalsAreUnchanged) {
  CounterRun ring = capture("hsa_ring_writer", {"--counters", "SQ_WAVES,GRBM_GUI_ACTIVE"});
  ASSERT_EQ(ring.result.exitCode, 0) << ring.result.err;
  auto base = plain("hsa_ring_writer");
  ASSERT_EQ(base.exitCode, 0) << base.err;
  EXPECT_EQ(ring.result.out, base.out);
  readers::Capture cap(ring.file);
  auto counters = readers::loadCounters(cap);
  auto work = readers::loadDeviceWork(cap);
  size_t measured = 0;
  for (const auto& op : work.ops)
    if (op.kind == schema::DeviceOpKind::KERNEL) {
      EXPECT_EQ(valuesOf(counters, op)["SQ_WAVES"], wavesOf(op)) << "queue index " << op.queueIndex << ": " << op.note;
      ++measured;
    }
  EXPECT_EQ(measured, 200u);

  CounterRun own = capture("hsa_own_timestamps", {"--counters", "SQ_WAVES"}, {"4"});
  auto ownBase = plain("hsa_own_timestamps", {"4"});
  EXPECT_EQ(own.result.exitCode, ownBase.exitCode) << own.result.err;
  auto withoutTimes = [](const std::string& out) {
    std::string kept;
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);)
      if (line.rfind("timestamp ", 0) != 0) kept += line + "\n";
    return kept;
  };
  EXPECT_EQ(withoutTimes(own.result.out), withoutTimes(ownBase.out));
}

}  // namespace
}  // namespace gtap::test
