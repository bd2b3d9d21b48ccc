// HSA capture on the simulated runtime: the HSA workloads under
// `gtap run --sim`, checked against what they say they did, against a run
// without gtap, and through the reports.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <map>
#include <set>
#include <sstream>

#include "gtap/readers/device_work.h"
#include "process.h"

namespace gtap::test {
namespace {

std::string simHsaDir() { return std::string(GTAP_TEST_SIM_DIR) + "/hsa"; }
std::string gtapLibrary() { return std::string(GTAP_TEST_SIM_DIR) + "/../libgtap.so"; }

struct HsaRun {
  ProcessResult result;
  std::string file;
};

HsaRun capture(const std::string& name, const std::vector<std::string>& args = {},
            const std::string& mode = "api,kernels,memory") {
  std::string dir = freshDirectory("hsa-" + name + "-" + mode);
  std::vector<std::string> argv = {gtapBinary(), "run", "--sim", "-q", "-m", mode, "-o", dir + "/cap.gtap", "--",
                                   workload(name)};
  argv.insert(argv.end(), args.begin(), args.end());
  return {runProcess(argv), dir + "/cap.gtap"};
}

ProcessResult plain(const std::string& name, const std::vector<std::string>& args = {}) {
  std::vector<std::string> argv = {workload(name)};
  argv.insert(argv.end(), args.begin(), args.end());
  return runProcess(argv, {{"LD_LIBRARY_PATH", simHsaDir()}});
}

std::vector<std::string> linesWith(const std::string& out, const std::string& word) {
  std::vector<std::string> lines;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(word + " ", 0) == 0 || line == word) lines.push_back(line);
  return lines;
}

std::string withoutTimestamps(const std::string& out) {
  std::string kept;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("timestamp ", 0) != 0) kept += line + "\n";
  return kept;
}

// "dispatch NAME GX GY GZ WX WY WZ" -> count per "NAME grid gx,gy,gz wg wx,wy,wz".
std::map<std::string, uint64_t> dispatchedShapes(const std::string& out) {
  std::map<std::string, uint64_t> shapes;
  for (const auto& line : linesWith(out, "dispatch")) {
    std::istringstream in(line);
    std::string word, name;
    uint32_t g[3], w[3];
    in >> word >> name >> g[0] >> g[1] >> g[2] >> w[0] >> w[1] >> w[2];
    shapes[name + " grid " + std::to_string(g[0]) + "," + std::to_string(g[1]) + "," + std::to_string(g[2]) +
           " wg " + std::to_string(w[0]) + "," + std::to_string(w[1]) + "," + std::to_string(w[2])]++;
  }
  return shapes;
}

std::string property(const readers::Object& o, const std::string& key) {
  for (const auto& [k, v] : o.properties)
    if (k == key) return v;
  return {};
}

class CapturedHsaWorkload : public ::testing::TestWithParam<std::string> {};

TEST_P(CapturedHsaWorkload, MatchesWhatTheWorkloadDid) {
  HsaRun run = capture(GetParam());
  ASSERT_EQ(run.result.exitCode, 0) << run.result.err;
  readers::Capture cap(run.file);
  ASSERT_TRUE(cap.recovery().closedCleanly);
  auto work = readers::loadDeviceWork(cap);
  EXPECT_TRUE(work.notes.empty());

  // The program's output is what it is without gtap (device durations aside).
  auto base = plain(GetParam());
  ASSERT_EQ(base.exitCode, 0) << base.err;
  EXPECT_EQ(withoutTimestamps(run.result.out), withoutTimestamps(base.out));
  EXPECT_FALSE(linesWith(base.out, "checksum").empty());

  // Kernel names, grids and work-group sizes as dispatched, through the report.
  std::map<std::string, uint64_t> seen;
  std::map<uint64_t, uint32_t> kernargSize;  // kernel id -> its symbol's kernarg segment size
  for (const auto& [id, o] : work.objects)
    if (o.kind == schema::ObjectKind::KERNEL) kernargSize[id] = std::stoul(property(o, "kernargSegmentSize"));
  uint64_t barriers = 0, copies = 0, copyBytes = 0;
  for (const auto& op : work.ops) {
    if (op.kind == schema::DeviceOpKind::KERNEL) {
      ASSERT_EQ(op.gridSize.size(), 3u);
      seen[std::string(op.name) + " grid " + std::to_string(op.gridSize[0]) + "," + std::to_string(op.gridSize[1]) + "," +
           std::to_string(op.gridSize[2]) + " wg " + std::to_string(op.groupSize[0]) + "," +
           std::to_string(op.groupSize[1]) + "," + std::to_string(op.groupSize[2])]++;
      // The kernarg bytes the packet pointed at, as long as the kernel declares.
      ASSERT_TRUE(kernargSize.count(op.kernel)) << op.name;
      EXPECT_EQ(op.arguments().size(), kernargSize[op.kernel]) << op.name;
      EXPECT_EQ(op.packetHeader & 0xff, 2) << "HSA_PACKET_TYPE_KERNEL_DISPATCH";
    } else if (op.kind == schema::DeviceOpKind::BARRIER) {
      ++barriers;
    } else if (op.kind == schema::DeviceOpKind::COPY) {
      ++copies;
      copyBytes += op.bytes;
    }
    // Every device interval lies within its doorbell-to-completion window on
    // the host: device clocks were converted, not guessed.
    if (op.note.find("synchronous") != std::string::npos) continue;
    ASSERT_TRUE(op.timed) << op.name << ": " << op.note;
    EXPECT_LE(op.submitNs, op.startNs) << op.name;
    EXPECT_LE(op.startNs, op.endNs) << op.name;
    EXPECT_LE(op.endNs, op.completedNs) << op.name;
  }
  EXPECT_EQ(seen, dispatchedShapes(run.result.out));
  EXPECT_EQ(barriers, linesWith(run.result.out, "barrier").size());
  uint64_t expectedCopyBytes = 0;
  for (const auto& l : linesWith(run.result.out, "copy")) expectedCopyBytes += std::stoull(l.substr(5));
  EXPECT_EQ(copies, linesWith(run.result.out, "copy").size());
  EXPECT_EQ(copyBytes, expectedCopyBytes);

  // Allocations by kind and size, and as many frees.
  std::multiset<std::string> allocated, expected;
  size_t frees = 0;
  for (const auto& m : work.memory) {
    if (m.isFree)
      ++frees;
    else
      allocated.insert(readers::memoryKindName(m.kind) + " " + std::to_string(m.size));
  }
  for (const auto& l : linesWith(run.result.out, "alloc")) expected.insert(l.substr(6));
  for (const auto& l : linesWith(run.result.out, "lock")) expected.insert("locked " + l.substr(5));
  EXPECT_EQ(allocated, expected);
  EXPECT_EQ(frees, linesWith(run.result.out, "free").size() + linesWith(run.result.out, "unlock").size());

  // The same through `gtap kernels --by=shape`.
  auto report = runProcess({gtapBinary(), "kernels", "--by=shape", "--format=jsonl", run.file});
  ASSERT_EQ(report.exitCode, 0) << report.err;
  std::map<std::string, uint64_t> reported;
  std::istringstream rows(report.out);
  for (std::string line; std::getline(rows, line);) {
    auto j = nlohmann::json::parse(line);
    reported[std::string(j["kernel"]) + " grid " + std::string(j["grid"]) + " wg " + std::string(j["group_size"])] +=
        j["count"].get<uint64_t>();
    EXPECT_EQ(j["untimed"].get<uint64_t>(), 0u) << line;
  }
  EXPECT_EQ(reported, dispatchedShapes(run.result.out));
}

INSTANTIATE_TEST_SUITE_P(Workloads, CapturedHsaWorkload,
                         ::testing::Values("hsa_vector_add", "hsa_pipeline", "hsa_multithread", "hsa_dlopen",
                                           "hsa_own_timestamps", "hsa_two_queues"));

// Packets written as IREE's driver writes them: batches of slots reserved at
// once, bodies stored in place, headers published last, one doorbell per
// batch, a 64-packet ring wrapped three times over. Each packet is recorded
// once, with the ring index it went to and the header it was written with
// (fence scopes and barrier bit included), and the program's results are
// what they are without gtap.
TEST(HsaCapture, PacketsWrittenStraightIntoTheRingAreRecorded) {
  HsaRun run = capture("hsa_ring_writer", {}, "api,kernels");
  ASSERT_EQ(run.result.exitCode, 0) << run.result.err;
  auto base = plain("hsa_ring_writer");
  ASSERT_EQ(base.exitCode, 0) << base.err;
  EXPECT_EQ(run.result.out, base.out);
  ASSERT_EQ(linesWith(base.out, "dispatch").size(), 200u);
  ASSERT_EQ(linesWith(base.out, "barrier").size(), 13u);

  readers::Capture cap(run.file);
  ASSERT_TRUE(cap.recovery().closedCleanly);
  auto work = readers::loadDeviceWork(cap);
  // Kernel dispatch, agent-scope fences; barrier-AND with the barrier bit,
  // releasing at system scope (hsa.h's header bit layout).
  const uint16_t dispatchHeader = 2 | 1 << 9 | 1 << 11;
  const uint16_t barrierHeader = 3 | 1 << 8 | 1 << 9 | 2 << 11;
  std::set<uint64_t> kernelIndices, barrierIndices;
  for (const auto& op : work.ops) {
    if (op.kind == schema::DeviceOpKind::KERNEL) {
      EXPECT_EQ(op.name, "ring_fill");
      EXPECT_EQ(op.packetHeader, dispatchHeader) << op.queueIndex;
      EXPECT_TRUE(kernelIndices.insert(op.queueIndex).second) << "index " << op.queueIndex << " recorded twice";
    } else if (op.kind == schema::DeviceOpKind::BARRIER) {
      EXPECT_EQ(op.packetHeader, barrierHeader) << op.queueIndex;
      EXPECT_TRUE(barrierIndices.insert(op.queueIndex).second) << "index " << op.queueIndex << " recorded twice";
    }
  }
  EXPECT_EQ(dispatchedShapes(run.result.out)["ring_fill grid 256,1,1 wg 64,1,1"], 200u);
  // Batches of 16 dispatches and their barrier: the barrier of batch b at
  // 17 b + 16 (the last batch holds 8 dispatches, its barrier at 212).
  std::set<uint64_t> wantKernels, wantBarriers;
  for (uint64_t index = 0; index < 213; ++index)
    (index % 17 == 16 || index == 212 ? wantBarriers : wantKernels).insert(index);
  EXPECT_EQ(kernelIndices, wantKernels);
  EXPECT_EQ(barrierIndices, wantBarriers);
}

std::map<std::string, uint64_t> apiCounts(const std::string& file) {
  auto r = runProcess({gtapBinary(), "api", "--format=jsonl", file});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  std::map<std::string, uint64_t> counts;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line);
    counts[j["function"]] = j["count"].get<uint64_t>();
    EXPECT_EQ(j["api"], "hsa") << line;
  }
  return counts;
}

struct ApiRow {
  uint64_t count = 0, failed = 0;
  bool operator==(const ApiRow& o) const { return count == o.count && failed == o.failed; }
};

std::map<std::string, ApiRow> apiRows(const std::string& file) {
  auto r = runProcess({gtapBinary(), "api", "--format=jsonl", file});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  std::map<std::string, ApiRow> rows;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line);
    rows[j["function"]] = {j["count"].get<uint64_t>(), j["failed"].get<uint64_t>()};
  }
  return rows;
}

// "calls NAME N" lines: what the program says it called.
std::map<std::string, uint64_t> printedCalls(const std::string& out) {
  std::map<std::string, uint64_t> calls;
  for (const auto& line : linesWith(out, "calls")) {
    std::istringstream in(line);
    std::string word, name;
    uint64_t n = 0;
    in >> word >> name >> n;
    calls[name] = n;
  }
  return calls;
}

// Discovery, queue creation and allocation inside the runtime's callbacks,
// as rocm_bandwidth_test and HIP's runtime do them: each call the program
// makes there is the program's and recorded, however deep (a region
// iteration inside the agent callback), including those a deallocation
// callback makes inside the free and an asynchronous handler on the
// runtime's thread; none of the runtime's own (its freeze waits on a signal
// of its own through its exported functions). A function the runtime left
// out is recorded with the error the program got. The queue made in the
// agent callback is gtap's to watch: every dispatch on it is recorded, timed.
TEST(HsaCapture, CallsMadeInTheProgramsCallbacksAreRecorded) {
  HsaRun run = capture("hsa_callbacks", {"5"});
  ASSERT_EQ(run.result.exitCode, 0) << run.result.err;
  auto base = plain("hsa_callbacks", {"5"});
  ASSERT_EQ(base.exitCode, 0) << base.err;
  EXPECT_EQ(run.result.out, base.out);

  std::map<std::string, uint64_t> expected = printedCalls(run.result.out);
  ASSERT_GE(expected.size(), 20u) << run.result.out;
  ASSERT_EQ(expected["hsa_agent_get_info"], 4u) << "two agents, two questions each";
  std::map<std::string, uint64_t> recorded;
  auto rows = apiRows(run.file);
  for (const auto& [name, row] : rows) recorded[name] = row.count;
  EXPECT_EQ(recorded, expected);
  // The loader extension table the simulated runtime leaves out: the call
  // failed, as the program saw.
  EXPECT_EQ(rows["hsa_system_get_major_extension_table"], (ApiRow{1, 1}));
  EXPECT_EQ(rows["hsa_init"], (ApiRow{1, 0}));

  readers::Capture cap(run.file);
  auto work = readers::loadDeviceWork(cap);
  uint64_t timed = 0;
  for (const auto& op : work.ops)
    if (op.kind == schema::DeviceOpKind::KERNEL && op.name == "vector_add" && op.timed) ++timed;
  EXPECT_EQ(timed, 5u);
  EXPECT_EQ(timed, linesWith(run.result.out, "dispatch").size());
  bool intercepted = false;
  for (const auto& [id, o] : work.objects)
    if (o.kind == schema::ObjectKind::COMMAND_QUEUE && property(o, "intercepted") == "yes") intercepted = true;
  EXPECT_TRUE(intercepted);
  // The buffers allocated in the pool callback, by kind and size.
  std::multiset<std::string> allocated, printed;
  for (const auto& m : work.memory)
    if (!m.isFree) allocated.insert(readers::memoryKindName(m.kind) + " " + std::to_string(m.size));
  for (const auto& l : linesWith(run.result.out, "alloc")) printed.insert(l.substr(6));
  EXPECT_EQ(allocated, printed);
}

// An hsa_init that fails (the runtime refuses to start, and so never loads
// tools) leaves a capture holding the failed call, as a failed zeInit does;
// the program fails exactly as without gtap.
TEST(HsaCapture, FailedInitLeavesACaptureWithTheCall) {
  for (bool launcher : {true, false}) {
    std::string dir = freshDirectory(launcher ? "hsa-failed-init" : "hsa-failed-init-preload");
    EnvChanges env = {{"GTAP_SIM_HSA_FAIL_INIT", "1"}};
    ProcessResult r;
    if (launcher) {
      r = runProcess({gtapBinary(), "run", "--sim", "-q", "-o", dir + "/cap.gtap", "--", workload("hsa_vector_add"),
                      "2"},
                     env);
    } else {
      env.insert({{"LD_LIBRARY_PATH", simHsaDir()}, {"LD_PRELOAD", gtapLibrary()},
                  {"GTAP_OUTPUT", dir + "/cap.gtap"}, {"GTAP_QUIET", "1"}});
      r = runProcess({workload("hsa_vector_add"), "2"}, env);
    }
    auto base = runProcess({workload("hsa_vector_add"), "2"},
                           {{"LD_LIBRARY_PATH", simHsaDir()}, {"GTAP_SIM_HSA_FAIL_INIT", "1"}});
    EXPECT_EQ(base.exitCode, 1) << base.err;
    EXPECT_EQ(r.exitCode, base.exitCode) << r.err;
    EXPECT_EQ(r.out, base.out);
    EXPECT_NE(r.err.find("hsa_init"), std::string::npos) << r.err;
    auto rows = apiRows(dir + "/cap.gtap");
    EXPECT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows["hsa_init"], (ApiRow{1, 1})) << (launcher ? "gtap run" : "LD_PRELOAD");
  }
}

// Linked calls and calls through the program's own dlsym pointer, across a
// shut-down and a second start of the runtime: each recorded once.
TEST(HsaCapture, EveryCallIsRecordedOnceWhateverTheRoute) {
  HsaRun run = capture("hsa_api_counts", {"700"}, "api");
  ASSERT_EQ(run.result.exitCode, 0) << run.result.err;
  std::map<std::string, uint64_t> expected;
  for (const auto& line : linesWith(run.result.out, "calls")) {
    std::istringstream in(line);
    std::string word, name;
    uint64_t n = 0;
    in >> word >> name >> n;
    expected[name] = n;
  }
  ASSERT_EQ(expected.size(), 3u);
  EXPECT_EQ(apiCounts(run.file), expected);
}

// The dlopen + dlsym workload is seen as fully as the linked one: every
// dispatch, its kernel, and the calls it makes.
TEST(HsaCapture, DlopenedRuntimeIsCapturedInFull) {
  HsaRun run = capture("hsa_dlopen", {"6"});
  ASSERT_EQ(run.result.exitCode, 0) << run.result.err;
  readers::Capture cap(run.file);
  auto work = readers::loadDeviceWork(cap);
  uint64_t dispatches = 0;
  for (const auto& op : work.ops)
    if (op.kind == schema::DeviceOpKind::KERNEL && op.name == "vector_add" && op.timed) ++dispatches;
  EXPECT_EQ(dispatches, 6u);
  auto counts = apiCounts(run.file);
  EXPECT_EQ(counts["hsa_init"], 1u);
  EXPECT_EQ(counts["hsa_shut_down"], 1u);
  EXPECT_EQ(counts["hsa_queue_create"], 1u);
  EXPECT_EQ(counts["hsa_amd_memory_pool_allocate"], 3u);
  EXPECT_GE(counts["hsa_signal_store_screlease"], 6u);  // a doorbell per dispatch
}

// Without the launcher and without HSA_TOOLS_LIB: the runtime finds gtap by
// its HSA_AMD_TOOL_PRIORITY symbol. And the other way round: HSA_TOOLS_LIB
// alone, with nothing preloaded.
TEST(HsaCapture, ToolFoundByPrioritySymbolOrByToolsLibAlone) {
  for (bool preload : {true, false}) {
    std::string dir = freshDirectory(preload ? "hsa-bare-preload" : "hsa-tools-lib");
    EnvChanges env = {{"LD_LIBRARY_PATH", simHsaDir()}, {"GTAP_OUTPUT", dir + "/cap.gtap"},
                      {"GTAP_MODE", "api,kernels"}, {"GTAP_QUIET", "1"}};
    if (preload)
      env["LD_PRELOAD"] = gtapLibrary();
    else
      env["HSA_TOOLS_LIB"] = gtapLibrary();
    auto r = runProcess({workload("hsa_vector_add"), "3"}, env, {preload ? "HSA_TOOLS_LIB" : "LD_PRELOAD"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    readers::Capture cap(dir + "/cap.gtap");
    auto work = readers::loadDeviceWork(cap);
    uint64_t timed = 0;
    for (const auto& op : work.ops) timed += op.kind == schema::DeviceOpKind::KERNEL && op.timed;
    EXPECT_EQ(timed, 3u) << (preload ? "LD_PRELOAD" : "HSA_TOOLS_LIB");
    EXPECT_EQ(apiCounts(dir + "/cap.gtap")["hsa_init"], 1u);
  }
}

// A program that profiles itself gets the same answers under gtap, whose
// completion signals stand in for its own: the durations it prints are the
// ones gtap recorded for the same dispatches.
TEST(HsaCapture, ProgramsOwnProfilingStillWorks) {
  HsaRun run = capture("hsa_own_timestamps", {"4"});
  ASSERT_EQ(run.result.exitCode, 0) << run.result.err;
  readers::Capture cap(run.file);
  auto work = readers::loadDeviceWork(cap);
  std::vector<int64_t> recorded, printed;
  for (const auto& op : work.ops)
    if (op.kind == schema::DeviceOpKind::KERNEL && op.timed) recorded.push_back(op.durationNs());
  for (const auto& l : linesWith(run.result.out, "timestamp")) printed.push_back(std::stoll(l.substr(l.rfind(' ') + 1)));
  ASSERT_EQ(printed.size(), 4u);
  ASSERT_EQ(recorded.size(), printed.size());
  for (size_t i = 0; i < printed.size(); ++i) EXPECT_NEAR(recorded[i], printed[i], 2) << i;
}

// In api mode gtap leaves queues as the program made them: no device work.
TEST(HsaCapture, ApiModeRecordsNoDeviceWork) {
  HsaRun run = capture("hsa_pipeline", {"1"}, "api");
  ASSERT_EQ(run.result.exitCode, 0) << run.result.err;
  readers::Capture cap(run.file);
  auto work = readers::loadDeviceWork(cap);
  EXPECT_TRUE(work.ops.empty());
  bool sawQueue = false;
  for (const auto& [id, o] : work.objects)
    if (o.kind == schema::ObjectKind::COMMAND_QUEUE) {
      sawQueue = true;
      EXPECT_EQ(property(o, "intercepted"), "no");
    }
  EXPECT_TRUE(sawQueue);
}

// Dispatch stacks start in the program (the runtime's queue machinery between
// the doorbell and gtap is cut), and threads are told apart.
TEST(HsaCapture, DispatchStacksAndThreads) {
  HsaRun run = capture("hsa_multithread", {"3", "4", "1024"}, "api,kernels,stacks");
  ASSERT_EQ(run.result.exitCode, 0) << run.result.err;
  readers::Capture cap(run.file);
  auto work = readers::loadDeviceWork(cap);
  std::map<uint32_t, int> perThread;
  for (const auto& op : work.ops) {
    if (op.kind != schema::DeviceOpKind::KERNEL) continue;
    ++perThread[op.thread];
    ASSERT_NE(op.stack, 0u);
    const auto& frames = work.stacks.at(op.stack);
    ASSERT_FALSE(frames.empty());
    const readers::HostModule* m = work.moduleFor(frames[0]);
    ASSERT_NE(m, nullptr);
    EXPECT_NE(m->path.find("hsa_multithread"), std::string::npos) << m->path;
  }
  EXPECT_EQ(perThread.size(), 3u);
  for (const auto& [thread, n] : perThread) EXPECT_EQ(n, 4) << thread;
}

// Reports take HSA and Level Zero captures together.
TEST(HsaCapture, ReportsMixHsaAndLevelZeroCaptures) {
  HsaRun hsa = capture("hsa_vector_add", {"2"});
  ASSERT_EQ(hsa.result.exitCode, 0) << hsa.result.err;
  HsaRun ze = capture("ze_vector_add", {"2"});
  ASSERT_EQ(ze.result.exitCode, 0) << ze.result.err;
  auto kernels = runProcess({gtapBinary(), "kernels", "--format=jsonl", hsa.file, ze.file});
  ASSERT_EQ(kernels.exitCode, 0) << kernels.err;
  std::istringstream in(kernels.out);
  uint64_t vectorAdds = 0;
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line);
    if (j["kernel"] == "vector_add") vectorAdds += j["count"].get<uint64_t>();
  }
  EXPECT_EQ(vectorAdds, 4u);
  auto api = runProcess({gtapBinary(), "api", "--format=jsonl", hsa.file, ze.file});
  ASSERT_EQ(api.exitCode, 0) << api.err;
  std::set<std::string> apis;
  std::istringstream ain(api.out);
  for (std::string line; std::getline(ain, line);) apis.insert(nlohmann::json::parse(line)["api"].get<std::string>());
  EXPECT_TRUE(apis.count("hsa"));
  EXPECT_TRUE(apis.count("ze"));
  // Both processes in the overviews; the HSA agent by its product name.
  for (const char* verb : {"summary", "explain"}) {
    auto r = runProcess({gtapBinary(), verb, hsa.file, ze.file});
    EXPECT_EQ(r.exitCode, 0) << verb << ": " << r.err;
    EXPECT_NE(r.out.find("hsa_vector_add"), std::string::npos) << verb << ":\n" << r.out;
    EXPECT_NE(r.out.find("ze_vector_add"), std::string::npos) << verb << ":\n" << r.out;
    EXPECT_NE(r.out.find("gtap simulated GPU (gtap-sim-gpu)"), std::string::npos) << verb << ":\n" << r.out;
  }
  auto memory = runProcess({gtapBinary(), "memory", "--format=jsonl", hsa.file, ze.file});
  ASSERT_EQ(memory.exitCode, 0) << memory.err;
  EXPECT_NE(memory.out.find("\"device\""), std::string::npos) << memory.out;
  EXPECT_NE(memory.out.find("\"section\":\"transfers\""), std::string::npos) << memory.out;
  std::string dir = freshDirectory("hsa-mixed-export");
  auto exp = runProcess({gtapBinary(), "export", "--format=chrome", "-o", dir + "/t.json", hsa.file, ze.file});
  ASSERT_EQ(exp.exitCode, 0) << exp.err;
}

}  // namespace
}  // namespace gtap::test
