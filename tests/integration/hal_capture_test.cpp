// The IREE HAL front end on a program shaped like IREE (tests/workloads/hal):
// vtables found through the symbol table (or a build-id debug file), slots
// swapped for recording thunks, a layout no IREE version has refused, and a
// stripped program with no debug file left alone with one line.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "process.h"

namespace gtap::test {
namespace {

constexpr const char* kFill = "iree_hal_fake_command_buffer_fill_buffer";

// `gtap kernels --by=shape` rows, keyed "level kernel groups group_size".
std::map<std::string, nlohmann::json> kernelRows(const std::string& file);

struct ApiRow {
  uint64_t count = 0, failed = 0;
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

ProcessResult capture(const std::string& program, const std::string& file, const std::vector<std::string>& args,
                      const EnvChanges& env = {}) {
  std::vector<std::string> argv = {gtapBinary(), "run", "-m", "api", "-o", file, "--", program};
  argv.insert(argv.end(), args.begin(), args.end());
  return runProcess(argv, env);
}

// The build-id of an ELF file, as readelf prints it.
std::string buildId(const std::string& path) {
  auto r = runProcess({"readelf", "-n", path});
  std::smatch m;
  if (r.exitCode != 0 || !std::regex_search(r.out, m, std::regex("Build ID: ([0-9a-f]+)"))) return {};
  return m[1];
}

// Every slot call the program makes through the IREE-shaped vtable is recorded
// once per call, with its result; the program's output is unchanged.
void expectFixtureCalls(const std::string& file, uint32_t n, uint32_t threads) {
  auto rows = apiRows(file);
  EXPECT_EQ(rows[kFill].count, threads * (n + 1));
  EXPECT_EQ(rows[kFill].failed, threads) << "the fill with a 3-byte pattern fails with INVALID_ARGUMENT";
  EXPECT_EQ(rows["iree_hal_fake_command_buffer_copy_buffer"].count, threads * (n / 2));
  EXPECT_EQ(rows["iree_hal_fake_command_buffer_copy_buffer"].failed, 0u);
  for (const char* once : {"begin", "end", "update_buffer", "destroy"})
    EXPECT_EQ(rows[std::string("iree_hal_fake_command_buffer_") + once].count, threads) << once;
  EXPECT_EQ(rows["iree_hal_fake_command_buffer_dispatch"].count, threads * (n / 10 + 2));
  EXPECT_EQ(rows["iree_hal_fake_command_buffer_dispatch"].failed, threads) << "the dispatch of no executable";
  EXPECT_EQ(rows["iree_hal_fake_executable_cache_prepare_executable"].count, threads);
  EXPECT_EQ(rows["iree_hal_fake_executable_destroy"].count, 2 * threads) << "one from the cache, one from the loader";
  // The loader agrees with an executable cache in two slots too: it is taken
  // for what agrees most, so try_load is not read as prepare_executable.
  EXPECT_EQ(rows["iree_hal_fake_loader_try_load"].count, threads);
  EXPECT_EQ(rows["iree_hal_fake_executable_issue_call"].count, threads * (8 + 3)) << "one per workgroup";
  for (const char* queued : {"queue_fill", "queue_update", "queue_copy"})
    EXPECT_EQ(rows[std::string("iree_hal_fake_device_") + queued].count, threads * (n / 20 + 1)) << queued;
  for (const auto& [name, row] : rows)
    EXPECT_EQ(name.find("iree_hal_odd_"), std::string::npos) << name << " belongs to the refused vtable";
}

TEST(HalCapture, VtableSlotsAreRecordedOncePerCall) {
  std::string dir = freshDirectory("hal-symbols");
  auto plain = runProcess({workload("hal_fixture"), "1000", "3"});
  ASSERT_EQ(plain.exitCode, 0) << plain.err;
  auto run = capture(workload("hal_fixture"), dir + "/cap.gtap", {"1000", "3"});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_EQ(run.out, plain.out);
  expectFixtureCalls(dir + "/cap.gtap", 1000, 3);
}

// IREE's HAL in a library the program loads with dlopen after it started (a
// Python extension, a plugin): scanned at the program's next dlsym, before
// it can reach into the library, and recorded the same.
TEST(HalCapture, LibraryLoadedLaterIsHookedAtTheNextLookup) {
  std::string dir = freshDirectory("hal-dlopen");
  std::string library = std::filesystem::path(workload("hal_fixture")).parent_path() / "libhal_fixture.so";
  auto plain = runProcess({workload("hal_fixture_dlopen"), library, "300", "2"});
  ASSERT_EQ(plain.exitCode, 0) << plain.err;
  auto run = capture(workload("hal_fixture_dlopen"), dir + "/cap.gtap", {library, "300", "2"});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_EQ(run.out, plain.out);
  expectFixtureCalls(dir + "/cap.gtap", 300, 2);
}

// A layout no IREE version has (two slots swapped) is refused by name, with
// the slot that differs; the other vtable of the same image is still hooked.
TEST(HalCapture, MismatchedLayoutIsRefusedAndSaysWhy) {
  std::string dir = freshDirectory("hal-mismatch");
  auto run = capture(workload("hal_fixture"), dir + "/cap.gtap", {"10"});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_NE(run.err.find("not hooking iree_hal_odd_command_buffer_vtable"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("slot 10 is copy_buffer where it has fill_buffer"), std::string::npos) << run.err;
  EXPECT_EQ(run.err.find("iree_hal_fake_command_buffer_vtable"), std::string::npos) << run.err;
  EXPECT_EQ(apiRows(dir + "/cap.gtap")[kFill].count, 11u);
}

// Stripped, with the symbols in a separate debug file found by build-id under
// GTAP_DEBUG_PATH: the same calls are recorded.
TEST(HalCapture, StrippedImageUsesTheBuildIdDebugFile) {
  std::string dir = freshDirectory("hal-debug-file");
  std::string stripped = dir + "/hal_fixture";
  ASSERT_EQ(runProcess({"strip", "--strip-all", "-o", stripped, workload("hal_fixture")}).exitCode, 0);
  std::string id = buildId(workload("hal_fixture"));
  ASSERT_GT(id.size(), 2u) << "the fixture is linked with --build-id";
  ASSERT_EQ(buildId(stripped), id);
  std::string debugDir = dir + "/debug/.build-id/" + id.substr(0, 2);
  std::filesystem::create_directories(debugDir);
  ASSERT_EQ(runProcess({"objcopy", "--only-keep-debug", workload("hal_fixture"),
                        debugDir + "/" + id.substr(2) + ".debug"})
                .exitCode,
            0);
  auto plain = runProcess({stripped, "500", "2"});
  auto run = capture(stripped, dir + "/cap.gtap", {"500", "2"}, {{"GTAP_DEBUG_PATH", dir + "/nothing:" + dir + "/debug"}});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_EQ(run.out, plain.out);
  expectFixtureCalls(dir + "/cap.gtap", 500, 2);
}

// Stripped and no debug file anywhere: one line says HAL calls are not
// recorded, and the program runs as it would.
TEST(HalCapture, StrippedWithoutDebugFileSaysSoOnce) {
  std::string dir = freshDirectory("hal-stripped");
  std::string stripped = dir + "/hal_fixture";
  ASSERT_EQ(runProcess({"strip", "--strip-all", "-o", stripped, workload("hal_fixture")}).exitCode, 0);
  auto plain = runProcess({stripped, "100"});
  auto run = capture(stripped, dir + "/cap.gtap", {"100"}, {{"GTAP_DEBUG_PATH", dir + "/nothing"}});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_EQ(run.out, plain.out);
  std::regex line("IREE HAL: .*hal_fixture: it holds IREE's HAL but has no symbol table.*HAL calls are not recorded");
  auto lines = std::distance(std::sregex_iterator(run.err.begin(), run.err.end(), line), std::sregex_iterator());
  EXPECT_EQ(lines, 1) << run.err;
  // Nothing else of the program is recorded either, so no capture is written.
  EXPECT_FALSE(std::filesystem::exists(dir + "/cap.gtap"));
}

// With kernels: each dispatch recorded into a command buffer is a HAL-level
// kernel record named by its export (asked of the executable), with the
// workgroup count given and the export's workgroup size, untimed; the
// executable the cache prepared is listed with its format, bytes and exports.
TEST(HalCapture, DispatchesAreRecordedByExportName) {
  std::string dir = freshDirectory("hal-dispatch");
  auto run = runProcess({gtapBinary(), "run", "-m", "api,kernels", "-o", dir + "/cap.gtap", "--",
                         workload("hal_fixture"), "100", "2"});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  auto report = runProcess({gtapBinary(), "kernels", "--by=shape", "--format=jsonl", dir + "/cap.gtap"});
  ASSERT_EQ(report.exitCode, 0) << report.err;
  std::map<std::string, uint64_t> shapes, hostShapes;
  std::istringstream rows(report.out);
  for (std::string line; std::getline(rows, line);) {
    auto j = nlohmann::json::parse(line);
    std::string shape = std::string(j["kernel"]) + " " + std::string(j["groups"]) + " " + std::string(j["group_size"]);
    if (j["level"] == "host") {  // run on the host as a CPU driver runs them
      EXPECT_EQ(j["untimed"], 0) << line;
      EXPECT_GT(j["total"].get<int64_t>(), 0) << line;
      hostShapes[shape] += j["count"].get<uint64_t>();
      continue;
    }
    EXPECT_EQ(j["level"], "hal") << line;
    EXPECT_EQ(j["untimed"], j["count"]) << line;
    shapes[shape] += j["count"].get<uint64_t>();
  }
  // Per thread, two dispatches whose workgroups the fixture runs interleaved
  // through the executable's issue_call, and two through the functions its
  // dispatch_ptrs holds (gtap's thunks): one timed host execution each, from
  // its first workgroup's start to its last one's end. The issue_call runs
  // its workgroup through the thunk too, and it is counted once.
  EXPECT_EQ(hostShapes, (std::map<std::string, uint64_t>{{"fixture_fill_export 4,2,1 64,1,1", 2},
                                                          {"fixture_copy_export 3,1,1 8,8,1", 2},
                                                          {"fixture_copy_export 2,2,1 8,8,1", 2},
                                                          {"fixture_fill_export 5,1,1 64,1,1", 2}}));
  EXPECT_EQ(run.err.find("not timing"), std::string::npos) << "the fixture's executables check out: " << run.err;
  // Per thread, 11 dispatches: i = 0..10, every third (i % 3 == 2) the copy
  // export, the workgroup count x alternating 4 and 5.
  std::map<std::string, uint64_t> expected = {{"fixture_fill_export 4,2,1 64,1,1", 2 * 4},
                                              {"fixture_fill_export 5,2,1 64,1,1", 2 * 4},
                                              {"fixture_copy_export 4,2,1 8,8,1", 2 * 2},
                                              {"fixture_copy_export 5,2,1 8,8,1", 2 * 1}};
  EXPECT_EQ(shapes, expected);
  auto executables = runProcess({gtapBinary(), "executables", "--format=jsonl", dir + "/cap.gtap"});
  ASSERT_EQ(executables.exitCode, 0) << executables.err;
  std::multiset<std::string> exports;
  std::istringstream lines(executables.out);
  for (std::string line; std::getline(lines, line);) {
    auto j = nlohmann::json::parse(line);
    EXPECT_EQ(j["format"], "fixture-format") << line;
    EXPECT_EQ(j["size"], 25) << line;
    exports.insert(std::string(j["kernel"]) + " " + std::string(j["required_group_size"]));
  }
  EXPECT_EQ(exports, (std::multiset<std::string>{"fixture_copy_export 8,8,1", "fixture_copy_export 8,8,1",
                                                 "fixture_fill_export 64,1,1", "fixture_fill_export 64,1,1"}))
      << "one executable per thread, two exports each";
  // The export names were asked of the executables by gtap: not the program's calls.
  auto calls = apiRows(dir + "/cap.gtap");
  EXPECT_EQ(calls.count("iree_hal_fake_executable_function_info"), 0u);
  EXPECT_EQ(calls["iree_hal_fake_command_buffer_dispatch"].count, 24u);  // and the two that failed: no records
  // The reports count them apart from device work (they have no device times).
  auto summary = runProcess({gtapBinary(), "summary", dir + "/cap.gtap"});
  ASSERT_EQ(summary.exitCode, 0) << summary.err;
  EXPECT_NE(summary.out.find("IREE HAL     22 dispatches recorded into command buffers, of 2 executables"),
            std::string::npos)
      << summary.out;
  EXPECT_EQ(summary.out.find("device 4294967295"), std::string::npos) << summary.out;
  auto explain = runProcess({gtapBinary(), "explain", dir + "/cap.gtap"});
  ASSERT_EQ(explain.exitCode, 0) << explain.err;
  // What ran is the host's work, explained as a device's: the HAL-level records are not.
  EXPECT_NE(explain.out.find("host (IREE CPU driver) was busy"), std::string::npos) << explain.out;
  EXPECT_NE(explain.out.find("fixture_fill_export: "), std::string::npos) << explain.out;
  auto exported = runProcess({gtapBinary(), "export", "--format=chrome", "-o", dir + "/trace.json", dir + "/cap.gtap"});
  EXPECT_EQ(exported.exitCode, 0) << exported.err;
  // Transfers by direction, per thread: the device's queue transfers
  // (100/20+1 = 6 rounds of a 256-byte fill, a 14-byte update from host
  // memory and a 512-byte copy), and the command buffer's (100 fills of 64 to
  // 76 bytes, 7000 in all, the failing one not recorded; 50 copies of 128
  // bytes; one 32-byte update).
  auto memory = runProcess({gtapBinary(), "memory", "--format=jsonl", dir + "/cap.gtap"});
  ASSERT_EQ(memory.exitCode, 0) << memory.err;
  std::map<std::string, std::pair<uint64_t, uint64_t>> transfers;
  std::istringstream memoryRows(memory.out);
  for (std::string line; std::getline(memoryRows, line);) {
    auto j = nlohmann::json::parse(line);
    if (j["section"] == "transfers") transfers[j["kind"]] = {j["count"].get<uint64_t>(), j["bytes"].get<uint64_t>()};
  }
  EXPECT_EQ(transfers["fill"], std::make_pair(uint64_t{12 + 200}, uint64_t{12 * 256 + 2 * 7000}));
  EXPECT_EQ(transfers["copy host-to-device"], std::make_pair(uint64_t{12 + 2}, uint64_t{12 * 14 + 2 * 32}));
  EXPECT_EQ(transfers["copy device-to-device"], std::make_pair(uint64_t{12 + 100}, uint64_t{12 * 512 + 100 * 128}));
}

// The host executions of dispatches a driver runs through the export
// functions it took from the executable (IREE's newest local-task): each is
// one timed record on the host device, with the dispatch's workgroup count and
// size and the export's name, on the thread that ran its first workgroup; the
// program's results are what they are without gtap.
TEST(HalCapture, ExportFunctionsCalledDirectlyAreTimedThroughThunks) {
  std::string dir = freshDirectory("hal-thunks");
  auto plain = runProcess({workload("hal_fixture"), "20", "3"});
  ASSERT_EQ(plain.exitCode, 0) << plain.err;
  auto run = runProcess({gtapBinary(), "run", "-m", "api,kernels", "-o", dir + "/cap.gtap", "--",
                         workload("hal_fixture"), "20", "3"});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_EQ(run.out, plain.out);
  auto exported = runProcess({gtapBinary(), "export", "--format=jsonl", "-o", dir + "/all.jsonl", dir + "/cap.gtap"});
  ASSERT_EQ(exported.exitCode, 0) << exported.err;
  std::ifstream in(dir + "/all.jsonl");
  std::map<std::string, uint64_t> host;
  std::map<std::string, std::set<uint64_t>> threads;
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line);
    if (j["type"] != "device" || j["level"] != "host") continue;
    EXPECT_EQ(j["operation"], "host_execution") << line;
    ASSERT_TRUE(j.contains("end_ns")) << "timed: " << line;
    EXPECT_GE(j["end_ns"].get<uint64_t>(), j["start_ns"].get<uint64_t>()) << line;
    std::string shape = j["name"].get<std::string>() + " " + j["groups"].dump() + " " + j["group_size"].dump();
    ++host[shape];
    threads[shape].insert(j["thread"].get<uint64_t>());
  }
  EXPECT_EQ(host, (std::map<std::string, uint64_t>{{"fixture_fill_export [4,2,1] [64,1,1]", 3},
                                                    {"fixture_copy_export [3,1,1] [8,8,1]", 3},
                                                    {"fixture_copy_export [2,2,1] [8,8,1]", 3},
                                                    {"fixture_fill_export [5,1,1] [64,1,1]", 3}}))
      << "every thread's four dispatches, each once";
  for (const auto& [shape, ids] : threads) EXPECT_EQ(ids.size(), 3u) << shape << ": one per thread";
}

// An executable whose members disagree with what its vtable says (its
// export_count against its function_count) keeps its own functions: its
// dispatches have no host execution, gtap says why once, and the program's
// results are unchanged. The other executables are timed as before.
TEST(HalCapture, ExecutableWhoseMembersDisagreeIsLeftAlone) {
  std::string dir = freshDirectory("hal-thunks-refused");
  auto plain = runProcess({workload("hal_fixture"), "20", "2", "miscounted"});
  ASSERT_EQ(plain.exitCode, 0) << plain.err;
  auto run = runProcess({gtapBinary(), "run", "-m", "api,kernels", "-o", dir + "/cap.gtap", "--",
                         workload("hal_fixture"), "20", "2", "miscounted"});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_EQ(run.out, plain.out);
  std::regex line("IREE HAL: not timing the workgroups of iree_hal_fake_executable executables .*: its export_count "
                  "\\(byte 48\\) reads 1 where its function_count says 2; their dispatches have no host_execution "
                  "records");
  auto lines = std::distance(std::sregex_iterator(run.err.begin(), run.err.end(), line), std::sregex_iterator());
  EXPECT_EQ(lines, 1) << run.err;
  auto kernels = kernelRows(dir + "/cap.gtap");
  for (const char* shape : {"host fixture_fill_export 4,2,1 64,1,1", "host fixture_copy_export 3,1,1 8,8,1",
                            "host fixture_copy_export 2,2,1 8,8,1", "host fixture_fill_export 5,1,1 64,1,1"}) {
    ASSERT_TRUE(kernels.count(shape)) << shape;
    EXPECT_EQ(kernels[shape]["count"], 2) << shape;
  }
  EXPECT_FALSE(kernels.count("host fixture_fill_export 3,1,1 64,1,1")) << "the miscounted executable's dispatch";
  EXPECT_EQ(apiRows(dir + "/cap.gtap")["iree_hal_fake_executable_cache_prepare_executable"].count, 4u);
}

// Queue work ordered by a timeline semaphore (the fixture's rounds: an
// allocation, a submission of the command buffer binding it, a host signal
// and a wait, the buffer given back, a flush; one file import): each is a
// HAL-level record naming its method, command buffer, buffers and semaphore
// values, linked to the call that issued it, and the allocations are memory.
TEST(HalCapture, QueueWorkAndSemaphoresAreRecordedWithTheirObjects) {
  std::string dir = freshDirectory("hal-queue");
  auto run = runProcess({gtapBinary(), "run", "-m", "api,kernels,memory", "-o", dir + "/cap.gtap", "--",
                         workload("hal_fixture"), "100", "2"});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  auto exported = runProcess({gtapBinary(), "export", "--format=jsonl", "-o", dir + "/all.jsonl", dir + "/cap.gtap"});
  ASSERT_EQ(exported.exitCode, 0) << exported.err;
  std::ifstream in(dir + "/all.jsonl");
  std::map<std::string, std::vector<nlohmann::json>> byOperation;
  std::map<uint64_t, uint64_t> commandBufferOfThread;  // from its fill_buffer records
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line);
    if (j["type"] != "device" || j["level"] == "host") continue;
    ASSERT_EQ(j["level"], "hal") << line;
    byOperation[j["operation"]].push_back(j);
    if (j["operation"] == "fill_buffer") commandBufferOfThread[j["thread"]] = j["command_buffer"];
  }
  const uint64_t rounds = 2 * (100 / 20 + 1);
  for (const char* op : {"queue_alloca", "queue_execute", "semaphore_signal", "semaphore_wait", "queue_dealloca",
                         "queue_flush"})
    EXPECT_EQ(byOperation[op].size(), rounds) << op;
  EXPECT_EQ(byOperation["import_file"].size(), 2u);
  EXPECT_EQ(byOperation["begin"].size(), 2u);
  EXPECT_EQ(byOperation["end"].size(), 2u);
  EXPECT_EQ(byOperation["fill_buffer"].size(), 200u) << "the failing fill is not recorded";
  // Each dispatch's bindings (an iree_hal_buffer_ref_list_t on the stack
  // after the config): three buffer refs, of 256, 256 and 512 bytes at 0,
  // 256 and 512 into the program's memory.
  ASSERT_FALSE(byOperation["dispatch"].empty());
  for (const auto& j : byOperation["dispatch"]) {
    ASSERT_EQ(j["buffers"].size(), 3u) << j.dump();
    for (size_t b = 0; b < 3; ++b) {
      EXPECT_EQ(j["buffers"][b][0], j["buffers"][0][0]) << "one allocation";
      EXPECT_EQ(j["buffers"][b][1], 256 * b);
      EXPECT_EQ(j["buffers"][b][2], b == 2 ? 512 : 256);
    }
  }
  // Per thread, in order: round i's allocation signals 3i+1 and gives the
  // buffer the submission binds and the dealloca returns.
  std::map<uint64_t, std::vector<const nlohmann::json*>> allocas, executes, signals, waits, deallocas;
  for (const auto& j : byOperation["queue_alloca"]) allocas[j["thread"]].push_back(&j);
  for (const auto& j : byOperation["queue_execute"]) executes[j["thread"]].push_back(&j);
  for (const auto& j : byOperation["semaphore_signal"]) signals[j["thread"]].push_back(&j);
  for (const auto& j : byOperation["semaphore_wait"]) waits[j["thread"]].push_back(&j);
  for (const auto& j : byOperation["queue_dealloca"]) deallocas[j["thread"]].push_back(&j);
  ASSERT_EQ(allocas.size(), 2u);
  for (const auto& [thread, list] : allocas) {
    ASSERT_EQ(list.size(), rounds / 2);
    for (uint64_t i = 0; i < list.size(); ++i) {
      const auto& a = *list[i];
      const auto& e = *executes[thread].at(i);
      uint64_t buffer = a["buffers"][0][0];
      uint64_t semaphore = a["signals"][0][0];
      EXPECT_NE(buffer, 0u);
      EXPECT_EQ(a["bytes"], 4096);
      EXPECT_EQ(a["buffers"][0][2], 4096);
      EXPECT_EQ(a["signals"][0][1], 3 * i + 1);
      EXPECT_EQ(e["waits"], nlohmann::json::array({nlohmann::json::array({semaphore, 3 * i + 1})}));
      EXPECT_EQ(e["signals"], nlohmann::json::array({nlohmann::json::array({semaphore, 3 * i + 2})}));
      EXPECT_EQ(e["buffers"][0][0], buffer);
      EXPECT_EQ(e["command_buffer"], commandBufferOfThread[thread]) << "the command buffer recorded into";
      EXPECT_GT(e["call_index"].get<uint64_t>(), a["call_index"].get<uint64_t>());
      EXPECT_EQ((*signals[thread].at(i))["signals"][0], nlohmann::json::array({semaphore, 3 * i + 3}));
      EXPECT_EQ((*waits[thread].at(i))["waits"][0], nlohmann::json::array({semaphore, 3 * i + 3}));
      EXPECT_EQ((*deallocas[thread].at(i))["buffers"][0][0], buffer);
    }
  }
  for (const auto& j : byOperation["import_file"]) EXPECT_NE(j["buffers"][0][0], 0) << "the file it made";
  // The queue's allocations are device memory, each freed by its dealloca.
  auto memory = runProcess({gtapBinary(), "memory", "--format=jsonl", dir + "/cap.gtap"});
  ASSERT_EQ(memory.exitCode, 0) << memory.err;
  std::istringstream rows(memory.out);
  bool sawDevice = false;
  for (std::string line; std::getline(rows, line);) {
    auto j = nlohmann::json::parse(line);
    if (j["section"] != "allocations" || j["kind"] != "device") continue;
    sawDevice = true;
    EXPECT_EQ(j["allocations"], rounds) << line;
    EXPECT_EQ(j["frees"], rounds) << line;
    EXPECT_EQ(j["bytes"], rounds * 4096) << line;
  }
  EXPECT_TRUE(sawDevice) << memory.out;
  auto summary = runProcess({gtapBinary(), "summary", dir + "/cap.gtap"});
  EXPECT_NE(summary.out.find(std::to_string(rounds) + " queue submissions, " + std::to_string(rounds) +
                             " semaphore waits"),
            std::string::npos)
      << summary.out;
}

// IREE's newest sources wait on semaphore lists (fences, list and device
// waits) through iree_async_semaphore_multi_wait, which calls no vtable slot:
// the fixture waits after every submission that way. gtap cannot see those
// waits, and summary and info say so instead of counting only the waits
// through a wait slot as if they were all.
TEST(HalCapture, WaitsThatCallNoSlotAreSaidNotRecorded) {
  std::string dir = freshDirectory("hal-multi-wait");
  auto run = runProcess({gtapBinary(), "run", "-m", "api,kernels", "-o", dir + "/cap.gtap", "--",
                         workload("hal_fixture"), "100", "1"});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  const std::string fixture = workload("hal_fixture");
  auto summary = runProcess({gtapBinary(), "summary", dir + "/cap.gtap"});
  ASSERT_EQ(summary.exitCode, 0) << summary.err;
  EXPECT_NE(summary.out.find("6 queue submissions, 6 semaphore waits\n"), std::string::npos) << summary.out;
  EXPECT_NE(summary.out.find("IREE waits   not recorded: the IREE in " + fixture +
                             " waits on semaphore lists (iree_hal_semaphore_list_wait, iree_hal_fence_wait, "
                             "iree_hal_device_wait_semaphores, the VM's fence waits) through "
                             "iree_async_semaphore_multi_wait, which calls no HAL vtable slot; gtap does not see "
                             "those waits, and the 6 semaphore waits counted are only those through a wait slot"),
            std::string::npos)
      << summary.out;
  auto json = runProcess({gtapBinary(), "summary", "--format=jsonl", dir + "/cap.gtap"});
  ASSERT_EQ(json.exitCode, 0) << json.err;
  auto first = nlohmann::json::parse(json.out.substr(0, json.out.find('\n')));
  EXPECT_EQ(first["hal_waits_unrecorded_in"], nlohmann::json::array({fixture})) << json.out;
  auto info = runProcess({gtapBinary(), "info", dir + "/cap.gtap"});
  ASSERT_EQ(info.exitCode, 0) << info.err;
  EXPECT_NE(info.out.find("IREE waits   not recorded: the IREE in " + fixture), std::string::npos) << info.out;
  // Stripped of the function's symbol (LTO may inline it away), the
  // semaphores' async layout still tells.
  std::string stripped = dir + "/hal_fixture";
  ASSERT_EQ(runProcess({"objcopy", "--strip-symbol=iree_async_semaphore_multi_wait", fixture, stripped}).exitCode, 0);
  auto again = runProcess({gtapBinary(), "run", "-m", "api", "-o", dir + "/stripped.gtap", "--", stripped, "10"});
  ASSERT_EQ(again.exitCode, 0) << again.err;
  auto strippedInfo = runProcess({gtapBinary(), "info", "--format=jsonl", dir + "/stripped.gtap"});
  ASSERT_EQ(strippedInfo.exitCode, 0) << strippedInfo.err;
  EXPECT_EQ(nlohmann::json::parse(strippedInfo.out)["hal_waits_unrecorded_in"], nlohmann::json::array({stripped}));
}

// A host call the driver runs inline (IREE's local-sync, inside the hooked
// queue_host_call): what the program's function calls through the HAL is the
// program's (a fill queued, a semaphore signalled, recorded as HAL
// operations), while the driver's own signal of the call's signal list, made
// inside the same hooked call, stays the driver's.
TEST(HalCapture, CallsFromTheProgramsHostCallAreTheProgramsOwn) {
  std::string dir = freshDirectory("hal-host-call");
  auto plain = runProcess({workload("hal_fixture"), "100", "2", "host-calls"});
  ASSERT_EQ(plain.exitCode, 0) << plain.err;
  auto run = runProcess({gtapBinary(), "run", "-m", "api,kernels", "-o", dir + "/cap.gtap", "--",
                         workload("hal_fixture"), "100", "2", "host-calls"});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_EQ(run.out, plain.out);
  EXPECT_NE(run.out.find("thread 1 host_calls 3\n"), std::string::npos) << run.out;
  auto rows = apiRows(dir + "/cap.gtap");
  EXPECT_EQ(rows["iree_hal_fake_device_queue_host_call"].count, 2u * 3);
  EXPECT_EQ(rows["iree_hal_fake_device_queue_host_call"].failed, 0u);
  const uint64_t rounds = 100 / 20 + 1;
  EXPECT_EQ(rows["iree_hal_fake_device_queue_fill"].count, 2 * (rounds + 3));
  // Per thread: a host signal per round, the program's 3 from its host
  // calls, the driver's 3 of the calls' signal lists.
  EXPECT_EQ(rows["iree_hal_fake_semaphore_signal"].count, 2 * (rounds + 3 + 3));
  auto exported = runProcess({gtapBinary(), "export", "--format=jsonl", "-o", dir + "/all.jsonl", dir + "/cap.gtap"});
  ASSERT_EQ(exported.exitCode, 0) << exported.err;
  std::ifstream in(dir + "/all.jsonl");
  std::map<std::string, std::vector<nlohmann::json>> byOperation;
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line);
    if (j["type"] == "device" && j["level"] == "hal") byOperation[j["operation"]].push_back(j);
  }
  std::multiset<uint64_t> callbackFills;
  for (const auto& j : byOperation["queue_fill"])
    if (j["bytes"] == 64) callbackFills.insert(j["thread"].get<uint64_t>());
  EXPECT_EQ(byOperation["queue_fill"].size(), 2 * (rounds + 3));
  EXPECT_EQ(callbackFills.size(), 2u * 3) << "each host call's fill";
  // The program's signals: one per round and one per host call, values 1..3
  // on its own semaphore; the driver's signals of the calls' lists are not operations.
  EXPECT_EQ(byOperation["semaphore_signal"].size(), 2 * (rounds + 3));
  std::map<uint64_t, std::vector<uint64_t>> smallValues;  // semaphore -> values <= 3
  for (const auto& j : byOperation["semaphore_signal"]) {
    uint64_t value = j["signals"][0][1];
    if (value <= 3) smallValues[j["signals"][0][0].get<uint64_t>()].push_back(value);
  }
  ASSERT_EQ(smallValues.size(), 4u) << "each thread's marks semaphore and its round semaphore (value 3)";
  size_t marks = 0;
  for (const auto& [semaphore, values] : smallValues)
    if (values == std::vector<uint64_t>{1, 2, 3}) ++marks;
  EXPECT_EQ(marks, 2u);
}

// Against the real IREE runtime: enabled when gtap was configured with
// GTAP_TEST_IREE_BUILD naming a runtime-only IREE build (its samples/hal/hello),
// skipped, saying so, otherwise.
class RealIree : public ::testing::TestWithParam<std::string> {};

// The IREE build the tests were configured with; the environment's
// GTAP_TEST_IREE_BUILD overrides it.
std::string ireeBuild() {
  if (const char* env = std::getenv("GTAP_TEST_IREE_BUILD"); env && *env) return env;
#if defined(GTAP_TEST_IREE_BUILD_DIR)
  return GTAP_TEST_IREE_BUILD_DIR;
#else
  return "";
#endif
}

constexpr const char* kNoIreeBuild =
    "no IREE build: configure gtap with -DGTAP_TEST_IREE_BUILD=DIR (a runtime-only IREE build) to run the "
    "real-IREE tests";

uint64_t countEndingWith(const std::map<std::string, ApiRow>& rows, const std::string& suffix) {
  uint64_t n = 0;
  for (const auto& [name, row] : rows)
    if (name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      n += row.count;
  return n;
}

TEST_P(RealIree, HelloSampleIsCapturedOncePerCall) {
  std::string root = ireeBuild();
  if (root.empty()) GTEST_SKIP() << kNoIreeBuild;
  std::string hello = std::string(root) + "/samples/hal/hello/hello";
  ASSERT_TRUE(std::filesystem::exists(hello)) << hello << " is missing from GTAP_TEST_IREE_BUILD";
  std::string dir = freshDirectory("hal-iree-" + GetParam());
  std::string device = "--device=" + GetParam();
  auto plain = runProcess({hello, device});
  ASSERT_EQ(plain.exitCode, 0) << plain.err;
  auto run = capture(hello, dir + "/cap.gtap", {device});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_EQ(run.out, plain.out);
  EXPECT_EQ(run.err.find("IREE HAL"), std::string::npos) << "every vtable of this IREE is known: " << run.err;
  auto rows = apiRows(dir + "/cap.gtap");
  // What the sample asks of the HAL: two buffers, one command buffer with a
  // fill, a barrier and a copy, one submission, one wait.
  EXPECT_EQ(countEndingWith(rows, "_allocator_allocate_buffer"), 2u);
  EXPECT_EQ(countEndingWith(rows, "_device_create_command_buffer"), 1u);
  EXPECT_EQ(countEndingWith(rows, "_device_create_semaphore"), 1u);
  EXPECT_EQ(countEndingWith(rows, "_device_queue_execute"), 1u);
  EXPECT_EQ(countEndingWith(rows, "_semaphore_wait"), 1u);
  // The command buffer the device made records each command once; a driver
  // that replays it into another command buffer (local-sync: deferred into
  // inline) shows that one's calls apart, under its own name.
  std::set<std::string> commandBuffers;
  for (const auto& [name, row] : rows)
    if (name.size() > 12 && name.compare(name.size() - 12, 12, "_fill_buffer") == 0) {
      commandBuffers.insert(name.substr(0, name.size() - 12));
      EXPECT_EQ(row.count, 1u) << name;
      EXPECT_EQ(row.failed, 0u) << name;
    }
  ASSERT_FALSE(commandBuffers.empty());
  for (const std::string& cb : commandBuffers)
    for (const char* method : {"_begin", "_execution_barrier", "_copy_buffer", "_end"})
      EXPECT_EQ(rows[cb + method].count, 1u) << cb << method;
  if (GetParam() == "local-sync") {
    EXPECT_TRUE(commandBuffers.count("iree_hal_deferred_command_buffer"));
    EXPECT_TRUE(commandBuffers.count("iree_hal_inline_command_buffer"));
  }
}

// gtap's program on the real runtime (tests/workloads/hal/iree_dispatch.c),
// built when the tests were configured with GTAP_TEST_IREE_BUILD.
struct IreeDispatch {
  std::string program, executable;
};

IreeDispatch ireeDispatch() {
#if defined(GTAP_TEST_IREE_DISPATCH)
  return {GTAP_TEST_IREE_DISPATCH, GTAP_TEST_IREE_EXECUTABLE};
#else
  return {};
#endif
}

std::map<std::string, nlohmann::json> kernelRows(const std::string& file) {
  auto r = runProcess({gtapBinary(), "kernels", "--by=shape", "--format=jsonl", file});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  std::map<std::string, nlohmann::json> rows;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line);
    rows[std::string(j["level"]) + " " + std::string(j["kernel"]) + " " + std::string(j["groups"]) + " " +
         std::string(j["group_size"])] = j;
  }
  return rows;
}

// Five rounds, each a command buffer with a fill, a barrier and a dispatch of
// elementwise_mul over 4 workgroups, submitted and waited for: each HAL
// operation the program issues is recorded once, the dispatches by their
// export name, and the program's output is unchanged.
TEST_P(RealIree, DispatchesAreRecordedByExportName) {
  std::string root = ireeBuild();
  if (root.empty()) GTEST_SKIP() << kNoIreeBuild;
  IreeDispatch iree = ireeDispatch();
  if (iree.program.empty()) GTEST_FAIL() << "configure gtap with GTAP_TEST_IREE_BUILD set to build iree_dispatch";
  std::string dir = freshDirectory("hal-iree-dispatch-" + GetParam());
  std::vector<std::string> args = {"--device=" + GetParam(), "--executable=" + iree.executable, "--dispatches=5",
                                   "--workgroups=4"};
  std::vector<std::string> plainArgs = {iree.program};
  plainArgs.insert(plainArgs.end(), args.begin(), args.end());
  auto plain = runProcess(plainArgs);
  ASSERT_EQ(plain.exitCode, 0) << plain.err;
  EXPECT_NE(plain.out.find("result: 5 10 15 20"), std::string::npos) << plain.out;
  std::vector<std::string> argv = {gtapBinary(), "run", "-m", "api,kernels", "-o", dir + "/cap.gtap", "--"};
  argv.insert(argv.end(), plainArgs.begin(), plainArgs.end());
  auto run = runProcess(argv);
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_EQ(run.out, plain.out);
  auto kernels = kernelRows(dir + "/cap.gtap");
  ASSERT_TRUE(kernels.count("hal elementwise_mul 4,1,1 1,1,1"));
  EXPECT_EQ(kernels["hal elementwise_mul 4,1,1 1,1,1"]["count"], 5);
  EXPECT_EQ(kernels["hal elementwise_mul 4,1,1 1,1,1"]["untimed"], 5);
  // One timed host execution per dispatch: local-sync runs the workgroups
  // through the executable's issue_call, local-task (IREE after 3.11) calls
  // the export's function, taken from the executable when the command buffer
  // was recorded, on its workers (gtap's thunks).
  ASSERT_TRUE(kernels.count("host elementwise_mul 4,1,1 1,1,1"));
  EXPECT_EQ(kernels["host elementwise_mul 4,1,1 1,1,1"]["count"], 5);
  EXPECT_EQ(kernels["host elementwise_mul 4,1,1 1,1,1"]["untimed"], 0);
  EXPECT_GT(kernels["host elementwise_mul 4,1,1 1,1,1"]["total"].get<int64_t>(), 0);
  EXPECT_EQ(run.err.find("IREE HAL"), std::string::npos) << "every check of the executable passes: " << run.err;
  auto rows = apiRows(dir + "/cap.gtap");
  EXPECT_EQ(countEndingWith(rows, "_executable_cache_prepare_executable"), 1u);
  EXPECT_EQ(countEndingWith(rows, "_allocator_allocate_buffer"), 3u);
  EXPECT_EQ(countEndingWith(rows, "_device_create_command_buffer"), 5u);
  EXPECT_EQ(countEndingWith(rows, "_device_queue_execute"), 5u);
  EXPECT_EQ(countEndingWith(rows, "_semaphore_wait"), 5u);
  auto executables = runProcess({gtapBinary(), "executables", "--format=jsonl", dir + "/cap.gtap"});
  ASSERT_EQ(executables.exitCode, 0) << executables.err;
  auto j = nlohmann::json::parse(executables.out.substr(0, executables.out.find('\n')));
  EXPECT_EQ(j["format"], "system-elf-x86_64");
  EXPECT_EQ(j["kernel"], "elementwise_mul");
  EXPECT_EQ(j["size"].get<uint64_t>(), std::filesystem::file_size(iree.executable));
}

// A recording IREE made itself (its replay recorder, as --device_replay_output
// does), replayed by iree-run-replay under gtap: the replayed dispatches and
// submissions are recorded once each, and the replay still succeeds.
TEST_P(RealIree, IreeRunReplayOfIreesOwnRecording) {
  std::string root = ireeBuild();
  if (root.empty()) GTEST_SKIP() << kNoIreeBuild;
  IreeDispatch iree = ireeDispatch();
  if (iree.program.empty()) GTEST_FAIL() << "configure gtap with GTAP_TEST_IREE_BUILD set to build iree_dispatch";
  std::string replayTool = std::string(root) + "/tools/iree-run-replay";
  ASSERT_TRUE(std::filesystem::exists(replayTool)) << replayTool << " is missing from GTAP_TEST_IREE_BUILD";
  std::string dir = freshDirectory("hal-iree-replay-" + GetParam());
  std::string recording = dir + "/rounds.ireereplay";
  auto record = runProcess({iree.program, "--device=" + GetParam(), "--executable=" + iree.executable,
                            "--dispatches=5", "--workgroups=4", "--replay_output=" + recording});
  ASSERT_EQ(record.exitCode, 0) << record.err;
  auto plain = runProcess({replayTool, "--device=" + GetParam(), recording});
  ASSERT_EQ(plain.exitCode, 0) << plain.err;
  auto run = runProcess({gtapBinary(), "run", "-m", "api,kernels", "-o", dir + "/cap.gtap", "--", replayTool,
                         "--device=" + GetParam(), recording});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_EQ(run.out, plain.out);
  auto kernels = kernelRows(dir + "/cap.gtap");
  ASSERT_TRUE(kernels.count("hal elementwise_mul 4,1,1 1,1,1")) << "the export's name comes with the replayed executable";
  EXPECT_EQ(kernels["hal elementwise_mul 4,1,1 1,1,1"]["count"], 5);
  auto rows = apiRows(dir + "/cap.gtap");
  EXPECT_EQ(countEndingWith(rows, "_executable_cache_prepare_executable"), 1u);
  EXPECT_EQ(countEndingWith(rows, "_device_queue_execute"), 5u);
}

INSTANTIATE_TEST_SUITE_P(Devices, RealIree, ::testing::Values("local-sync", "local-task"),
                         [](const auto& info) { return info.param == "local-sync" ? "local_sync" : "local_task"; });

}  // namespace
}  // namespace gtap::test
