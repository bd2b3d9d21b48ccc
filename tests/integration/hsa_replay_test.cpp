// HSA replay end to end on the simulated runtime: the HSA workloads captured
// with `gtap run --mode=replay` (alone and with the profiling modes),
// replayed with `gtap replay --verify`, and what the capture refuses, the
// replay refuses and the substitution rules checked through the files and
// messages they produce.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "replay_helpers.h"

namespace gtap::test {
namespace {

const std::string kSimHsa = std::string(GTAP_TEST_SIM_DIR) + "/hsa";

Captured capture(const std::string& name, const std::vector<std::string>& args = {},
                 const std::string& mode = "replay", const std::vector<std::string>& options = {},
                 const std::string& tag = "") {
  return captureWorkload("hsa-replay-", name, args, mode, options, tag);
}

using Param = WorkloadMode;
class HsaReplayedWorkload : public ::testing::TestWithParam<Param> {};

// Captured without changing what the program prints; replayed with every
// read-back as the program saw it and every dispatch packet written again.
TEST_P(HsaReplayedWorkload, ReplaysWithEveryReadBackMatching) {
  const auto& [name, mode] = GetParam();
  Captured c = capture(name, {}, mode);
  ASSERT_EQ(c.run.exitCode, 0) << c.run.err;
  ProcessResult plain = runProcess({workload(name)}, {{"LD_LIBRARY_PATH", kSimHsa}});
  ASSERT_EQ(plain.exitCode, 0) << plain.err;
  // hsa_multithread prints its threads' lines after they joined, in order;
  // the durations hsa_own_timestamps measures differ from run to run.
  auto lines = [](const std::string& out) {
    std::string kept;
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);)
      if (line.rfind("timestamp ", 0) != 0) kept += line + "\n";
    return kept;
  };
  EXPECT_EQ(lines(c.run.out), lines(plain.out));
  auto d = gtap({"dump", c.file});
  ASSERT_EQ(d.exitCode, 0) << d.err;
  EXPECT_NE(d.out.find("unsupported: none"), std::string::npos) << d.out;
  auto r = gtap({"replay", "--sim", "--verify", c.file});
  ASSERT_EQ(r.exitCode, 0) << "signal " << r.signal << "\n" << r.out << r.err;
  auto [checked, mismatched] = verified(r.out + r.err);
  EXPECT_GT(checked, 0) << r.out;
  EXPECT_EQ(mismatched, 0) << r.out;
  size_t dispatched = 0;
  for (const auto& rec : dumpRecords(c.file)) dispatched += rec["op"] == "hsaDispatch";
  EXPECT_EQ(dispatched, countLines(c.run.out, "dispatch "));
  EXPECT_EQ(launchesReplayed(r.out + r.err), static_cast<long>(dispatched));
}

INSTANTIATE_TEST_SUITE_P(
    Workloads, HsaReplayedWorkload,
    ::testing::Combine(::testing::Values("hsa_vector_add", "hsa_pipeline", "hsa_multithread", "hsa_callbacks",
                                         "hsa_dlopen", "hsa_own_timestamps", "hsa_two_queues", "hsa_ring_writer"),
                       replayModes()),
    workloadModeName);

// Each dispatch record names where its kernarg segment holds addresses, as
// the code object's metadata says: vector_add's a, b and c (8 bytes each at
// 0, 8, 16), translated; n (a value) is not among them.
TEST(HsaReplay, KernargAddressesComeFromTheMetadata) {
  Captured c = capture("hsa_vector_add", {"2", "1024"});
  ASSERT_EQ(c.run.exitCode, 0) << c.run.err;
  size_t dispatches = 0;
  for (const auto& rec : dumpRecords(c.file)) {
    if (rec["op"] == "hsaKernel" && rec["symbol"] == "vector_add.kd") {
      EXPECT_NE(rec["codeObject"], 0) << rec;
    }
    if (rec["op"] != "hsaDispatch") continue;
    ++dispatches;
    ASSERT_EQ(rec["pointers"].size(), 3u) << rec;
    for (size_t i = 0; i < 3; ++i) {
      EXPECT_EQ(rec["pointers"][i]["offset"], 8 * i) << rec;
      EXPECT_EQ(rec["pointers"][i]["size"], 8) << rec;
      EXPECT_EQ(rec["pointers"][i]["kind"], 0) << rec;
    }
    EXPECT_EQ(rec["payload"]["kind"], "inline") << rec;
  }
  EXPECT_EQ(dispatches, 2u);
}

// A kernarg address into memory gtap did not see the program get: the
// program runs as ever, the capture names the dispatch and the argument, and
// replay refuses the capture rather than run the kernel on a stale address.
TEST(HsaReplay, AnAddressIntoUnrecordedMemoryIsRefused) {
  Captured c = capture("hsa_stray_pointer");
  ASSERT_EQ(c.run.exitCode, 0) << c.run.err;
  auto d = gtap({"dump", c.file});
  ASSERT_EQ(d.exitCode, 0) << d.err;
  EXPECT_NE(d.out.find("(vector_add): argument c (offset 16, global_buffer) holds 0x"), std::string::npos) << d.out;
  EXPECT_NE(d.out.find("which points into no memory the capture recorded"), std::string::npos) << d.out;
  auto r = gtap({"replay", "--sim", "--verify", c.file});
  EXPECT_EQ(r.exitCode, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("argument c (offset 16"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("performed"), std::string::npos) << r.out;
}

// Packets written before one doorbell are marked so that replay rings once
// per batch, as the program did: hsa_ring_writer writes 200 dispatches in
// batches of 16, each batch ending with a barrier, one doorbell per batch.
TEST(HsaReplay, PacketsOfOneDoorbellAreMarkedAsABatch) {
  Captured c = capture("hsa_ring_writer");
  ASSERT_EQ(c.run.exitCode, 0) << c.run.err;
  size_t packets = 0, last = 0;
  for (const auto& rec : dumpRecords(c.file)) {
    if (rec["op"] != "hsaDispatch" && rec["op"] != "hsaBarrier") continue;
    ++packets;
    if (rec["more"] == 0) {
      ++last;
      EXPECT_EQ(rec["op"], "hsaBarrier") << rec;
    }
  }
  EXPECT_EQ(packets, 213u);
  EXPECT_EQ(last, 13u);
  auto r = gtap({"replay", "--sim", "--verify", c.file});
  EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
}

TEST(HsaReplay, TruncatedCaptureIsRefused) {
  Captured c = capture("hsa_pipeline");
  ASSERT_EQ(c.run.exitCode, 0) << c.run.err;
  auto size = std::filesystem::file_size(c.file);
  for (double keep : {0.3, 0.7, 0.98}) {
    std::string cut = c.file + ".cut";
    std::filesystem::copy_file(c.file, cut, std::filesystem::copy_options::overwrite_existing);
    std::filesystem::resize_file(cut, static_cast<uintmax_t>(double(size) * keep));
    auto r = gtap({"replay", "--sim", "--verify", cut});
    EXPECT_NE(r.exitCode, 0) << keep;
    EXPECT_NE(r.err.find(cut), std::string::npos) << r.err;
    EXPECT_EQ(r.out.find("performed"), std::string::npos) << r.out;
  }
}

// A replacement code object whose vector_add computes a - b passes the ABI
// check and every read-back of the result then differs (exit 3); one whose
// vector_add takes other arguments is refused before anything runs.
TEST(HsaReplay, SubstitutedCodeObjectsChangeResultsOrAreRefused) {
  Captured c = capture("hsa_vector_add", {"2", "4096"});
  ASSERT_EQ(c.run.exitCode, 0) << c.run.err;
  auto same = gtap({"replay", "--sim", "--verify", "--substitute",
                    std::string("vector_add=") + GTAP_TEST_HSA_KERNELS, c.file});
  EXPECT_EQ(same.exitCode, 0) << same.out << same.err;
  auto changed = gtap({"replay", "--sim", "--verify", "--substitute",
                       std::string("vector_add=") + GTAP_TEST_HSA_KERNELS_ALT, c.file});
  EXPECT_EQ(changed.exitCode, 3) << changed.out << changed.err;
  auto [checked, mismatched] = verified(changed.out + changed.err);
  EXPECT_GT(checked, 0) << changed.out;
  EXPECT_GT(mismatched, 0) << changed.out;
  auto bad = gtap({"replay", "--sim", "--verify", "--substitute",
                   std::string("vector_add=") + GTAP_TEST_HSA_KERNELS_BAD, c.file});
  EXPECT_EQ(bad.exitCode, 1) << bad.out << bad.err;
  EXPECT_NE(bad.err.find("vector_add"), std::string::npos) << bad.err;
  EXPECT_EQ((bad.out + bad.err).find("performed"), std::string::npos) << "refused before any dispatch";
}

// Launcher scopes count HSA dispatch packets as they reach the doorbell, and
// bench replays the scope.
TEST(HsaReplay, LauncherScopesBracketDispatches) {
  Captured c = capture("hsa_vector_add", {"4", "1024"}, "replay", {"--scope", "middle=1:2"});
  ASSERT_EQ(c.run.exitCode, 0) << c.run.err;
  std::map<std::string, uint64_t> at;
  for (const auto& rec : dumpRecords(c.file)) {
    uint64_t seq = rec["seq"];
    if (rec["op"] == "scopeBegin") at["begin " + rec["scope"].get<std::string>()] = seq;
    if (rec["op"] == "scopeEnd") at["end " + rec["scope"].get<std::string>()] = seq;
    if (rec["op"] == "hsaDispatch") at["dispatch " + std::to_string(rec["dispatch"].get<uint64_t>())] = seq;
  }
  ASSERT_EQ(at.count("begin middle"), 1u);
  ASSERT_EQ(at.count("end middle"), 1u);
  EXPECT_LT(at["dispatch 0"], at["begin middle"]);
  EXPECT_LT(at["begin middle"], at["dispatch 1"]);
  EXPECT_LT(at["dispatch 2"], at["end middle"]);
  EXPECT_LT(at["end middle"], at["dispatch 3"]);
  auto bench = gtap({"bench", "--sim", "--iterations", "2", "--scope", "middle", c.file});
  EXPECT_EQ(bench.exitCode, 0) << bench.out << bench.err;
}

}  // namespace
}  // namespace gtap::test
