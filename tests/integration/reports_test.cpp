// What the reports say about a capture: hints that name the mode the capture
// was recorded with and suggest a mode only when it was not recorded; copy
// directions in every export; replay mode on a program gtap cannot replay.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <memory>
#include <set>
#include <sstream>

#include "../unit/counter_capture_builder.h"
#include "process.h"
#include "sqlite_query.h"

namespace gtap::test {
namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

size_t occurrences(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

ProcessResult gtap(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {gtapBinary()};
  argv.insert(argv.end(), args.begin(), args.end());
  return runProcess(argv);
}

// A capture with IREE HAL records and no device runtime underneath, recorded
// with every profiling mode but stacks: explain and memory name that mode and
// suggest none of what was recorded.
TEST(Reports, HintsOnAHalCaptureNameItsModeAndSuggestNothingRecorded) {
  std::string dir = freshDirectory("reports-hal-hints");
  std::string file = dir + "/cap.gtap";
  auto run = gtap({"run", "--sim", "-m", "api,kernels,memory", "-o", file, "--", workload("hal_fixture"), "20", "3"});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  auto explain = gtap({"explain", file});
  ASSERT_EQ(explain.exitCode, 0) << explain.err;
  EXPECT_FALSE(contains(explain.out, "--mode=api,kernels)")) << explain.out;
  EXPECT_FALSE(contains(explain.out, "record it with")) << explain.out;
  for (const char* verb : {"summary", "kernels", "memory", "executables", "api"}) {
    auto r = gtap({verb, file});
    ASSERT_EQ(r.exitCode, 0) << verb << ": " << r.err;
    EXPECT_FALSE(contains(r.out, "mode memory?")) << verb << ": " << r.out;
    EXPECT_FALSE(contains(r.out, "mode kernels?")) << verb << ": " << r.out;
    EXPECT_FALSE(contains(r.out, "--mode=")) << verb << ": " << r.out;
  }
  auto summary = gtap({"summary", file});
  EXPECT_TRUE(contains(summary.out, "recorded     mode api,kernels,memory")) << summary.out;
}

// Recorded with kernels and memory by a program that runs no device work:
// every report says nothing was found under that mode and suggests no mode.
TEST(Reports, NothingFoundUnderTheRecordedModeSuggestsNoMode) {
  std::string dir = freshDirectory("reports-nothing-found");
  std::string file = dir + "/cap.gtap";
  auto run = gtap({"run", "--sim", "-m", "api,kernels,memory", "-o", file, "--", workload("hsa_api_counts")});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  for (const char* verb : {"summary", "kernels", "memory", "executables", "api", "explain"}) {
    auto r = gtap({verb, file});
    ASSERT_EQ(r.exitCode, 0) << verb << ": " << r.err;
    EXPECT_FALSE(contains(r.out, "--mode=")) << verb << ": " << r.out;
    EXPECT_FALSE(contains(r.out, "?")) << verb << ": " << r.out;
  }
  auto explain = gtap({"explain", file});
  EXPECT_TRUE(contains(explain.out, "No device work was found: the capture was recorded with mode api,kernels,memory"))
      << explain.out;
  auto kernels = gtap({"kernels", file});
  EXPECT_TRUE(contains(kernels.out, "no kernel executions found; the capture was recorded with mode "
                                    "api,kernels,memory, which records them"))
      << kernels.out;
  auto executables = gtap({"executables", file});
  EXPECT_TRUE(contains(executables.out, "no executables found; the capture was recorded with mode "
                                        "api,kernels,memory, which records them"))
      << executables.out;
  auto memory = gtap({"memory", file});
  EXPECT_TRUE(contains(memory.out, "no transfers found; the capture was recorded with mode api,kernels,memory"))
      << memory.out;
}

// Recorded with memory but nothing allocated: memory says so and names the
// mode; recorded without it: memory says what was recorded and which mode
// records allocations.
TEST(Reports, MemoryHintSaysWhatWasRecordedAndFound) {
  std::string dir = freshDirectory("reports-memory-hints");
  std::string with = dir + "/with.gtap", without = dir + "/without.gtap";
  auto a = gtap({"run", "--sim", "-m", "api,memory", "-o", with, "--", workload("hsa_api_counts")});
  ASSERT_EQ(a.exitCode, 0) << a.err;
  auto b = gtap({"run", "--sim", "-m", "api", "-o", without, "--", workload("hsa_api_counts")});
  ASSERT_EQ(b.exitCode, 0) << b.err;
  auto m = gtap({"memory", with});
  ASSERT_EQ(m.exitCode, 0) << m.err;
  EXPECT_TRUE(contains(m.out, "no allocations found; the capture was recorded with mode api,memory, which records them"))
      << m.out;
  EXPECT_TRUE(contains(m.out, "no transfers recorded: the capture was recorded with mode api,memory (record them "
                              "with --mode=api,memory,kernels)"))
      << m.out;
  auto n = gtap({"memory", without});
  ASSERT_EQ(n.exitCode, 0) << n.err;
  EXPECT_TRUE(contains(n.out, "no allocations recorded: the capture was recorded with mode api (record them with "
                              "--mode=api,memory)"))
      << n.out;
  auto k = gtap({"kernels", without});
  EXPECT_TRUE(contains(k.out, "no kernel executions recorded: the capture was recorded with mode api (record them "
                              "with --mode=api,kernels)"))
      << k.out;
  auto e = gtap({"explain", without});
  EXPECT_TRUE(contains(e.out, "the capture was recorded with mode api (record it with --mode=api,kernels)")) << e.out;
}

// The direction of each copy is in the JSON Lines and SQLite exports, as in
// the Chrome one.
// gtap executables --filter keeps the kernels whose names match the glob;
// one matching nothing gives an empty table and says so.
TEST(Reports, ExecutablesFilterKeepsTheKernelsItMatches) {
  std::string dir = freshDirectory("reports-executables-filter");
  std::string file = dir + "/cap.gtap";
  auto run = gtap({"run", "--sim", "-m", "api,kernels", "-o", file, "--", workload("ze_pipeline")});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  auto kernels = [&](const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"executables", "--format=jsonl", file};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = gtap(args);
    EXPECT_EQ(r.exitCode, 0) << r.err;
    std::set<std::string> names;
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) names.insert(nlohmann::json::parse(line)["kernel"]);
    return names;
  };
  std::set<std::string> all = kernels({});
  EXPECT_GT(all.size(), 1u);
  std::set<std::string> scaled = kernels({"--filter", "sc*"});
  EXPECT_EQ(scaled, std::set<std::string>{"scale"});
  EXPECT_TRUE(all.count("scale"));
  EXPECT_TRUE(kernels({"--filter", "no-such-*"}).empty());
  auto text = gtap({"executables", "--filter", "no-such-*", file});
  EXPECT_EQ(text.exitCode, 0) << text.err;
  EXPECT_NE(text.out.find("no kernel matches 'no-such-*'"), std::string::npos) << text.out;
}

// gtap diff: a capture against itself changes nothing; against a run with
// four launches of 16 times the work, the kernel's count and time grew, which
// --fail-above turns into exit status 3 naming it.
TEST(Reports, DiffNamesWhatChangedAndFailsAboveTheThreshold) {
  std::string dir = freshDirectory("reports-diff");
  std::string a = dir + "/a.gtap", b = dir + "/b.gtap";
  ASSERT_EQ(gtap({"run", "--sim", "-q", "-m", "api,kernels", "-o", a, "--", workload("ze_vector_add"), "1", "256"})
                .exitCode, 0);
  ASSERT_EQ(gtap({"run", "--sim", "-q", "-m", "api,kernels", "-o", b, "--", workload("ze_vector_add"), "4", "4096"})
                .exitCode, 0);
  auto same = gtap({"diff", "--format=jsonl", "--fail-above", "0", a, a});
  EXPECT_EQ(same.exitCode, 0) << same.err;
  EXPECT_EQ(same.out, "");
  auto grew = gtap({"diff", "--format=jsonl", a, b});
  ASSERT_EQ(grew.exitCode, 0) << grew.err;
  bool kernel = false;
  std::istringstream lines(grew.out);
  for (std::string line; std::getline(lines, line);) {
    auto j = nlohmann::json::parse(line);
    if (j["kind"] != "kernel") continue;
    EXPECT_EQ(j["name"], "vector_add");
    EXPECT_EQ(j["count_before"], 1);
    EXPECT_EQ(j["count_after"], 4);
    EXPECT_GT(j["total_after"].get<int64_t>(), j["total_before"].get<int64_t>());
    EXPECT_EQ(j["change"].get<int64_t>(), j["total_after"].get<int64_t>() - j["total_before"].get<int64_t>());
    kernel = true;
  }
  EXPECT_TRUE(kernel) << grew.out;
  auto failed = gtap({"diff", "--fail-above", "50", a, b});
  EXPECT_EQ(failed.exitCode, 3) << failed.err;
  EXPECT_NE(failed.err.find("kernel vector_add"), std::string::npos) << failed.err;
  // A slower substitute: the same one launch over 1024 times the elements.
  std::string slower = dir + "/slower.gtap";
  ASSERT_EQ(gtap({"run", "--sim", "-q", "-m", "api,kernels", "-o", slower, "--", workload("ze_vector_add"), "1",
                  "262144"}).exitCode, 0);
  auto slowed = gtap({"diff", "--format=jsonl", "--fail-above", "50", a, slower});
  EXPECT_EQ(slowed.exitCode, 3) << slowed.err;
  EXPECT_NE(slowed.err.find("kernel vector_add"), std::string::npos) << slowed.err;
  bool slowedKernel = false;
  std::istringstream slowedLines(slowed.out);
  for (std::string line; std::getline(slowedLines, line);) {
    auto j = nlohmann::json::parse(line);
    EXPECT_EQ(j["type"], "diff");
    if (j["kind"] != "kernel") continue;
    EXPECT_EQ(j["name"], "vector_add");
    EXPECT_EQ(j["count_before"], 1);
    EXPECT_EQ(j["count_after"], 1);
    EXPECT_GT(j["change_percent"].get<double>(), 50.0) << line;
    slowedKernel = true;
  }
  EXPECT_TRUE(slowedKernel) << slowed.out;
  EXPECT_EQ(gtap({"diff", a, dir + "/missing.gtap"}).exitCode, 1);
  EXPECT_EQ(gtap({"diff", "--format=xml", a, b}).exitCode, 2);
  EXPECT_EQ(gtap({"diff", a}).exitCode, 2);
}

TEST(Reports, CopyDirectionIsInJsonLinesAndSqlite) {
  std::string dir = freshDirectory("reports-direction");
  std::string file = dir + "/cap.gtap";
  auto run = gtap({"run", "--sim", "-m", "api,kernels", "-o", file, "--", workload("ze_pipeline")});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  auto jsonl = gtap({"export", "--format=jsonl", "-o", "-", file});
  ASSERT_EQ(jsonl.exitCode, 0) << jsonl.err;
  std::map<std::string, int> directions;
  int copies = 0;
  std::istringstream lines(jsonl.out);
  for (std::string line; std::getline(lines, line);) {
    auto j = nlohmann::json::parse(line);
    if (j["type"] != "device") continue;
    if (j["kind"] == "copy") {
      ++copies;
      ASSERT_TRUE(j.contains("direction")) << line;
      ++directions[j["direction"]];
    } else {
      EXPECT_FALSE(j.contains("direction")) << line;
    }
  }
  ASSERT_GT(copies, 0);
  EXPECT_GT(directions["host-to-device"], 0);
  EXPECT_GT(directions["device-to-host"], 0);

  std::string db = dir + "/cap.db";
  auto exported = gtap({"export", "--format=sqlite", "-o", db, file});
  ASSERT_EQ(exported.exitCode, 0) << exported.err;
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open_v2(db.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  std::unique_ptr<sqlite3, decltype(&sqlite3_close)> conn(raw, &sqlite3_close);
  EXPECT_EQ(queryInt(raw, "SELECT COUNT(*) FROM device_ops WHERE kind = 'copy' AND direction = 'host-to-device'"),
            directions["host-to-device"]);
  EXPECT_EQ(queryInt(raw, "SELECT COUNT(*) FROM device_ops WHERE kind = 'copy' AND direction = 'device-to-host'"),
            directions["device-to-host"]);
  EXPECT_EQ(queryInt(raw, "SELECT COUNT(*) FROM device_ops WHERE kind <> 'copy' AND direction IS NOT NULL"), 0);
}

// The JSON Lines export of a Level Zero and an HSA capture, parsed back: as
// many processes, calls, device operations and stacks as the SQLite export
// of the same files holds; the level and copy-direction totals add up to the
// operations; the memory rows are the allocations and frees `gtap memory`
// counts, each inside the call that made it.
TEST(Reports, JsonLinesCountsEqualTheSqliteExports) {
  std::string dir = freshDirectory("reports-jsonl-sqlite");
  std::string ze = dir + "/ze.gtap", hsa = dir + "/hsa.gtap";
  ASSERT_EQ(gtap({"run", "--sim", "-q", "-m", "api,kernels,memory,stacks", "-o", ze, "--", workload("ze_pipeline")})
                .exitCode, 0);
  ASSERT_EQ(gtap({"run", "--sim", "-q", "-m", "api,kernels,memory,stacks", "-o", hsa, "--",
                  workload("hsa_pipeline")}).exitCode, 0);
  auto jsonl = gtap({"export", "--format=jsonl", "-o", "-", ze, hsa});
  ASSERT_EQ(jsonl.exitCode, 0) << jsonl.err;
  std::map<std::string, int64_t> rows;
  std::map<std::string, int64_t> levelOps, directionCopies, opsByLevel, copiesByDirection;
  int64_t memoryWithCall = 0, allocations = 0, frees = 0;
  std::set<std::pair<int64_t, int64_t>> stacks;
  std::istringstream lines(jsonl.out);
  bool first = true;
  for (std::string line; std::getline(lines, line);) {
    auto j = nlohmann::json::parse(line);
    ASSERT_TRUE(j.contains("type")) << line;
    if (first) {
      EXPECT_EQ(j["type"], "schema") << line;
    }
    first = false;
    std::string type = j["type"];
    ++rows[type];
    if (type == "stack") stacks.insert({j["pid"].get<int64_t>(), j["id"].get<int64_t>()});
    if (type == "device") {
      ++opsByLevel[j["level"]];
      if (j["kind"] == "copy") ++copiesByDirection[j["direction"].get<std::string>() + "/" + j["level"].get<std::string>()];
    }
    if (type == "level") levelOps[j["level"]] += j["operations"].get<int64_t>();
    if (type == "copy_direction")
      directionCopies[j["direction"].get<std::string>() + "/" + j["level"].get<std::string>()] += j["copies"].get<int64_t>();
    if (type == "memory") {
      ++(j["event"] == "free" ? frees : allocations);
      if (j.contains("function")) {
        ++memoryWithCall;
        std::string f = j["function"];
        EXPECT_TRUE(f.rfind("ze", 0) == 0 || f.rfind("hsa", 0) == 0) << line;
      }
    }
  }
  EXPECT_EQ(rows["schema"], 1);
  EXPECT_EQ(rows["process"], 2);
  EXPECT_EQ(levelOps, opsByLevel);
  EXPECT_EQ(directionCopies, copiesByDirection);
  EXPECT_GT(allocations, 0);
  EXPECT_GT(frees, 0);
  EXPECT_EQ(memoryWithCall, allocations + frees) << "every allocation and free was made inside a recorded call";

  std::string db = dir + "/all.db";
  ASSERT_EQ(gtap({"export", "--format=sqlite", "-o", db, ze, hsa}).exitCode, 0);
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open_v2(db.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  std::unique_ptr<sqlite3, decltype(&sqlite3_close)> conn(raw, &sqlite3_close);
  EXPECT_EQ(queryInt(raw, "SELECT COUNT(*) FROM processes"), rows["process"]);
  EXPECT_EQ(queryInt(raw, "SELECT COUNT(*) FROM api_calls"), rows["api"]);
  EXPECT_EQ(queryInt(raw, "SELECT COUNT(*) FROM device_ops"), rows["device"]);
  EXPECT_EQ(queryInt(raw, "SELECT COUNT(*) FROM (SELECT DISTINCT process_id, stack FROM stack_frames)"),
            static_cast<int64_t>(stacks.size()));
  EXPECT_EQ(queryInt(raw, "SELECT COUNT(*) FROM allocations"), rows["memory"]);
  EXPECT_EQ(queryInt(raw, "SELECT COUNT(*) FROM allocations WHERE event = 'free'"), frees);
  EXPECT_GT(rows["api"], 0);
  EXPECT_GT(rows["device"], 0);

  // The allocations and frees `gtap memory` counts.
  auto memory = gtap({"memory", "--format=jsonl", ze, hsa});
  ASSERT_EQ(memory.exitCode, 0) << memory.err;
  int64_t reportedAllocations = 0, reportedFrees = 0;
  std::istringstream memoryLines(memory.out);
  for (std::string line; std::getline(memoryLines, line);) {
    auto j = nlohmann::json::parse(line);
    if (j["type"] != "allocation") continue;
    reportedAllocations += j["allocations"].get<int64_t>();
    reportedFrees += j["frees"].get<int64_t>();
  }
  EXPECT_EQ(reportedAllocations, allocations);
  EXPECT_EQ(reportedFrees, frees);
}

// Every command that writes a file says so on stderr with its size; reading
// progress is drawn only when asked or on a terminal (never into a pipe, as
// here), and with --progress=always ends at 100%.
TEST(Reports, WrittenFilesAreSaidAndProgressOnlyWhereWanted) {
  std::string dir = freshDirectory("reports-wrote");
  std::string file = dir + "/cap.gtap";
  ASSERT_EQ(gtap({"run", "--sim", "-q", "-m", "api,kernels,stacks", "-o", file, "--", workload("ze_vector_add"), "20",
                  "256"}).exitCode, 0);
  for (const auto& [args, target] :
       std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"export", "--format=perfetto", "-o", dir + "/run.pftrace", file}, dir + "/run.pftrace"},
           {{"export", "--format=sqlite", "-o", dir + "/run.db", file}, dir + "/run.db"},
           {{"flame", "--format=svg", "-o", dir + "/run.svg", file}, dir + "/run.svg"}}) {
    auto r = gtap(args);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_TRUE(contains(r.err, ": wrote " + target + " (")) << r.err;
    EXPECT_TRUE(contains(r.err, "iB)") || contains(r.err, " B)")) << r.err;
    EXPECT_FALSE(contains(r.err, "[#")) << "no progress into a pipe: " << r.err;
    EXPECT_FALSE(contains(r.err, "[-")) << "no progress into a pipe: " << r.err;
  }
  // Standard output is not a file written.
  auto toStdout = gtap({"export", "--format=jsonl", "-o", "-", file});
  ASSERT_EQ(toStdout.exitCode, 0) << toStdout.err;
  EXPECT_FALSE(contains(toStdout.err, "wrote")) << toStdout.err;
  auto shown = gtap({"summary", "--progress=always", file});
  ASSERT_EQ(shown.exitCode, 0) << shown.err;
  EXPECT_TRUE(contains(shown.err, "] 100% ")) << shown.err;
  EXPECT_TRUE(contains(shown.err, " read")) << shown.err;
  auto quiet = gtap({"--progress=never", "summary", file});
  ASSERT_EQ(quiet.exitCode, 0) << quiet.err;
  EXPECT_EQ(quiet.err, "");
  EXPECT_EQ(gtap({"summary", "--progress=sometimes", file}).exitCode, 2);
}

// An IREE HAL copy_buffer between buffers whose memory gtap saw allocated
// takes its direction from their memory types, with kernels alone as with
// memory; copies between memory gtap did not see made stay device-to-device.
TEST(Reports, HalCopyDirectionComesFromTheBuffersMemoryTypes) {
  for (const char* mode : {"api,kernels", "api,kernels,memory"}) {
    std::string dir = freshDirectory(std::string("reports-hal-direction-") + mode);
    std::string file = dir + "/cap.gtap";
    auto plain = runProcess({workload("hal_fixture"), "20", "1", "typed-copies"});
    ASSERT_EQ(plain.exitCode, 0) << plain.err;
    auto run = gtap({"run", "-m", mode, "-o", file, "--", workload("hal_fixture"), "20", "1", "typed-copies"});
    ASSERT_EQ(run.exitCode, 0) << run.err;
    EXPECT_EQ(run.out, plain.out);
    auto jsonl = gtap({"export", "--format=jsonl", "-o", "-", file});
    ASSERT_EQ(jsonl.exitCode, 0) << jsonl.err;
    std::map<std::string, int> typed, untyped;
    std::istringstream lines(jsonl.out);
    for (std::string line; std::getline(lines, line);) {
      auto j = nlohmann::json::parse(line);
      if (j["type"] != "device" || !j.contains("operation") || j["operation"] != "copy_buffer") continue;
      ++(j["bytes"] == 256 ? typed : untyped)[j["direction"]];
    }
    EXPECT_EQ(typed, (std::map<std::string, int>{{"device-to-host", 1}, {"host-to-device", 1}})) << mode;
    EXPECT_EQ(untyped, (std::map<std::string, int>{{"device-to-device", 10}})) << mode;
  }
}

// An HSA program under -m replay: one line on stderr while capturing, and
// dump does not call the capture hermetic.
TEST(Reports, ReplayOfAnHsaProgramRecordsItsObjectsWithoutChangingIt) {
  std::string dir = freshDirectory("reports-replay-hsa");
  std::string file = dir + "/cap.gtap";
  auto plain = runProcess({workload("hsa_pipeline")}, {{"LD_LIBRARY_PATH", std::string(GTAP_TEST_SIM_DIR) + "/hsa"}});
  ASSERT_EQ(plain.exitCode, 0) << plain.err;
  auto run = gtap({"run", "--sim", "-m", "replay", "-o", file, "--", workload("hsa_pipeline")});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_EQ(run.out, plain.out);
  EXPECT_FALSE(contains(run.err, "are not replayed")) << run.err;
  auto dump = gtap({"dump", file});
  ASSERT_EQ(dump.exitCode, 0) << dump.err;
  for (const char* op : {"hsaAgent", "hsaPool", "hsaAllocate", "hsaQueueCreate", "hsaCodeObject", "hsaKernel",
                         "hsaSignalCreate", "hsaSignalWait", "hsaBarrier", "hsaCopy", "hsaFree"})
    EXPECT_TRUE(contains(dump.out, std::string(" ") + op + " (")) << op << "\n" << dump.out;
}

// An IREE program on a CPU driver under -m replay: told once while capturing
// (it used to get neither a file nor a word).
TEST(Reports, ReplayOfAnIreeCpuProgramSaysSoOnce) {
  std::string dir = freshDirectory("reports-replay-hal");
  std::string file = dir + "/cap.gtap";
  auto plain = runProcess({workload("hal_fixture"), "20", "3"});
  ASSERT_EQ(plain.exitCode, 0) << plain.err;
  auto run = gtap({"run", "-m", "replay", "-o", file, "--", workload("hal_fixture"), "20", "3"});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_EQ(run.out, plain.out);
  EXPECT_EQ(occurrences(run.err, "are not replayed"), 1u) << run.err;
  EXPECT_TRUE(contains(run.err, "--mode=replay: IREE HAL programs are not replayed")) << run.err;
}


// --- gtap counters and gtap kernels --counters, on captures the format's
// writer made with counters the test chose.

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::vector<nlohmann::json> jsonLines(const std::string& text) {
  std::vector<nlohmann::json> out;
  for (const auto& l : lines(text)) out.push_back(nlohmann::json::parse(l));
  return out;
}

// Two kernels measured with GRBM_COUNT, GRBM_GUI_ACTIVE and SQ_WAVES; one
// counter asked for that needs another pass; a frequency series.
std::string countersCapture(const std::string& dir) {
  CounterCaptureBuilder b;
  b.api = schema::Api::HSA;
  b.sets.push_back({1, "hsaAqlProfile", "", {{"GRBM_COUNT", "cycles"}, {"GRBM_GUI_ACTIVE", "cycles"}, {"SQ_WAVES"}}});
  b.notes.push_back({"TA_BUSY", "needs another pass (2 of 2)", 1});
  b.kernel("scale", 10000, 11000, 1, {2000, 1000, 8}, {4, 1, 1});
  b.kernel("scale", 20000, 23000, 1, {4000, 3000, 24}, {12, 1, 1});
  b.kernel("copy", 30000, 30500);
  b.kernel("add", 40000, 42000, 1, {2000, 2000, 2});
  b.series.push_back({"rocmSmi", 1000000, {{"frequency", "MHz"}, {"energy", "uJ", true}}, {0, 1000000, 2000000},
                      {1000, 0, 1400, 5, 1200, 20}});
  std::string file = dir + "/counters.gtap";
  EXPECT_EQ(b.write(file), "");
  return file;
}

TEST(CountersReport, PerKernelTableNotesAndDeviceMetrics) {
  std::string file = countersCapture(freshDirectory("counters-report"));
  auto text = gtap({"counters", file});
  ASSERT_EQ(text.exitCode, 0) << text.err;
  EXPECT_TRUE(contains(text.out, "Asked for and not collected:\n  pid 4242, counting GPU: TA_BUSY: needs another "
                                 "pass (2 of 2)"))
      << text.out;
  EXPECT_TRUE(contains(text.out, "Device metrics")) << text.out;
  auto csv = gtap({"counters", "--format=csv", file});
  ASSERT_EQ(csv.exitCode, 0) << csv.err;
  auto rows = lines(csv.out);
  ASSERT_FALSE(rows.empty());
  EXPECT_EQ(rows[0], "kernel,counter,units,dispatches,total,mean,min,max");
  auto has = [&](const std::string& row) { return std::find(rows.begin(), rows.end(), row) != rows.end(); };
  EXPECT_TRUE(has("scale,SQ_WAVES,-,2,32,16,8,24")) << csv.out;
  EXPECT_TRUE(has("scale,GRBM_GUI_ACTIVE,cycles,2,4000,2000,1000,3000")) << csv.out;
  EXPECT_TRUE(has("scale,busy share,ratio,2,-,0.666667,0.5,0.75")) << csv.out;
  EXPECT_TRUE(has("scale,waves per work-group,waves,2,-,2,2,2")) << csv.out;
  EXPECT_TRUE(has("add,achieved frequency,MHz,1,-,1000,1000,1000")) << csv.out;
  EXPECT_FALSE(contains(csv.out, "copy")) << "an unmeasured kernel has no counters\n" << csv.out;
  // A script reading the table still hears of what was not collected.
  EXPECT_TRUE(contains(csv.err, "not collected: pid 4242, counting GPU: TA_BUSY")) << csv.err;
  auto metrics = gtap({"counters", "--device-metrics", "--format=jsonl", file});
  ASSERT_EQ(metrics.exitCode, 0) << metrics.err;
  auto m = jsonLines(metrics.out);
  ASSERT_EQ(m.size(), 2u) << metrics.out;
  EXPECT_EQ(m[0]["metric"], "frequency");
  EXPECT_EQ(m[0]["samples"], 3);
  EXPECT_DOUBLE_EQ(m[0]["mean"].get<double>(), 1200);
  EXPECT_EQ(m[1]["units"], "uJ/s");
  EXPECT_DOUBLE_EQ(m[1]["rate"].get<double>(), 10000);  // 20 uJ over 2 ms
}

TEST(CountersReport, PerDispatchRows) {
  std::string file = countersCapture(freshDirectory("counters-dispatch"));
  auto r = gtap({"counters", "--per-dispatch", "--format=jsonl", file});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  auto rows = jsonLines(r.out);
  ASSERT_EQ(rows.size(), 3u) << r.out;
  EXPECT_EQ(rows[1]["kernel"], "scale");
  EXPECT_EQ(rows[1]["dispatch"], 1);
  EXPECT_EQ(rows[1]["device_time"], 3000);
  EXPECT_EQ(rows[1]["SQ_WAVES"], 24);
  EXPECT_DOUBLE_EQ(rows[1]["busy_share"].get<double>(), 0.75);
  EXPECT_EQ(rows[2]["kernel"], "add");
  EXPECT_EQ(rows[2]["dispatch"], 3);
  EXPECT_EQ(rows[2]["process"], "pid 4242");
  EXPECT_EQ(rows[2]["device"], "counting GPU");
}

TEST(CountersReport, KernelsGainAColumnPerCounter) {
  std::string file = countersCapture(freshDirectory("counters-kernels"));
  auto r = gtap({"kernels", "--counters", "--format=csv", file});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  auto rows = lines(r.out);
  ASSERT_EQ(rows.size(), 4u) << r.out;
  EXPECT_TRUE(contains(rows[0], ",measured,mean_GRBM_COUNT,mean_GRBM_GUI_ACTIVE,mean_SQ_WAVES")) << rows[0];
  bool scale = false, copy = false;
  for (const auto& row : rows) {
    if (row.rfind("scale,", 0) == 0) scale = contains(row, ",2,3000,2000,16");
    if (row.rfind("copy,", 0) == 0) copy = contains(row, ",0,-,-,-");
  }
  EXPECT_TRUE(scale) << r.out;
  EXPECT_TRUE(copy) << r.out;
  auto by = gtap({"kernels", "--counters", "--by=queue", file});
  EXPECT_EQ(by.exitCode, 2);
}

TEST(CountersReport, RooflineTableAndPlot) {
  std::string dir = freshDirectory("counters-roofline");
  CounterCaptureBuilder b;
  b.peakFlops = 20e12;
  b.peakBytes = 0.5e12;
  b.sets.push_back({2, "levelZeroMetricQuery", "Roofline", {{"XVE_FP32_FLOP", "flop"}, {"GPU_MEMORY_BYTE_READ", "bytes"},
                                                             {"GPU_MEMORY_BYTE_WRITE", "bytes"}}});
  b.kernel("gemm", 0, 1000, 2, {6e6, 1e5, 5e4});
  b.kernel("gemm", 2000, 4000, 2, {9e6, 2e5, 5e4});
  b.kernel("axpy", 5000, 9000, 2, {2e6, 8e6, 4e6});
  b.kernel("plain", 10000, 11000);
  std::string file = dir + "/roofline.gtap";
  ASSERT_EQ(b.write(file), "");
  auto r = gtap({"counters", "--roofline", "--format=jsonl", file});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  auto rows = jsonLines(r.out);
  ASSERT_EQ(rows.size(), 2u) << r.out;
  auto near = [](double a, double b) { return std::fabs(a - b) <= 1e-5 * std::fabs(b); };
  for (const auto& row : rows) {
    double flops = row["kernel"] == "gemm" ? 15e6 : 2e6;
    double bytes = row["kernel"] == "gemm" ? 4e5 : 12e6;
    double seconds = row["kernel"] == "gemm" ? 3e-6 : 4e-6;
    EXPECT_TRUE(near(row["intensity"].get<double>(), flops / bytes)) << row;
    EXPECT_TRUE(near(row["flop_per_s"].get<double>(), flops / seconds)) << row;
    EXPECT_TRUE(near(row["peak_flop_per_s"].get<double>(), 20e12)) << row;
    double attainable = std::min(20e12, flops / bytes * 0.5e12);
    EXPECT_TRUE(near(row["attainable_flop_per_s"].get<double>(), attainable)) << row;
  }
  std::string svg = dir + "/roofline.svg";
  auto plot = gtap({"counters", "--roofline", "--format=svg", "-o", svg, file});
  ASSERT_EQ(plot.exitCode, 0) << plot.err;
  EXPECT_EQ(runProcess({"xmllint", "--noout", svg}).exitCode, 0);
  std::ifstream in(svg);
  std::string body((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(occurrences(body, "<circle class=\"point\""), 2u) << body;
  EXPECT_TRUE(contains(body, "data-kernel=\"gemm\"")) << body;
  EXPECT_TRUE(contains(body, "data-kernel=\"axpy\"")) << body;
  EXPECT_EQ(occurrences(body, "<line class=\"ridge\" data-intensity=\"40\""), 1u) << body;  // 20e12 / 0.5e12
  // gtap flame's page has the same plot, and a row per kernel.
  std::string page = dir + "/flame.html";
  auto flame = gtap({"flame", "-o", page, file});
  ASSERT_EQ(flame.exitCode, 0) << flame.err;
  std::ifstream pageIn(page);
  std::string html((std::istreambuf_iterator<char>(pageIn)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(contains(html, "<section id=\"roofline\">")) << html;
  EXPECT_EQ(occurrences(html, "<circle class=\"point\""), 2u);
  EXPECT_EQ(occurrences(html, "<tr class=\"roofline-kernel\">"), 2u);
  // The plot is a file: refused over an existing one, and without --roofline.
  EXPECT_EQ(gtap({"counters", "--roofline", "--format=svg", "-o", svg, file}).exitCode, 2);
  EXPECT_EQ(gtap({"counters", "--format=svg", "-o", dir + "/other.svg", file}).exitCode, 2);
}

TEST(CountersReport, DamagedCounterDataIsSaidNamingTheFile) {
  std::string dir = freshDirectory("counters-hostile");
  CounterCaptureBuilder b;
  b.sets.push_back({1, "hsaAqlProfile", "", {{"SQ_WAVES"}, {"GRBM_COUNT", "cycles"}}});
  b.kernel("good", 0, 100, 1, {4, 100});
  b.kernel("ghost", 200, 300, 5, {1, 2});
  b.kernel("long", 400, 500, 1, {1, 2, 3});
  b.kernel("short", 600, 700, 1, {1});
  b.series.push_back({"sysman", 1000, {{"a"}, {"b"}}, {0, 1, 2}, {1, 2, 3, 4, 5, 6, 7}});
  std::string file = dir + "/hostile.gtap";
  ASSERT_EQ(b.write(file), "");
  for (std::vector<std::string> args : {std::vector<std::string>{"counters"}, {"counters", "--per-dispatch"},
                                        {"counters", "--roofline"}, {"counters", "--device-metrics"},
                                        {"kernels", "--counters"}}) {
    args.push_back(file);
    auto r = gtap(args);
    EXPECT_EQ(r.exitCode, 0) << args[0] << " " << args[1] << ": " << r.err;
    EXPECT_TRUE(contains(r.err, file + ": 1 dispatch names counter set 5, which the file does not define")) << r.err;
    EXPECT_TRUE(contains(r.err, file + ": 1 dispatch of counter set 1 carries 3 values for its 2 counters")) << r.err;
    EXPECT_TRUE(contains(r.err, file + ": 1 dispatch of counter set 1 carries 1 values for its 2 counters")) << r.err;
    EXPECT_TRUE(contains(r.err, "device metrics hold 7 values for 3 samples of 2 metrics")) << r.err;
  }
  auto dispatches = gtap({"counters", "--per-dispatch", "--format=csv", file});
  EXPECT_EQ(lines(dispatches.out).size(), 2u) << dispatches.out;  // the header and "good"
}

TEST(CountersReport, CaptureWithoutCountersSaysHowToRecordThem) {
  std::string dir = freshDirectory("counters-none");
  CounterCaptureBuilder b;
  b.kernel("plain", 0, 100);
  std::string file = dir + "/plain.gtap";
  ASSERT_EQ(b.write(file), "");
  auto r = gtap({"counters", file});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "no measured dispatches in " + file + " (record counters with gtap run --counters"))
      << r.out;
  EXPECT_EQ(gtap({"counters"}).exitCode, 2);
  EXPECT_EQ(gtap({"counters", "--list", file}).exitCode, 2);
  auto missing = gtap({"counters", dir + "/missing.gtap"});
  EXPECT_EQ(missing.exitCode, 1);
  EXPECT_TRUE(contains(missing.err, dir + "/missing.gtap")) << missing.err;
}


// The report on counters gtap collected itself, on the simulated HSA runtime:
// each dispatch of 256 work-items in groups of 128 ran 2 groups of 2
// wavefronts.
TEST(CountersReport, OnTheSimulatedHsaRuntime) {
  std::string dir = freshDirectory("counters-hsa");
  std::string file = dir + "/cap.gtap";
  auto run = gtap({"run", "--sim", "-q", "-m", "api,kernels", "--counters", "GRBM_COUNT,GRBM_GUI_ACTIVE,SQ_WAVES",
                   "-o", file, "--", workload("hsa_pipeline"), "1", "256"});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  auto r = gtap({"counters", "--per-dispatch", "--format=jsonl", file});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  auto rows = jsonLines(r.out);
  ASSERT_EQ(rows.size(), 3u) << r.out;
  for (const auto& row : rows) {
    EXPECT_EQ(row["SQ_WAVES"], 4) << row;
    EXPECT_DOUBLE_EQ(row["waves_per_work-group"].get<double>(), 2.0) << row;
    EXPECT_GE(row["GRBM_COUNT"].get<double>(), row["GRBM_GUI_ACTIVE"].get<double>()) << row;
    double busy = row["busy_share"].get<double>();
    EXPECT_GT(busy, 0) << row;
    EXPECT_LE(busy, 1) << row;
  }
  std::string db = dir + "/cap.db";
  auto exported = gtap({"export", "--format=sqlite", "-o", db, file});
  ASSERT_EQ(exported.exitCode, 0) << exported.err;
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
  EXPECT_EQ(queryInt(h, "SELECT COUNT(*) FROM counters WHERE counter = 'SQ_WAVES'"), 3);
  EXPECT_EQ(queryInt(h, "SELECT SUM(value) FROM counters WHERE counter = 'SQ_WAVES'"), 12);
  EXPECT_EQ(queryInt(h, "SELECT SUM(dispatches) FROM counter_summary WHERE counter = 'SQ_WAVES'"), 3);
  sqlite3_close(h);
}


// The same on the simulated Level Zero driver's ComputeBasic group: each
// launch of 2 groups of 128 ran 256 work-items, at the device clock's 19.2 MHz.
TEST(CountersReport, OnTheSimulatedLevelZeroDriver) {
  std::string dir = freshDirectory("counters-ze");
  std::string file = dir + "/cap.gtap";
  auto run = gtap({"run", "--sim", "-q", "-m", "api,kernels", "--counters", "ComputeBasic", "-o", file, "--",
                   workload("ze_pipeline"), "2", "256"});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  auto r = gtap({"counters", "--per-dispatch", "--format=jsonl", file});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  auto rows = jsonLines(r.out);
  ASSERT_EQ(rows.size(), 6u) << r.out;
  for (const auto& row : rows) {
    EXPECT_EQ(row["WorkItemsExecuted"], 256) << row;
    EXPECT_EQ(row["WorkGroupsExecuted"], 2) << row;
    double busy = row["busy_share"].get<double>();
    EXPECT_GT(busy, 0) << row;
    EXPECT_LE(busy, 1) << row;
    EXPECT_NEAR(row["achieved_MHz"].get<double>(), 19.2, 0.4) << row;
  }
  auto kernels = gtap({"kernels", "--counters", "--format=jsonl", file});
  ASSERT_EQ(kernels.exitCode, 0) << kernels.err;
  for (const auto& row : jsonLines(kernels.out)) {
    EXPECT_EQ(row["measured"], 2) << row;
    EXPECT_EQ(row["mean_WorkItemsExecuted"], 256) << row;
  }
}

}  // namespace
}  // namespace gtap::test
