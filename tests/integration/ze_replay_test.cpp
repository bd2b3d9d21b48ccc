// Replay end to end on the simulated device: the workloads captured with
// `gtap run --mode=replay` (alone and with the profiling modes), replayed with
// `gtap replay --verify`, and the capture-side features (scopes, file
// policies, substitution, bench) checked through the files they produce.
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

Captured capture(const std::string& name, const std::vector<std::string>& args = {},
                 const std::string& mode = "replay", const std::vector<std::string>& options = {},
                 const std::string& tag = "") {
  return captureWorkload("replay-", name, args, mode, options, tag);
}

nlohmann::json dumpSummary(const std::string& file) {
  auto r = gtap({"dump", "--format=jsonl", file});
  std::istringstream in(r.out);
  nlohmann::json last;
  for (std::string line; std::getline(in, line);) last = nlohmann::json::parse(line);
  return last;
}

using Param = WorkloadMode;
class ReplayedWorkload : public ::testing::TestWithParam<Param> {};

TEST_P(ReplayedWorkload, ReplaysWithEveryReadBackMatching) {
  const auto& [name, mode] = GetParam();
  Captured c = capture(name, {}, mode);
  ASSERT_EQ(c.run.exitCode, 0) << c.run.err;
  auto r = gtap({"replay", "--sim", "--verify", c.file});
  ASSERT_EQ(r.exitCode, 0) << "signal " << r.signal << "\n" << r.out << r.err;
  auto [checked, mismatched] = verified(r.out + r.err);
  EXPECT_GT(checked, 0) << r.out;
  EXPECT_EQ(mismatched, 0) << r.out;
  // Every launch the program appended was appended again (a regular list's
  // launches print once per execution, so the program's lines bound them).
  size_t appended = 0;
  for (const auto& rec : dumpRecords(c.file)) appended += rec["op"] == "launchKernel";
  EXPECT_GT(appended, 0u);
  EXPECT_LE(appended, countLines(c.run.out, "launch "));
  EXPECT_EQ(launchesReplayed(r.out + r.err), static_cast<long>(appended));
}

INSTANTIATE_TEST_SUITE_P(
    Workloads, ReplayedWorkload,
    ::testing::Combine(::testing::Values("ze_vector_add", "ze_pipeline", "ze_multithread", "ze_immediate",
                                         "ze_own_timestamps", "ze_stacks", "ze_shared_inputs", "ze_struct_args"),
                       replayModes()),
    workloadModeName);

// Each replay record of a multi-threaded capture keeps its thread, and the
// records of several threads interleave in the stream.
TEST(ZeReplay, MultithreadedSubmissionsInterleaveInOneOrder) {
  Captured c = capture("ze_multithread", {"4", "6", "2000"});
  ASSERT_EQ(c.run.exitCode, 0) << c.run.err;
  std::set<uint64_t> threads;
  uint64_t previous = 0;
  for (const auto& rec : dumpRecords(c.file)) {
    EXPECT_GT(rec["seq"].get<uint64_t>(), previous);
    previous = rec["seq"].get<uint64_t>();
    if (rec["op"] == "execute" || rec["op"] == "launchKernel") threads.insert(rec["thread"].get<uint64_t>());
  }
  EXPECT_GE(threads.size(), 2u);
  // In seq order no allocation takes an address range another still holds:
  // an address one thread freed and another was given again is freed first.
  std::map<uint64_t, std::pair<uint64_t, uint64_t>> live;  // address -> (end, allocation)
  for (const auto& rec : dumpRecords(c.file)) {
    if (rec["op"] != "memAlloc" && rec["op"] != "memFree") continue;
    uint64_t address = std::stoull(rec["address"].get<std::string>(), nullptr, 16);
    if (rec["op"] == "memFree") {
      live.erase(address);
      continue;
    }
    uint64_t end = address + rec["size"].get<uint64_t>();
    auto next = live.lower_bound(address);
    EXPECT_TRUE(next == live.end() || next->first >= end) << "seq " << rec["seq"] << " overlaps allocation "
                                                          << next->second.second;
    if (next != live.begin()) {
      EXPECT_LE(std::prev(next)->second.first, address) << "seq " << rec["seq"];
    }
    live[address] = {end, rec["allocation"].get<uint64_t>()};
  }
  auto r = gtap({"replay", "--sim", "--verify", c.file});
  EXPECT_EQ(r.exitCode, 0) << "signal " << r.signal << "\n" << r.out << r.err;
  EXPECT_EQ(launchesReplayed(r.out + r.err), 24);
}

// A stream cut short is refused with the file named, and so is one that is
// not a capture at all.
TEST(ZeReplay, TruncatedCaptureIsRefused) {
  Captured c = capture("ze_pipeline");
  ASSERT_EQ(c.run.exitCode, 0) << c.run.err;
  auto size = std::filesystem::file_size(c.file);
  for (double keep : {0.3, 0.7, 0.98}) {
    std::string cut = c.file + ".cut";
    std::filesystem::copy_file(c.file, cut, std::filesystem::copy_options::overwrite_existing);
    std::filesystem::resize_file(cut, static_cast<uintmax_t>(double(size) * keep));
    auto r = gtap({"replay", "--sim", "--verify", cut});
    EXPECT_NE(r.exitCode, 0) << keep;
    EXPECT_NE(r.err.find(cut), std::string::npos) << r.err;
  }
}

// Capture alone never changes what the program computes or prints.
TEST(ZeReplay, CaptureLeavesTheProgramsOutputAlone) {
  Captured c = capture("ze_pipeline");
  ASSERT_EQ(c.run.exitCode, 0);
  ProcessResult plain = runProcess({workload("ze_pipeline")},
                                   {{"ZE_ENABLE_ALT_DRIVERS", std::string(GTAP_TEST_SIM_DIR) + "/libze_gtap_sim.so"}});
  ASSERT_EQ(plain.exitCode, 0);
  EXPECT_EQ(c.run.out, plain.out);
}

// Launcher scopes bracket the dispatch numbers asked for: launches on an
// immediate list as they are appended, a regular list's at each execution.
std::map<std::string, uint64_t> scopeSeqs(const std::string& file) {
  std::map<std::string, uint64_t> at;  // "begin NAME" / "end NAME" / "dispatch N" / "execute K" -> seq
  uint64_t executes = 0;
  for (const auto& rec : dumpRecords(file)) {
    uint64_t seq = rec["seq"];
    if (rec["op"] == "scopeBegin") at["begin " + rec["scope"].get<std::string>()] = seq;
    if (rec["op"] == "scopeEnd") at["end " + rec["scope"].get<std::string>()] = seq;
    if (rec["op"] == "launchKernel") at["dispatch " + std::to_string(rec["dispatch"].get<uint64_t>())] = seq;
    if (rec["op"] == "execute") {
      at["execute " + std::to_string(executes++)] = seq;
      EXPECT_EQ(rec["firstDispatch"].get<uint64_t>(), 3 * (executes - 1));
    }
  }
  return at;
}

TEST(ZeReplay, LauncherScopesBracketDispatches) {
  Captured im = capture("ze_immediate", {}, "replay", {"--scope", "middle=1:2", "--scope", "first=0:0"});
  ASSERT_EQ(im.run.exitCode, 0) << im.run.err;
  auto at = scopeSeqs(im.file);
  ASSERT_EQ(at.count("begin middle"), 1u);
  ASSERT_EQ(at.count("end middle"), 1u);
  EXPECT_LT(at["dispatch 0"], at["begin middle"]);
  EXPECT_LT(at["begin middle"], at["dispatch 1"]);
  EXPECT_LT(at["dispatch 2"], at["end middle"]);
  EXPECT_LT(at["begin first"], at["dispatch 0"]);
  EXPECT_LT(at["dispatch 0"], at["end first"]);
  EXPECT_LT(at["end first"], at["dispatch 1"]);

  // ze_pipeline executes one list of three launches three times: dispatches
  // 3..5 are the second execution.
  Captured re = capture("ze_pipeline", {}, "replay", {"--scope", "second=3:5"});
  ASSERT_EQ(re.run.exitCode, 0) << re.run.err;
  at = scopeSeqs(re.file);
  ASSERT_EQ(at.count("begin second"), 1u);
  EXPECT_LT(at["execute 0"], at["begin second"]);
  EXPECT_LT(at["begin second"], at["execute 1"]);
  EXPECT_LT(at["execute 1"], at["end second"]);
  EXPECT_LT(at["end second"], at["execute 2"]);
  auto bench = gtap({"bench", "--sim", "--iterations", "2", "--scope", "second", re.file});
  EXPECT_EQ(bench.exitCode, 0) << bench.out << bench.err;

  auto bad = runProcess({gtapBinary(), "run", "--sim", "-m", "replay", "--scope", "x=3:1", "--", workload("ze_pipeline")});
  EXPECT_NE(bad.exitCode, 0);
  EXPECT_NE(bad.err.find("x=3:1"), std::string::npos) << bad.err;
  auto noReplay = runProcess({gtapBinary(), "run", "--sim", "-m", "api", "--scope", "x=1:3", "--", workload("ze_pipeline")});
  EXPECT_EQ(noReplay.exitCode, 2);
  EXPECT_NE(noReplay.err.find("replay"), std::string::npos) << noReplay.err;
}

// Host writes into shared memory between submissions are stored as the pages
// that changed, not whole allocations, and the replay reproduces every round.
TEST(ZeReplay, SharedMemoryWritesAreStoredByChangedPage) {
  Captured c = capture("ze_shared_inputs");
  ASSERT_EQ(c.run.exitCode, 0) << c.run.err;
  std::map<uint64_t, uint64_t> sizeOf;  // allocation -> size
  size_t partial = 0, whole = 0;
  for (const auto& rec : dumpRecords(c.file)) {
    if (rec["op"] == "memAlloc") sizeOf[rec["allocation"]] = rec["size"];
    if (rec["op"] == "hostData" && rec.contains("allocation")) {
      uint64_t bytes = rec["payload"]["size"];
      (bytes < sizeOf[rec["allocation"]] ? partial : whole)++;
      EXPECT_EQ(rec["offset"].get<uint64_t>() % 4096, 0u);
    }
  }
  EXPECT_GT(partial, 0u) << "rounds that change a page or two store only those";
  EXPECT_GT(whole, 0u);
  auto r = gtap({"replay", "--sim", "--verify", c.file});
  EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_EQ(verified(r.out + r.err).second, 0);
}

// The device keeps writing a shared allocation (a counter each launch adds to)
// while gtap stores the host's view of it before later launches: every stored
// view is in the file under the hash its record names, and the capture replays.
TEST(ZeReplay, SharedMemoryTheDeviceWritesMeanwhileIsStoredWhole) {
#ifndef GTAP_TEST_COMPARE_ZE
  GTEST_SKIP() << "needs benchmarks/compare_ze (GTAP_BUILD_BENCHMARKS=ON)";
#else
  std::string dir = freshDirectory("replay-device-writes");
  auto run = runProcess({gtapBinary(), "run", "--sim", "-q", "-m", "replay", "-o", dir + "/cap.gtap", "--",
                         GTAP_TEST_COMPARE_ZE, "launch-immediate", "3000", "64"});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  size_t views = 0;
  for (const auto& rec : dumpRecords(dir + "/cap.gtap")) {
    if (rec["op"] != "hostData") continue;
    ++views;
    EXPECT_FALSE(rec["payload"]["chunks"].empty()) << rec.dump();
  }
  EXPECT_GT(views, 10u);
  auto r = gtap({"replay", "--sim", dir + "/cap.gtap"});
  EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
#endif
}

// New bytes uploaded faster than the writer stores them (here it would write
// only every 60 s): the program waits for the writer once the kept bytes
// reach GTAP_BUFFER_MB, instead of gtap's memory growing with every upload,
// and every upload is in the file, byte-exact (the reader checks each blob's
// bytes against its name; replay compares the final read-back).
TEST(ZeReplay, NewUploadsWaitForTheWriterAndAreStoredExactly) {
#ifndef GTAP_TEST_COMPARE_ZE
  GTEST_SKIP() << "needs benchmarks/compare_ze (GTAP_BUILD_BENCHMARKS=ON)";
#else
  if (!std::filesystem::exists("/usr/bin/time")) GTEST_SKIP() << "needs /usr/bin/time (Debian package time)";
  std::string dir = freshDirectory("replay-upload-budget");
  // 48 uploads of 4 MiB: 192 MiB of new bytes against a budget of 8 MiB.
  auto run = runProcess({"/usr/bin/time", "-f", "maxrss_kib %M", "--", gtapBinary(), "run", "--sim", "-q", "-m",
                         "replay", "-o", dir + "/cap.gtap", "--", GTAP_TEST_COMPARE_ZE, "upload", "48", "4", "distinct"},
                        {{"GTAP_BUFFER_MB", "8"}, {"GTAP_FLUSH_MS", "60000"}});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(run.err, m, std::regex("maxrss_kib ([0-9]+)"))) << run.err;
  // The program's own: two 4 MiB host buffers and the simulated device's 4 MiB.
  EXPECT_LT(std::stol(m[1]) / 1024, 96) << "peak resident MiB";
  std::set<std::string> blobs;
  size_t uploads = 0;
  for (const auto& rec : dumpRecords(dir + "/cap.gtap")) {
    if (rec["op"] != "copy" || !rec.contains("payload")) continue;
    ++uploads;
    EXPECT_EQ(rec["payload"]["kind"], "blob") << rec.dump();
    blobs.insert(rec["payload"]["hash"].get<std::string>());
  }
  EXPECT_EQ(uploads, 48u);
  EXPECT_EQ(blobs.size(), 48u);
  auto r = gtap({"replay", "--sim", "--verify", dir + "/cap.gtap"});
  EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
  auto [checked, mismatched] = verified(r.out + r.err);
  EXPECT_GT(checked, 0);
  EXPECT_EQ(mismatched, 0);
#endif
}

// A replacement module with the same kernels runs instead of the captured
// one: unchanged kernels give the same read-backs, a changed one different
// read-backs; one whose kernel takes other arguments is refused before any
// work.
TEST(ZeReplay, SubstitutedModulesChangeResultsOrAreRefused) {
  Captured c = capture("ze_vector_add", {"2", "4096"});
  ASSERT_EQ(c.run.exitCode, 0) << c.run.err;
  auto same = gtap({"replay", "--sim", "--verify", "--substitute",
                    std::string("vector_add=") + GTAP_TEST_WORKLOAD_KERNELS, c.file});
  EXPECT_EQ(same.exitCode, 0) << same.out << same.err;
  auto changed = gtap({"replay", "--sim", "--verify", "--substitute", std::string("vector_add=") + GTAP_TEST_KERNELS_ALT,
                       c.file});
  EXPECT_EQ(changed.exitCode, 3) << changed.out << changed.err;
  auto [checked, mismatched] = verified(changed.out + changed.err);
  EXPECT_GT(checked, 0);
  // Each execution reads back c = a - b instead of a + b: every read-back of
  // the result differs; the inputs' own read-backs (none here) would not.
  EXPECT_EQ(mismatched, checked) << changed.out;
  Captured s = capture("ze_struct_args");
  ASSERT_EQ(s.run.exitCode, 0) << s.run.err;
  auto untouched = gtap({"replay", "--sim", "--verify", "--substitute", std::string("all=") + GTAP_TEST_KERNELS_ALT,
                         s.file});
  EXPECT_EQ(untouched.exitCode, 0) << untouched.out << untouched.err;
  auto bad = gtap({"replay", "--sim", "--verify", "--substitute", std::string("vector_add=") + GTAP_TEST_KERNELS_BAD,
                   c.file});
  EXPECT_EQ(bad.exitCode, 1);
  EXPECT_NE(bad.err.find("vector_add"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("3 arguments"), std::string::npos) << bad.err;
  EXPECT_EQ((bad.out + bad.err).find("performed"), std::string::npos) << "refused before any launch";
}

// A copy source inside a file mapping follows the file policy; a referenced
// file that changed or went away stops the replay with the file named.
TEST(ZeReplay, FilePoliciesAndReferencedFiles) {
  std::string dir = freshDirectory("replay-mapped");
  std::string input = dir + "/weights.bin";
  ASSERT_EQ(runProcess({workload("ze_mapped_input"), "--make", input, "200000"}).exitCode, 0);
  auto run = [&](const std::string& policy, const std::string& validation = "identity") {
    std::string out = dir + "/" + policy + "-" + validation + ".gtap";
    auto r = runProcess({gtapBinary(), "run", "--sim", "-q", "-m", "replay", "--file-policy", policy,
                         "--file-validation", validation, "-o", out, "--", workload("ze_mapped_input"), input});
    EXPECT_EQ(r.exitCode, 0) << r.err;
    return out;
  };
  std::string reference = run("reference"), digest = run("reference", "digest"), ranges = run("capture-ranges"),
              all = run("capture-all"), refused = run("fail");
  auto summary = dumpSummary(reference);
  EXPECT_FALSE(summary["hermetic"].get<bool>());
  ASSERT_EQ(summary["external_files"].size(), 1u);
  EXPECT_EQ(summary["external_files"][0]["path"], input);
  EXPECT_TRUE(dumpSummary(ranges)["hermetic"].get<bool>());
  EXPECT_TRUE(dumpSummary(all)["hermetic"].get<bool>());
  for (const auto& f : {reference, digest, ranges, all}) {
    auto r = gtap({"replay", "--sim", "--verify", f});
    EXPECT_EQ(r.exitCode, 0) << f << r.out << r.err;
  }
  auto no = gtap({"replay", "--sim", refused});
  EXPECT_NE(no.exitCode, 0);
  EXPECT_NE(no.err.find("unsupported"), std::string::npos) << no.err;

  // Changed: same size, new bytes and time.
  std::string saved = dir + "/saved.bin";
  std::filesystem::copy_file(input, saved);
  {
    std::fstream f(input, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(5000);
    f.put('\x5a');
  }
  std::filesystem::last_write_time(input, std::filesystem::last_write_time(input) + std::chrono::seconds(5));
  for (const auto& f : {reference, digest}) {
    auto r = gtap({"replay", "--sim", "--verify", f});
    EXPECT_NE(r.exitCode, 0) << f;
    EXPECT_NE(r.err.find(input), std::string::npos) << r.err;
  }
  // Missing.
  std::filesystem::remove(input);
  auto missing = gtap({"replay", "--sim", "--verify", reference});
  EXPECT_NE(missing.exitCode, 0);
  EXPECT_NE(missing.err.find(input), std::string::npos) << missing.err;
  EXPECT_EQ((missing.out + missing.err).find("performed"), std::string::npos);
  // Captured bytes need no file.
  for (const auto& f : {ranges, all}) {
    auto r = gtap({"replay", "--sim", "--verify", f});
    EXPECT_EQ(r.exitCode, 0) << f << r.out << r.err;
  }
  // The digest still identifies the original bytes under another path.
  auto remapped = gtap({"replay", "--sim", "--verify", "--remap", input + "=" + saved, digest});
  EXPECT_EQ(remapped.exitCode, 0) << remapped.out << remapped.err;
}

// Scopes from the program (gtap_scope_begin/end) and from a signal, and bench
// timing one of them.
TEST(ZeReplay, ProgramAndSignalScopes) {
  Captured c = capture("ze_scopes", {"--raise-signal"}, "replay", {"--scope-signal", "SIGUSR2"});
  ASSERT_EQ(c.run.exitCode, 0) << c.run.err;
  std::vector<std::string> order;
  for (const auto& rec : dumpRecords(c.file)) {
    if (rec["op"] == "scopeBegin") order.push_back("begin " + rec["scope"].get<std::string>());
    if (rec["op"] == "scopeEnd") order.push_back("end " + rec["scope"].get<std::string>());
    if (rec["op"] == "launchKernel") order.push_back("launch " + std::to_string(rec["dispatch"].get<uint64_t>()));
  }
  std::vector<std::string> expected = {"launch 0", "begin work", "launch 1", "end work",
                                       "begin signal", "launch 2", "end signal", "launch 3"};
  EXPECT_EQ(order, expected);
  for (const std::string scope : {"work", "signal"}) {
    auto b = gtap({"bench", "--sim", "--iterations", "2", "--scope", scope, c.file});
    EXPECT_EQ(b.exitCode, 0) << b.out << b.err;
    EXPECT_NE(b.out.find("scale"), std::string::npos) << b.out;
  }
  // Without gtap the scope calls do nothing and the program runs as ever.
  auto plain = runProcess({workload("ze_scopes")},
                          {{"ZE_ENABLE_ALT_DRIVERS", std::string(GTAP_TEST_SIM_DIR) + "/libze_gtap_sim.so"}});
  EXPECT_EQ(plain.exitCode, 0) << plain.err;
}

}  // namespace
}  // namespace gtap::test
