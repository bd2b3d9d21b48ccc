// Level Zero profiling on the simulated device: the workloads under
// `gtap run --sim --mode=api,kernels,memory`, checked against what they say
// they did, and the reports and exports built from their captures.
#include <gtest/gtest.h>
#include <level_zero/ze_api.h>
#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "gtap/readers/device_work.h"
#include "gtap/readers/explain.h"
#include "gtap/readers/kernel_stats.h"
#include "gtap/readers/memory_stats.h"
#include "gtap/readers/output_file.h"
#include "gtap/readers/overview.h"
#include "gtap/readers/record_export.h"
#include "process.h"
#include "sqlite_query.h"

namespace gtap::test {
namespace {

std::string simDriver() { return std::string(GTAP_TEST_SIM_DIR) + "/libze_gtap_sim.so"; }

struct WorkloadRun {
  ProcessResult result;
  std::string file;
};

WorkloadRun profile(const std::string& name, const std::vector<std::string>& args = {},
                    const std::string& mode = "api,kernels,memory", const EnvChanges& env = {}) {
  std::string dir = freshDirectory("profile-" + name + "-" + mode);
  std::vector<std::string> argv = {gtapBinary(), "run", "--sim", "-q", "-m", mode, "-o", dir + "/cap.gtap", "--",
                                   workload(name)};
  argv.insert(argv.end(), args.begin(), args.end());
  WorkloadRun run{runProcess(argv, env), dir + "/cap.gtap"};
  return run;
}

std::vector<std::string> linesWith(const std::string& out, const std::string& word) {
  std::vector<std::string> lines;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(word + " ", 0) == 0) lines.push_back(line);
  return lines;
}

// "launch NAME GX GY GZ LX LY LZ" -> count per "NAME gx,gy,gz lx,ly,lz".
std::map<std::string, uint64_t> launchedShapes(const std::string& out) {
  std::map<std::string, uint64_t> shapes;
  for (const auto& line : linesWith(out, "launch")) {
    std::istringstream in(line);
    std::string word, name;
    uint32_t g[3], l[3];
    in >> word >> name >> g[0] >> g[1] >> g[2] >> l[0] >> l[1] >> l[2];
    shapes[name + " " + std::to_string(g[0]) + "," + std::to_string(g[1]) + "," + std::to_string(g[2]) + " " +
           std::to_string(l[0]) + "," + std::to_string(l[1]) + "," + std::to_string(l[2])]++;
  }
  return shapes;
}

class ProfiledWorkload : public ::testing::TestWithParam<std::string> {};

TEST_P(ProfiledWorkload, MatchesWhatTheWorkloadDid) {
  auto run = profile(GetParam());
  ASSERT_EQ(run.result.exitCode, 0) << run.result.err;
  readers::Capture capture(run.file);
  ASSERT_TRUE(capture.recovery().closedCleanly);
  auto work = readers::loadDeviceWork(capture);
  EXPECT_TRUE(work.notes.empty());

  // Same results as without gtap.
  auto plain = runProcess({workload(GetParam())}, {{"ZE_ENABLE_ALT_DRIVERS", simDriver()}});
  ASSERT_EQ(plain.exitCode, 0) << plain.err;
  EXPECT_EQ(linesWith(run.result.out, "checksum"), linesWith(plain.out, "checksum"));
  EXPECT_FALSE(linesWith(plain.out, "checksum").empty());

  // Kernel names, group counts and sizes, through the report a script would use.
  auto report = runProcess({gtapBinary(), "kernels", "--by=shape", "--format=jsonl", run.file});
  ASSERT_EQ(report.exitCode, 0) << report.err;
  std::map<std::string, uint64_t> reported;
  std::istringstream rows(report.out);
  for (std::string line; std::getline(rows, line);) {
    auto j = nlohmann::json::parse(line);
    std::string groups = j["groups"], size = j["group_size"];
    reported[std::string(j["kernel"]) + " " + groups + " " + size] += j["count"].get<uint64_t>();
    EXPECT_EQ(j["untimed"].get<uint64_t>(), 0u) << line;
  }
  EXPECT_EQ(reported, launchedShapes(run.result.out));

  // Every device interval lies within its submission-to-completion window on
  // the host: device clocks were converted, not guessed.
  uint64_t copies = 0, copyBytes = 0, fills = 0, fillBytes = 0;
  for (const auto& op : work.ops) {
    if (op.kind == schema::DeviceOpKind::BARRIER) continue;
    ASSERT_TRUE(op.timed) << op.name << ": " << op.note;
    EXPECT_LE(op.submitNs, op.startNs) << op.name;
    EXPECT_LE(op.startNs, op.endNs) << op.name;
    EXPECT_LE(op.endNs, op.completedNs) << op.name;
    if (op.kind == schema::DeviceOpKind::COPY) {
      ++copies;
      copyBytes += op.bytes;
    }
    if (op.kind == schema::DeviceOpKind::FILL) {
      ++fills;
      fillBytes += op.bytes;
    }
  }
  uint64_t expectedCopyBytes = 0, expectedFillBytes = 0;
  for (const auto& l : linesWith(run.result.out, "copy")) expectedCopyBytes += std::stoull(l.substr(5));
  for (const auto& l : linesWith(run.result.out, "fill")) expectedFillBytes += std::stoull(l.substr(5));
  EXPECT_EQ(copies, linesWith(run.result.out, "copy").size());
  EXPECT_EQ(copyBytes, expectedCopyBytes);
  EXPECT_EQ(fills, linesWith(run.result.out, "fill").size());
  EXPECT_EQ(fillBytes, expectedFillBytes);

  // Allocations by kind and size.
  std::multiset<std::string> allocated, expectedAllocs;
  size_t frees = 0;
  for (const auto& m : work.memory) {
    if (m.isFree) ++frees;
    else allocated.insert(readers::memoryKindName(m.kind) + " " + std::to_string(m.size));
  }
  for (const auto& l : linesWith(run.result.out, "alloc")) expectedAllocs.insert(l.substr(6));
  EXPECT_EQ(allocated, expectedAllocs);
  EXPECT_EQ(frees, linesWith(run.result.out, "free").size());
}

INSTANTIATE_TEST_SUITE_P(Workloads, ProfiledWorkload,
                         ::testing::Values("ze_vector_add", "ze_pipeline", "ze_multithread", "ze_immediate",
                                           "ze_own_timestamps", "ze_host_sync", "ze_counter_events", "ze_scopes"));

// Current SYCL runtimes and compute-benchmarks wait for an asynchronous
// immediate list with zeCommandListHostSynchronize: the work appended before
// it has finished when it returns, and gtap learns so there (as after
// zeCommandQueueSynchronize), not at some later call or at exit.
TEST(ZeProfile, ImmediateListHostSynchronizeCompletesItsWork) {
#if !(defined(ZE_API_VERSION_CURRENT_M) && ZE_API_VERSION_CURRENT_M >= ZE_MAKE_VERSION(1, 10))
  GTEST_SKIP() << "the Level Zero headers gtap is built with (API " << ZE_MAJOR_VERSION(ZE_API_VERSION_CURRENT) << "."
               << ZE_MINOR_VERSION(ZE_API_VERSION_CURRENT) << ") have no zeCommandListHostSynchronize";
#else
  auto run = profile("ze_host_sync", {"3", "4096"});
  ASSERT_EQ(run.result.exitCode, 0) << run.result.err;
  ASSERT_EQ(linesWith(run.result.out, "sync").size(), 3u) << run.result.out;
  EXPECT_EQ(linesWith(run.result.out, "sync").front(), "sync list");
  readers::Capture capture(run.file);
  ASSERT_TRUE(capture.recovery().closedCleanly);
  std::vector<std::pair<int64_t, int64_t>> syncs;
  capture.forEachCall([&](const readers::ApiCall& c) {
    if (capture.functionName(c.function) == "zeCommandListHostSynchronize") syncs.emplace_back(c.beginNs, c.endNs);
  });
  ASSERT_EQ(syncs.size(), 3u);
  auto work = readers::loadDeviceWork(capture);
  size_t kernels = 0;
  for (const auto& op : work.ops) {
    if (op.kind == schema::DeviceOpKind::BARRIER) continue;
    kernels += op.kind == schema::DeviceOpKind::KERNEL;
    ASSERT_TRUE(op.timed) << op.name << ": " << op.note;
    auto next = std::find_if(syncs.begin(), syncs.end(), [&](const auto& s) { return s.first >= op.submitNs; });
    ASSERT_NE(next, syncs.end()) << op.name;
    EXPECT_LE(op.completedNs, next->second) << op.name << " submitted at " << op.submitNs;
  }
  EXPECT_EQ(kernels, linesWith(run.result.out, "launch").size());
#endif
}

// A counter-based event is the signal event of every call on an in-order
// list and never reset: each call re-arms it, so its timestamps are those of
// its latest call. Each call still gets its own device times: the one that
// spins takes at least its spin time, and each starts after the previous
// one ended.
TEST(ZeProfile, CounterBasedEventReusedTimesEachCall) {
#ifndef ZE_EVENT_POOL_COUNTER_BASED_EXP_NAME
  GTEST_SKIP() << "the Level Zero headers gtap is built with (API " << ZE_MAJOR_VERSION(ZE_API_VERSION_CURRENT) << "."
               << ZE_MINOR_VERSION(ZE_API_VERSION_CURRENT) << ") have no counter-based event pools";
#else
  auto run = profile("ze_counter_events", {"3", "4096"});
  ASSERT_EQ(run.result.exitCode, 0) << run.result.err;
  ASSERT_EQ(linesWith(run.result.out, "events"), std::vector<std::string>{"events counter-based"});
  readers::Capture capture(run.file);
  auto work = readers::loadDeviceWork(capture);
  std::vector<readers::DeviceOp> ops;
  for (const auto& op : work.ops)
    if (op.kind != schema::DeviceOpKind::BARRIER) ops.push_back(op);
  std::sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) { return a.appendIndex < b.appendIndex; });
  ASSERT_EQ(ops.size(), linesWith(run.result.out, "copy").size() + linesWith(run.result.out, "launch").size());
  size_t spins = 0;
  for (size_t i = 0; i < ops.size(); ++i) {
    ASSERT_TRUE(ops[i].timed) << ops[i].name << ": " << ops[i].note;
    if (ops[i].name == "spin") {
      ++spins;
      EXPECT_GE(ops[i].durationNs(), 200'000) << "spin #" << spins;
    }
    if (i > 0) EXPECT_GE(ops[i].startNs, ops[i - 1].endNs) << ops[i].name << " after " << ops[i - 1].name;
  }
  EXPECT_EQ(spins, 3u);
#endif
}

// The program's own kernel-timestamp events keep giving it its timestamps.
TEST(ZeProfile, OwnTimestampEventsStillWork) {
  auto run = profile("ze_own_timestamps");
  ASSERT_EQ(run.result.exitCode, 0) << run.result.err;
  auto stamps = linesWith(run.result.out, "timestamp");
  ASSERT_FALSE(stamps.empty());
  for (const auto& s : stamps) {
    int64_t ns = std::stoll(s.substr(s.rfind(' ') + 1));
    EXPECT_GT(ns, 0) << s;
    EXPECT_LT(ns, 1'000'000'000) << s;
  }
}

// The kernel counter wraps during the run: device times still fall inside
// their host windows.
TEST(ZeProfile, KernelTimestampWrapIsHandled) {
  // 2^32 ticks at 19.2 MHz is 223.7 s; start 30 ms before a wrap.
  uint64_t offset = (uint64_t{1} << 32) * 7 - 19'200'000ull * 30 / 1000;
  auto run = profile("ze_vector_add", {"40"}, "api,kernels", {{"GTAP_SIM_ZE_TICK_OFFSET", std::to_string(offset)}});
  ASSERT_EQ(run.result.exitCode, 0) << run.result.err;
  readers::Capture capture(run.file);
  auto work = readers::loadDeviceWork(capture);
  ASSERT_FALSE(work.ops.empty());
  for (const auto& op : work.ops) {
    if (op.kind == schema::DeviceOpKind::BARRIER) continue;
    ASSERT_TRUE(op.timed) << op.note;
    EXPECT_LE(op.submitNs, op.startNs);
    EXPECT_LE(op.endNs, op.completedNs);
    EXPECT_LT(op.durationNs(), 100'000'000);
  }
}

TEST(ZeProfile, KernelFilterKeepsOnlyMatchingKernels) {
  std::string dir = freshDirectory("kernel-filter");
  auto r = runProcess({gtapBinary(), "run", "--sim", "-q", "-m", "api,kernels", "--kernel-filter", "sc*", "-o",
                       dir + "/cap.gtap", "--", workload("ze_pipeline")});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  readers::Capture capture(dir + "/cap.gtap");
  auto work = readers::loadDeviceWork(capture);
  std::set<std::string> kernels;
  for (const auto& op : work.ops)
    if (op.kind == schema::DeviceOpKind::KERNEL) kernels.insert(std::string(op.name));
  EXPECT_EQ(kernels, std::set<std::string>{"scale"});
}

// Stacks name the workload's own functions, including an inlined one.
TEST(ZeProfile, StacksAreSymbolisedWithInlinedFrames) {
  auto run = profile("ze_stacks", {}, "api,kernels,memory,stacks");
  ASSERT_EQ(run.result.exitCode, 0) << run.result.err;
  auto explain = runProcess({gtapBinary(), "explain", run.file});
  ASSERT_EQ(explain.exitCode, 0) << explain.err;
  // The three frames, innermost first, on consecutive lines.
  std::vector<std::string> frames;
  std::istringstream in(explain.out);
  for (std::string line; std::getline(in, line);)
    if (line.find_first_not_of(' ') != std::string::npos) frames.push_back(line.substr(line.find_first_not_of(' ')));
  bool found = false;
  for (size_t i = 0; i + 2 < frames.size() && !found; ++i) {
    found = frames[i].rfind("appendScaleKernel(", 0) == 0 &&
            frames[i].find(" (inlined) at ze_stacks.cpp:") != std::string::npos &&
            frames[i + 1].rfind("launchFromHelper(", 0) == 0 &&
            frames[i + 1].find(" at ze_stacks.cpp:") != std::string::npos &&
            frames[i + 2].rfind("main at ze_stacks.cpp:", 0) == 0;
  }
  EXPECT_TRUE(found) << explain.out;
}

// A stripped program's stacks are named from its debug file, found by
// build-id in any directory of GTAP_DEBUG_PATH (colon-separated) or of
// --debug-dir.
TEST(ZeProfile, StrippedProgramsStacksUseEveryDebugPathDirectory) {
  std::string dir = freshDirectory("stacks-debug-path");
  std::string stripped = strippedWithDebugFile(workload("ze_stacks"), dir);
  ASSERT_NE(stripped, "");
  auto run = runProcess({gtapBinary(), "run", "--sim", "-q", "-m", "api,kernels,stacks", "-o", dir + "/cap.gtap",
                         "--", stripped});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  auto named = [](const std::string& out) { return out.find("launchFromHelper(") != std::string::npos; };
  auto bare = runProcess({gtapBinary(), "explain", dir + "/cap.gtap"}, {}, {"GTAP_DEBUG_PATH"});
  ASSERT_EQ(bare.exitCode, 0) << bare.err;
  EXPECT_FALSE(named(bare.out)) << "stripped, without its debug file: " << bare.out;
  auto viaEnv = runProcess({gtapBinary(), "explain", dir + "/cap.gtap"},
                           {{"GTAP_DEBUG_PATH", dir + "/nothing::" + dir + "/debug"}});
  ASSERT_EQ(viaEnv.exitCode, 0) << viaEnv.err;
  EXPECT_TRUE(named(viaEnv.out)) << viaEnv.out;
  auto viaOption = runProcess({gtapBinary(), "explain", "--debug-dir", dir + "/nothing", "--debug-dir",
                               dir + "/debug", dir + "/cap.gtap"},
                              {}, {"GTAP_DEBUG_PATH"});
  ASSERT_EQ(viaOption.exitCode, 0) << viaOption.err;
  EXPECT_TRUE(named(viaOption.out)) << viaOption.out;
}

// Chrome JSON parses back as Trace Event format with API slices, kernel slices
// on a device track, and flows between them; the Perfetto file decodes.
TEST(ZeProfile, ExportsLoad) {
  auto run = profile("ze_vector_add");
  ASSERT_EQ(run.result.exitCode, 0) << run.result.err;
  std::string json = run.file + ".json", trace = run.file + ".pftrace";
  ASSERT_EQ(runProcess({gtapBinary(), "export", "--format=chrome", "-o", json, run.file}).exitCode, 0);
  ASSERT_EQ(runProcess({gtapBinary(), "export", "--format=perfetto", "-o", trace, run.file}).exitCode, 0);
  std::ifstream in(json);
  auto doc = nlohmann::json::parse(in);
  size_t api = 0, kernels = 0, flowStarts = 0, flowEnds = 0;
  for (const auto& e : doc["traceEvents"]) {
    std::string ph = e["ph"];
    if (ph == "X" && e["cat"] == "api") ++api;
    if (ph == "X" && e["cat"] == "kernel") {
      ++kernels;
      EXPECT_EQ(e["name"], "vector_add");
      EXPECT_GT(e["dur"].get<double>(), 0);
    }
    flowStarts += ph == "s";
    flowEnds += ph == "f";
  }
  EXPECT_EQ(kernels, launchedShapes(run.result.out).begin()->second);
  EXPECT_GT(api, kernels);
  EXPECT_GE(flowStarts, kernels);
  EXPECT_EQ(flowStarts, flowEnds);
  // protoc reads the trace on standard input.
  auto shell = runProcess({"sh", "-c",
                           std::string(GTAP_TEST_PROTOC) + " --decode=perfetto.protos.Trace -I" +
                               GTAP_TEST_PERFETTO_PROTO_DIR + " " + GTAP_TEST_PERFETTO_PROTO + " < " + trace});
  EXPECT_EQ(shell.exitCode, 0) << shell.err;
  EXPECT_NE(shell.out.find("vector_add"), std::string::npos);
}

std::string fileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Threads that create, execute and destroy their lists at the same time: the
// runtime gives a freed list's handle to another thread at once, and ops of
// one list may be read by whichever thread resolves first. Each run must end
// (a lost or doubly counted op once left a destroy waiting for ever) with the
// program's results and every launch timed.
TEST(ZeProfile, ThreadsCreatingAndDestroyingListsTogether) {
  auto plain = runProcess({workload("ze_multithread"), "8", "4", "256"}, {{"ZE_ENABLE_ALT_DRIVERS", simDriver()}});
  ASSERT_EQ(plain.exitCode, 0) << plain.err;
  for (int round = 0; round < 12; ++round) {
    std::string dir = freshDirectory("profile-churn-" + std::to_string(round));
    auto run = runProcess({"timeout", "-s", "KILL", "60", gtapBinary(), "run", "--sim", "-q", "-m", "api,kernels",
                           "-o", dir + "/cap.gtap", "--", workload("ze_multithread"), "8", "4", "256"});
    ASSERT_EQ(run.exitCode, 0) << "round " << round << ": " << run.err;
    EXPECT_EQ(linesWith(run.out, "checksum"), linesWith(plain.out, "checksum"));
    readers::Capture capture(dir + "/cap.gtap");
    ASSERT_TRUE(capture.recovery().closedCleanly);
    auto work = readers::loadDeviceWork(capture);
    EXPECT_TRUE(work.notes.empty()) << "round " << round;
    uint64_t kernels = 0;
    for (const auto& op : work.ops)
      if (op.kind == schema::DeviceOpKind::KERNEL) {
        ++kernels;
        EXPECT_TRUE(op.timed) << op.note;
      }
    EXPECT_EQ(kernels, 8u * 4u) << "round " << round;
  }
}

// A program that forks while its threads keep the device busy: each child
// lands wherever those threads were (inside gtap's reading of their lists'
// executions, or holding its lock) and destroys the lists it inherited. No
// child may wait for threads it does not have; the workload kills one that
// has not ended in 20 s and counts it as hung (before the fork handlers, 3
// to 4 in 100 did). Every child writes a capture of its own.
TEST(ZeProfile, ChildrenForkedFromBusyThreadsEnd) {
  auto plain = runProcess({workload("ze_fork_busy"), "2", "20"}, {{"ZE_ENABLE_ALT_DRIVERS", simDriver()}});
  ASSERT_EQ(plain.exitCode, 0) << plain.out << plain.err;
  std::string dir = freshDirectory("profile-fork");
  auto run = runProcess({"timeout", "-s", "KILL", "240", gtapBinary(), "run", "--sim", "-q", "-m", "api,kernels", "-o",
                         dir + "/cap-%p.gtap", "--", workload("ze_fork_busy"), "2", "100"});
  EXPECT_EQ(run.exitCode, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("forks 100, children ended 100, hung 0"), std::string::npos) << run.out;
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) files += entry.path().extension() == ".gtap";
  EXPECT_EQ(files, 101u);
}

// The SQLite export holds every call and device operation the readers see,
// with names through the strings table; an existing output is kept unless
// --force, and kept too when writing the replacement fails.
// `gtap kernels` reads the device operations a batch at a time
// (kernelRowsStreamed): its rows are exactly those of the operations held
// whole (kernelRows over loadDeviceWork), for every grouping, one file or
// several, per process or not, with batches that end inside a chunk (8,000
// launches in one file) and files of HSA packets and IREE HAL operations
// (joined, then read again: 3,001 joined dispatches over several batches).
TEST(ZeProfile, KernelRowsReadInBatchesAreThoseOfTheWholeWork) {
  std::vector<std::string> files;
  auto many = profile("ze_multithread", {"4", "2000", "64"}, "api,kernels");
  ASSERT_EQ(many.result.exitCode, 0) << many.result.err;
  files.push_back(many.file);
  auto pipeline = profile("ze_pipeline");
  ASSERT_EQ(pipeline.result.exitCode, 0) << pipeline.result.err;
  files.push_back(pipeline.file);
  auto joined = profile("hal_on_hsa", {"1000"}, "api,kernels",
                        {{"LD_LIBRARY_PATH", std::string(GTAP_TEST_SIM_DIR) + "/hsa"}});
  ASSERT_EQ(joined.result.exitCode, 0) << joined.result.err;
  files.push_back(joined.file);
  {
    readers::Capture c(joined.file);
    auto work = readers::loadDeviceWork(c);
    EXPECT_GT(work.ops.size(), 4096u);  // more than one batch
    EXPECT_EQ(work.halJoin.joined, 3001u);
  }
  for (const char* name : {"hsa_pipeline.gtap", "hal_on_hsa.gtap"})
    files.push_back(std::string(GTAP_TEST_SOURCE_DIR) + "/tests/data/format-1.3/" + name);
  std::vector<std::unique_ptr<readers::Capture>> captures;
  for (const auto& f : files) captures.push_back(std::make_unique<readers::Capture>(f));
  auto key = [](const std::vector<readers::KernelRow>& rows) {
    std::vector<std::string> out;
    for (const auto& r : rows) {
      std::string line = r.process + "|" + r.key + "|" + r.level + "|" + r.name;
      for (auto v : {r.time.count, r.untimed, r.joined}) line += "|" + std::to_string(v);
      for (auto v : {r.time.total, r.time.min, r.time.max, r.time.p50, r.time.p99}) line += "|" + std::to_string(v);
      for (auto v : r.groupCount) line += "|" + std::to_string(v);
      for (auto v : r.groupSize) line += "|" + std::to_string(v);
      for (auto v : r.gridSize) line += "|g" + std::to_string(v);
      line += "|" + std::to_string(r.share);
      out.push_back(line);
    }
    return out;
  };
  for (size_t first = 0; first < captures.size(); ++first) {
    for (size_t count : {size_t{1}, captures.size() - first}) {
      std::vector<readers::LoadedCapture> loaded;
      std::vector<const readers::Capture*> streamed;
      for (size_t i = first; i < first + count; ++i) {
        loaded.push_back({captures[i].get(), readers::loadDeviceWork(*captures[i])});
        streamed.push_back(captures[i].get());
      }
      for (auto by : {readers::KernelGrouping::name, readers::KernelGrouping::module, readers::KernelGrouping::queue,
                      readers::KernelGrouping::shape}) {
        for (bool perProcess : {false, true}) {
          SCOPED_TRACE("files " + std::to_string(first) + "+" + std::to_string(count) + " by " +
                       std::to_string(static_cast<int>(by)) + (perProcess ? " per process" : ""));
          auto whole = readers::kernelRows(loaded, by, perProcess);
          std::vector<std::string> notes;
          auto batches = readers::kernelRowsStreamed(streamed, by, perProcess, notes);
          EXPECT_FALSE(whole.empty());
          EXPECT_EQ(key(batches), key(whole));
          EXPECT_TRUE(notes.empty());
        }
      }
    }
  }
  // The memory report's transfers, read the same way, are those of the whole work too.
  for (const auto& c : captures) {
    std::vector<readers::LoadedCapture> whole;
    whole.push_back({c.get(), readers::loadDeviceWork(*c)});
    readers::TransferTable table(false);
    table.beginCapture(*c);
    readers::DeviceWork meta;
    EXPECT_TRUE(readers::streamDeviceWork(*c, meta, false, [&](std::span<const readers::DeviceOp> ops) {
      for (const auto& op : ops) table.add(op);
      return true;
    }));
    auto text = [](const std::vector<readers::TransferRow>& rows) {
      std::string out;
      for (const auto& r : rows)
        out += r.kind + " " + std::to_string(r.count) + " " + std::to_string(r.bytes) + " " +
               std::to_string(r.deviceNs) + " " + std::to_string(r.timedBytes) + "\n";
      return out;
    };
    EXPECT_EQ(text(table.rows()), text(readers::transferRows(whole, false))) << c->path();
    EXPECT_EQ(meta.memory.size(), whole[0].work.memory.size());
  }
  // `gtap summary`'s overview, read the same way, is that of the whole work
  // (a capture with HAL submissions read again after the join).
  auto text = [](const readers::ProcessOverview& p) {
    std::string out = p.label + " " + std::to_string(p.startNs) + " " + std::to_string(p.endNs) + " " +
                      std::to_string(p.apiCalls) + " " + std::to_string(p.unfinishedCalls) + " " +
                      std::to_string(p.failedCalls) + " " + std::to_string(p.apiNs) + " " + std::to_string(p.threads);
    for (const auto& d : p.devices)
      for (auto v : {uint64_t{d.device}, uint64_t(d.firstNs), uint64_t(d.lastNs), uint64_t(d.busyNs), d.kernels,
                     d.copies, d.fills, d.barriers, d.untimed, d.copyBytes})
        out += " " + std::to_string(v);
    for (auto v : {p.halDispatches, uint64_t{p.halExecutables}, p.halFills, p.halFillBytes, p.halCopies, p.halCopyBytes,
                   p.halSubmissions, p.halWaits, p.allocations, p.allocatedBytes})
      out += " " + std::to_string(v);
    for (const auto& r : p.untimedReasons) out += " [" + r + "]";
    return out;
  };
  for (const auto& c : captures) {
    readers::DeviceWork meta;
    auto streamed = readers::overviewStreamed(*c, meta);
    readers::LoadedCapture lc{c.get(), readers::loadDeviceWork(*c)};
    auto whole = readers::overviewOf(lc, 0);
    EXPECT_FALSE(whole.devices.empty()) << c->path();
    EXPECT_EQ(text(streamed), text(whole)) << c->path();
  }
  // `gtap explain`'s account, read the same way (with gaps and the slowest
  // launches of 8,000 across batches), is that of the whole work; a capture
  // with HAL submissions is read whole.
  for (const auto& c : captures) {
    readers::Symbolizer symbolizer;
    std::ostringstream streamed, whole;
    readers::writeExplanation(*c, 5, symbolizer, streamed);
    readers::writeExplanation(readers::LoadedCapture{c.get(), readers::loadDeviceWork(*c)}, 5, symbolizer, whole);
    EXPECT_NE(whole.str().find("Slowest launches:"), std::string::npos) << c->path() << whole.str();
    EXPECT_EQ(streamed.str(), whole.str()) << c->path();
  }
  // The record exports (JSON Lines, SQLite) of the operations read a batch at
  // a time (visitDeviceWork) are those of the whole work, one file or all.
  std::string dir = freshDirectory("profile-streamed-exports");
  auto tables = [](const std::string& path) {
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK) << path;
    std::string all;
    for (const char* table : {"processes", "threads", "strings", "api_calls", "device_ops"}) {
      sqlite3_stmt* stmt = nullptr;
      std::string sql = std::string("SELECT * FROM ") + table + " ORDER BY rowid";
      EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK) << sql;
      while (sqlite3_step(stmt) == SQLITE_ROW) {
        for (int i = 0; i < sqlite3_column_count(stmt); ++i) {
          auto* text = sqlite3_column_text(stmt, i);
          all += text ? reinterpret_cast<const char*>(text) : "NULL";
          all += "|";
        }
        all += "\n";
      }
      sqlite3_finalize(stmt);
    }
    sqlite3_close(db);
    return all;
  };
  size_t databases = 0;
  for (size_t first = 0; first < captures.size(); ++first) {
    for (size_t count : {size_t{1}, captures.size() - first}) {
      SCOPED_TRACE("exports of files " + std::to_string(first) + "+" + std::to_string(count));
      std::vector<readers::LoadedCapture> loaded;
      std::vector<const readers::Capture*> streamed;
      for (size_t i = first; i < first + count; ++i) {
        loaded.push_back({captures[i].get(), readers::loadDeviceWork(*captures[i])});
        streamed.push_back(captures[i].get());
      }
      std::ostringstream whole, batches;
      readers::writeJsonLines(loaded, whole);
      std::vector<std::string> notes;
      readers::writeJsonLines(streamed, batches, notes);
      EXPECT_NE(whole.str().find("\"type\":\"device\""), std::string::npos);
      EXPECT_EQ(batches.str(), whole.str());
      EXPECT_TRUE(notes.empty());
      std::string wholeDb = dir + "/whole-" + std::to_string(databases) + ".db";
      std::string batchesDb = dir + "/batches-" + std::to_string(databases++) + ".db";
      {
        readers::OutputFile out(wholeDb, false);
        readers::writeSqlite(loaded, out);
        out.commit();
      }
      {
        readers::OutputFile out(batchesDb, false);
        readers::writeSqlite(streamed, out, notes);
        out.commit();
      }
      std::string rows = tables(wholeDb);
      EXPECT_NE(rows.find("kernel"), std::string::npos);
      EXPECT_EQ(tables(batchesDb), rows);
    }
  }
  // The many launches are all there.
  std::vector<readers::LoadedCapture> one;
  one.push_back({captures[0].get(), readers::loadDeviceWork(*captures[0])});
  uint64_t launches = 0;
  for (const auto& r : readers::kernelRows(one, readers::KernelGrouping::name, false)) launches += r.time.count + r.untimed;
  EXPECT_EQ(launches, 8000u);
}

TEST(ZeProfile, SqliteExportAnswersQueries) {
  auto run = profile("ze_multithread");
  ASSERT_EQ(run.result.exitCode, 0) << run.result.err;
  std::string db = run.file + ".db";
  auto exported = runProcess({gtapBinary(), "export", "--format=sqlite", "-o", db, run.file});
  ASSERT_EQ(exported.exitCode, 0) << exported.err;

  readers::Capture capture(run.file);
  auto work = readers::loadDeviceWork(capture);
  uint64_t calls = 0, unfinished = 0;
  Counts perFunction;
  capture.forEachCall([&](const readers::ApiCall& c) {
    ++calls;
    unfinished += !c.finished;
    ++perFunction[capture.functionName(c.function)];
  });
  Counts kinds;
  uint64_t timed = 0;
  for (const auto& op : work.ops) {
    ++kinds[readers::opKindName(op.kind)];
    timed += op.timed;
  }
  ASSERT_GT(kinds["kernel"], 0);

  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open_v2(db.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  std::unique_ptr<sqlite3, decltype(&sqlite3_close)> conn(raw, &sqlite3_close);
  EXPECT_EQ(queryInt(raw, "SELECT COUNT(*) FROM api_calls"), static_cast<int64_t>(calls));
  EXPECT_EQ(queryInt(raw, "SELECT COUNT(*) FROM api_calls WHERE end_ns IS NULL"), static_cast<int64_t>(unfinished));
  EXPECT_EQ(queryCounts(raw, "SELECT s.string, COUNT(*) FROM api_calls a JOIN strings s ON s.id = a.function_id "
                             "GROUP BY a.function_id"),
            perFunction);
  EXPECT_EQ(queryCounts(raw, "SELECT function, count FROM api_summary"), perFunction);
  EXPECT_EQ(queryCounts(raw, "SELECT kind, COUNT(*) FROM device_ops GROUP BY kind"), kinds);
  EXPECT_EQ(queryInt(raw, "SELECT COUNT(*) FROM device_ops WHERE start_ns IS NOT NULL"), static_cast<int64_t>(timed));
  // Kernels by name, through the strings table.
  Counts kernels;
  for (const auto& op : work.ops)
    if (op.kind == schema::DeviceOpKind::KERNEL) ++kernels[std::string(op.name)];
  EXPECT_EQ(queryCounts(raw, "SELECT s.string, COUNT(*) FROM device_ops d JOIN strings s ON s.id = d.name_id "
                             "WHERE d.kind = 'kernel' GROUP BY s.string"),
            kernels);
  EXPECT_EQ(queryInt(raw, "SELECT COUNT(*) FROM processes WHERE pid = " + std::to_string(capture.process().pid)), 1);
  EXPECT_EQ(queryInt(raw, "SELECT COUNT(*) FROM threads"), static_cast<int64_t>(capture.threads().size()));
  EXPECT_GT(capture.threads().size(), 1u);
  // Every call's thread is one of the process's threads.
  EXPECT_EQ(queryInt(raw, "SELECT COUNT(*) FROM api_calls a LEFT JOIN threads t ON t.process_id = a.process_id "
                          "AND t.thread = a.thread WHERE t.id IS NULL"),
            0);
  conn.reset();

  // Refused without --force: exit 2, the file untouched.
  std::string before = fileBytes(db);
  ASSERT_FALSE(before.empty());
  auto refused = runProcess({gtapBinary(), "export", "--format=sqlite", "-o", db, run.file});
  EXPECT_EQ(refused.exitCode, 2);
  EXPECT_NE(refused.err.find("--force"), std::string::npos) << refused.err;
  EXPECT_EQ(fileBytes(db), before);

  // A replacement that cannot be written (files limited to 16 blocks, less
  // than the empty tables take) fails naming the file and SQLite's reason,
  // and leaves the previous output and no partial file.
  auto failed = runProcess({"sh", "-c",
                            "trap '' XFSZ; ulimit -f 16; exec " + gtapBinary() + " export --force --format=sqlite -o " +
                                db + " " + run.file});
  EXPECT_EQ(failed.exitCode, 1) << failed.err;
  EXPECT_NE(failed.err.find(db), std::string::npos) << failed.err;
  EXPECT_NE(failed.err.find("SQLite: "), std::string::npos) << failed.err;
  EXPECT_EQ(fileBytes(db), before);
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(db).parent_path()))
    EXPECT_EQ(entry.path().string().find(".partial-"), std::string::npos) << entry.path();

  // With --force a good export replaces it.
  auto forced = runProcess({gtapBinary(), "export", "--force", "--format=sqlite", "-o", db, run.file});
  EXPECT_EQ(forced.exitCode, 0) << forced.err;
}

// The module the workload built is stored once and listed with its kernel.
TEST(ZeProfile, ExecutablesListTheModuleAndItsKernels) {
  auto run = profile("ze_vector_add");
  ASSERT_EQ(run.result.exitCode, 0) << run.result.err;
  auto r = runProcess({gtapBinary(), "executables", "--format=jsonl", run.file});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  std::istringstream in(r.out);
  size_t rows = 0;
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line);
    ++rows;
    EXPECT_EQ(j["format"], "native");
    EXPECT_EQ(j["kernel"], "vector_add");
    EXPECT_EQ(j["args"], 4);
    EXPECT_EQ(j["size"].get<uint64_t>(), std::filesystem::file_size(GTAP_TEST_WORKLOAD_KERNELS));
  }
  EXPECT_EQ(rows, 1u);
}

// Several files (ranks) merge in reports and stay apart per process on request.
TEST(ZeProfile, RanksMergeAndStayApart) {
  std::string dir = freshDirectory("ranks");
  for (int rank = 0; rank < 2; ++rank) {
    auto r = runProcess({gtapBinary(), "run", "--sim", "-q", "-m", "api,kernels", "-o", dir + "/rank-%r.gtap", "--",
                         workload("ze_vector_add"), "2"},
                        {{"OMPI_COMM_WORLD_RANK", std::to_string(rank)}, {"OMPI_COMM_WORLD_SIZE", "2"}});
    ASSERT_EQ(r.exitCode, 0) << r.err;
  }
  auto merged = runProcess({gtapBinary(), "kernels", "--format=jsonl", dir + "/rank-0.gtap", dir + "/rank-1.gtap"});
  auto j = nlohmann::json::parse(merged.out.substr(0, merged.out.find('\n')));
  EXPECT_EQ(j["count"].get<uint64_t>(), 4u);
  auto apart = runProcess({gtapBinary(), "kernels", "--per-process", "--format=csv", dir + "/rank-0.gtap", dir + "/rank-1.gtap"});
  EXPECT_NE(apart.out.find("rank 0 (pid"), std::string::npos) << apart.out;
  EXPECT_NE(apart.out.find("rank 1 (pid"), std::string::npos) << apart.out;
}

}  // namespace
}  // namespace gtap::test
