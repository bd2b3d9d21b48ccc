// GTAP_SUMMARY / gtap run --summary: the process's own summary on stderr at
// exit agrees with the reports read from the same capture, and changes
// nothing else the program shows.
#include <gtest/gtest.h>

#include <signal.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "process.h"

namespace gtap::test {
namespace {

struct Printed {
  bool found = false;
  uint64_t apiCalls = 0, kernels = 0;
  std::map<std::string, uint64_t> kernelCounts;  // from the top kernels rows
};

// Reads the "gtap: " summary lines of stderr.
Printed parseSummary(const std::string& err) {
  Printed p;
  std::istringstream in(err);
  std::string line, section;
  while (std::getline(in, line)) {
    if (line.rfind("gtap: ", 0) != 0) continue;
    std::string body = line.substr(6);
    if (body.rfind("summary of pid ", 0) == 0) p.found = true;
    if (body.rfind("  ran ", 0) == 0) {
      auto calls = body.find(" API calls, ");
      auto comma = body.rfind(", ", calls);
      p.apiCalls = std::stoull(body.substr(comma + 2, calls - comma - 2));
      p.kernels = std::stoull(body.substr(calls + 12));
      continue;
    }
    if (body.rfind("  ", 0) != 0) {
      section = body.substr(0, body.find("  "));
      continue;
    }
    if (section == "top kernels") {
      std::istringstream row(body);
      std::string name;
      uint64_t count = 0;
      row >> name >> count;
      p.kernelCounts[name] = count;
    }
  }
  return p;
}

// Sums "count" per "kernel" (or "function") of a report's JSON Lines.
std::map<std::string, uint64_t> counts(const std::string& jsonl, const std::string& keyField) {
  std::map<std::string, uint64_t> out;
  std::istringstream in(jsonl);
  std::string line;
  while (std::getline(in, line)) {
    auto k = line.find("\"" + keyField + "\":\"");
    auto c = line.find("\"count\":");
    if (k == std::string::npos || c == std::string::npos) continue;
    k += keyField.size() + 4;
    out[line.substr(k, line.find('"', k) - k)] += std::stoull(line.substr(c + 8));
  }
  return out;
}

// The program's own stderr lines (not gtap's).
std::string programLines(const std::string& err) {
  std::istringstream in(err);
  std::string line, out;
  while (std::getline(in, line))
    if (line.rfind("gtap: ", 0) != 0) out += line + "\n";
  return out;
}

void checkWorkload(const std::string& name) {
  std::string dir = freshDirectory("summary-" + name);
  auto plain = runProcess({gtapBinary(), "run", "--sim", "--mode=api,kernels", "-o", dir + "/plain.gtap", "--",
                           workload(name)});
  auto summed = runProcess({gtapBinary(), "run", "--sim", "--mode=api,kernels", "--summary", "-o",
                            dir + "/sum.gtap", "--", workload(name)});
  ASSERT_EQ(plain.exitCode, 0) << plain.err;
  EXPECT_EQ(summed.exitCode, plain.exitCode);
  EXPECT_EQ(summed.out, plain.out);
  EXPECT_EQ(programLines(summed.err), programLines(plain.err));
  EXPECT_FALSE(parseSummary(plain.err).found) << plain.err;

  Printed p = parseSummary(summed.err);
  ASSERT_TRUE(p.found) << summed.err;
  EXPECT_NE(summed.err.find("(" + dir + "/sum.gtap)"), std::string::npos) << summed.err;
  auto kernels = counts(runGtap({"kernels", "--format=jsonl", dir + "/sum.gtap"}).out, "kernel");
  auto api = counts(runGtap({"api", "--format=jsonl", dir + "/sum.gtap"}).out, "function");
  ASSERT_FALSE(kernels.empty());
  ASSERT_LE(kernels.size(), 5u);  // every kernel is in the top five
  EXPECT_EQ(p.kernelCounts, kernels) << summed.err;
  uint64_t kernelTotal = 0, apiTotal = 0;
  for (auto& [k, n] : kernels) kernelTotal += n;
  for (auto& [f, n] : api) apiTotal += n;
  EXPECT_EQ(p.kernels, kernelTotal) << summed.err;
  EXPECT_EQ(p.apiCalls, apiTotal) << summed.err;
  EXPECT_NE(summed.err.find("top API functions"), std::string::npos) << summed.err;
  EXPECT_NE(summed.err.find("host-to-device"), std::string::npos) << summed.err;
}

TEST(SummaryAtExit, LevelZeroWorkloadSummaryMatchesReports) { checkWorkload("ze_pipeline"); }

TEST(SummaryAtExit, HsaWorkloadSummaryMatchesReports) { checkWorkload("hsa_pipeline"); }

TEST(SummaryAtExit, EnvironmentVariableAloneAsksForIt) {
  std::string dir = freshDirectory("summary-env");
  auto r = runProcess({gtapBinary(), "run", "--sim", "-q", "-o", dir + "/env.gtap", "--", workload("ze_pipeline")},
                      {{"GTAP_SUMMARY", "1"}});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  Printed p = parseSummary(r.err);
  EXPECT_TRUE(p.found) << r.err;
  EXPECT_GT(p.apiCalls, 0u);
  auto off = runProcess({gtapBinary(), "run", "--sim", "-q", "-o", dir + "/off.gtap", "--", workload("ze_pipeline")},
                        {{"GTAP_SUMMARY", "0"}});
  EXPECT_FALSE(parseSummary(off.err).found) << off.err;
}

// The API calls a capture holds, as gtap api counts them.
uint64_t apiCallsIn(const std::string& path) {
  uint64_t total = 0;
  for (auto& [f, n] : counts(runGtap({"api", "--format=jsonl", path}).out, "function")) total += n;
  return total;
}

// A process that ends on a signal (a fault, abort, a kill its own handler
// turns into _exit, a kill that ends it) still prints its summary once its
// capture is complete, and ends exactly as without gtap.
TEST(SummaryAtExit, AProcessEndedByASignalSummarisesAndEndsTheSame) {
  std::string dir = freshDirectory("summary-signals");
  for (std::vector<std::string> how : {std::vector<std::string>{std::to_string(SIGSEGV), "fault", "none"},
                                       {std::to_string(SIGABRT), "raise", "none"},
                                       {std::to_string(SIGTERM), "kill", "exit"},
                                       {std::to_string(SIGTERM), "kill", "none"}}) {
    SCOPED_TRACE(how[0] + " " + how[1] + " " + how[2]);
    std::vector<std::string> program = {workload("ze_signals"), "die"};
    program.insert(program.end(), how.begin(), how.end());
    auto plain = runProcess(program, {{"ZE_ENABLE_ALT_DRIVERS", std::string(GTAP_TEST_SIM_DIR) + "/libze_gtap_sim.so"}});
    std::string file = dir + "/" + how[0] + "-" + how[1] + "-" + how[2] + ".gtap";
    std::vector<std::string> argv = {gtapBinary(), "run", "--sim", "-q", "--summary", "-o", file, "--"};
    argv.insert(argv.end(), program.begin(), program.end());
    auto summed = runProcess(argv);
    EXPECT_EQ(summed.exitCode, plain.exitCode);
    EXPECT_EQ(summed.signal, plain.signal);
    EXPECT_TRUE(plain.signal != 0 || plain.exitCode == 40) << "the workload ends on its signal";
    EXPECT_EQ(summed.out, plain.out);
    Printed p = parseSummary(summed.err);
    ASSERT_TRUE(p.found) << summed.err;
    EXPECT_GT(p.apiCalls, 0u);
    EXPECT_EQ(p.apiCalls, apiCallsIn(file)) << summed.err;
  }
}

// A forked child's capture is its own, and so is its summary: one per
// process, each naming its own file and counting only its own calls.
TEST(SummaryAtExit, EachForkedChildSummarisesItsOwnCapture) {
  std::string dir = freshDirectory("summary-fork");
  auto r = runProcess({gtapBinary(), "run", "--sim", "-q", "--summary", "-o", dir + "/f-%p.gtap", "--",
                       workload("ze_fork_busy"), "1", "3"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  auto files = filesIn(dir);
  ASSERT_EQ(files.size(), 4u) << r.err;
  size_t summaries = 0;
  for (size_t at = 0; (at = r.err.find("gtap: summary of pid ", at)) != std::string::npos; ++at) ++summaries;
  EXPECT_EQ(summaries, files.size()) << r.err;
  // Each summary's block: its header, then its lines up to the next header.
  std::istringstream in(r.err);
  std::string line, block;
  std::map<std::string, std::string> blocks;  // by file
  std::string current;
  while (std::getline(in, line)) {
    if (line.rfind("gtap: summary of pid ", 0) == 0) {
      auto open = line.find(" (");
      current = line.substr(open + 2, line.size() - open - 3);
      blocks[current] = "";
    }
    if (!current.empty()) blocks[current] += line + "\n";
  }
  for (const auto& f : files) {
    ASSERT_TRUE(blocks.count(f)) << f << " has no summary in:\n" << r.err;
    EXPECT_EQ(parseSummary(blocks[f]).apiCalls, apiCallsIn(f)) << blocks[f];
  }
}

}  // namespace
}  // namespace gtap::test
