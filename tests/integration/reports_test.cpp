// What the reports say about a capture: hints that name the mode the capture
// was recorded with and suggest a mode only when it was not recorded; copy
// directions in every export; replay mode on a program gtap cannot replay.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include <fstream>
#include <memory>
#include <sstream>

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

}  // namespace
}  // namespace gtap::test
