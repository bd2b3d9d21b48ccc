// gtap merge: one file for the captures of several processes, which every
// report reads as those captures: the same per-process kernels, API calls
// and exported rows as the files it was merged from; the output is written
// only when every input is a capture, and never replaces a file unasked.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "process.h"

namespace gtap::test {
namespace {

ProcessResult gtap(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {gtapBinary()};
  argv.insert(argv.end(), args.begin(), args.end());
  return runProcess(argv);
}

TEST(Merge, AMergedFileReportsAsItsCaptures) {
  std::string dir = freshDirectory("merge");
  std::string ze = dir + "/rank-0.gtap", hsa = dir + "/rank-1.gtap", all = dir + "/all.gtap";
  ASSERT_EQ(gtap({"run", "--sim", "-q", "-m", "api,kernels,memory", "-o", ze, "--", workload("ze_pipeline")})
                .exitCode, 0);
  ASSERT_EQ(gtap({"run", "--sim", "-q", "-m", "api,kernels,memory", "-o", hsa, "--", workload("hsa_pipeline")})
                .exitCode, 0);
  auto merged = gtap({"merge", "-o", all, ze, hsa});
  ASSERT_EQ(merged.exitCode, 0) << merged.err;
  EXPECT_NE(merged.err.find("2 captures in " + all), std::string::npos) << merged.err;
  for (std::vector<std::string> report : {std::vector<std::string>{"kernels", "--per-process", "--format=csv"},
                                          {"api", "--format=csv"},
                                          {"memory", "--per-process", "--format=csv"},
                                          {"summary", "--format=jsonl"}}) {
    SCOPED_TRACE(report[0]);
    auto separate = report, together = report;
    separate.insert(separate.end(), {ze, hsa});
    together.push_back(all);
    auto a = gtap(separate), b = gtap(together);
    ASSERT_EQ(a.exitCode, 0) << a.err;
    ASSERT_EQ(b.exitCode, 0) << b.err;
    // The same rows; a merged member's file is named inside the merged file.
    std::string expected = std::regex_replace(a.out, std::regex(dir + "/(rank-[01]\\.gtap)"), all + "($1)");
    EXPECT_EQ(b.out, expected);
  }
  auto jsonl = gtap({"export", "--format=jsonl", "-o", "-", all});
  ASSERT_EQ(jsonl.exitCode, 0) << jsonl.err;
  size_t processes = 0;
  for (size_t at = jsonl.out.find("{\"type\":\"process\","); at != std::string::npos;
       at = jsonl.out.find("{\"type\":\"process\",", at + 1))
    ++processes;
  EXPECT_EQ(processes, 2u) << "ranks kept apart";
  // Replay takes one capture, and says why a merged file is not one.
  auto replay = gtap({"replay", all});
  EXPECT_NE(replay.exitCode, 0);
  EXPECT_NE(replay.err.find("a merged file of several captures"), std::string::npos) << replay.err;
}

TEST(Merge, NothingIsWrittenUnlessEveryInputIsACapture) {
  std::string dir = freshDirectory("merge-refused");
  std::string ze = dir + "/rank-0.gtap", all = dir + "/all.gtap";
  ASSERT_EQ(gtap({"run", "--sim", "-q", "-m", "api", "-o", ze, "--", workload("ze_vector_add"), "1", "64"}).exitCode, 0);
  std::string junk = dir + "/notes.txt";
  { std::ofstream(junk) << "not a capture"; }
  auto refused = gtap({"merge", "-o", all, ze, junk});
  EXPECT_EQ(refused.exitCode, 1) << refused.err;
  EXPECT_NE(refused.err.find(junk), std::string::npos) << refused.err;
  EXPECT_FALSE(std::filesystem::exists(all));
  ASSERT_EQ(gtap({"merge", "-o", all, ze}).exitCode, 0);
  auto again = gtap({"merge", "-o", all, ze});
  EXPECT_EQ(again.exitCode, 2) << again.err;
  EXPECT_EQ(gtap({"merge", "-o", all, "--force", ze, all}).exitCode, 2) << "an input is not the output";
  EXPECT_EQ(gtap({"merge", "-o", all, "--force", ze, ze}).exitCode, 0);
  EXPECT_EQ(gtap({"merge", ze}).exitCode, 2) << "-o is required";
}

}  // namespace
}  // namespace gtap::test

namespace gtap::test {
namespace {

// Reports read their files several at once (gtap -j N) and merge what each
// gave in the order given: the output is the same whatever N is.
TEST(Batches, ReportsGiveTheSameOutputWhateverTheJobs) {
  std::string dir = freshDirectory("batches");
  std::vector<std::string> files;
  auto capture = [&](const std::string& name, std::vector<std::string> program) {
    std::string f = dir + "/" + name + ".gtap";
    std::vector<std::string> argv = {"run", "--sim", "-q", "-m", "api,kernels,memory", "-o", f, "--"};
    argv.insert(argv.end(), program.begin(), program.end());
    ASSERT_EQ(gtap(argv).exitCode, 0) << name;
    files.push_back(f);
  };
  capture("ze-pipeline", {workload("ze_pipeline")});
  capture("hsa-pipeline", {workload("hsa_pipeline")});
  for (int i = 1; i <= 4; ++i) capture("ze-add-" + std::to_string(i), {workload("ze_vector_add"), std::to_string(i), "512"});
  for (std::vector<std::string> report : {std::vector<std::string>{"summary"},
                                          {"summary", "--format=jsonl"},
                                          {"kernels", "--per-process"},
                                          {"kernels"},
                                          {"api", "--format=csv"},
                                          {"memory", "--per-process"},
                                          {"explain"},
                                          {"export", "--format=chrome", "-o", "-"},
                                          {"export", "--format=perfetto", "-o", "-"},
                                          {"export", "--format=jsonl", "-o", "-"},
                                          {"flame", "-o", "-"},
                                          {"queue", "--format=jsonl"},
                                          {"command"},
                                          {"flame", "--per-process", "--weight", "count", "-o", "-"},
                                          {"explain", "--format=jsonl", "--top", "5"}}) {
    SCOPED_TRACE(report[0]);
    std::string first;
    for (const char* jobs : {"1", "2", "5"}) {
      std::vector<std::string> argv = {"-j", jobs};
      argv.insert(argv.end(), report.begin(), report.end());
      argv.insert(argv.end(), files.begin(), files.end());
      auto r = gtap(argv);
      ASSERT_EQ(r.exitCode, 0) << r.err;
      ASSERT_FALSE(r.out.empty());
      if (first.empty()) first = r.out;
      EXPECT_EQ(r.out, first) << "-j " << jobs;
    }
  }
  EXPECT_EQ(gtap({"-j", "0", "summary", files[0]}).exitCode, 2);
  EXPECT_EQ(gtap({"summary", "-j", "2", files[0]}).exitCode, 0) << "after the verb too";
}

}  // namespace
}  // namespace gtap::test
