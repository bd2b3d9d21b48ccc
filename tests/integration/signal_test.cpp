// Signals under gtap: a program that meets a signal behaves exactly as it does
// without gtap (output, exit status, terminating signal), and its capture is
// closed with a trailer naming the signal that ended it. Each case runs the
// same program plainly on the simulated driver and under `gtap run`.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>

#include <map>
#include <sstream>
#include <string>
#include <tuple>

#include "gtap/readers/api_stats.h"
#include "gtap/readers/capture.h"
#include "process.h"

namespace gtap::test {
namespace {

using Counts = std::map<std::string, uint64_t>;

// What the program says it called: everything when it lived on, else what it
// called before the signal.
Counts expectedCounts(const std::string& out) {
  Counts total = printedCounts(out, "total");
  return total.empty() ? printedCounts(out, "calls") : total;
}

Counts capturedCounts(const readers::Capture& capture) {
  Counts c;
  for (const auto& f : readers::summarizeApi({&capture}).functions) c[f.name] = f.count;
  return c;
}

uint64_t chunkCount(const readers::Capture& capture) {
  uint64_t n = 0;
  for (const auto& [kind, stats] : capture.kindStats()) n += stats.chunks;
  return n;
}

std::string simDriver() { return std::string(GTAP_TEST_SIM_DIR) + "/libze_gtap_sim.so"; }

ProcessResult plainRun(const std::vector<std::string>& args, const EnvChanges& env = {}) {
  std::vector<std::string> argv = {workload("ze_signals")};
  argv.insert(argv.end(), args.begin(), args.end());
  EnvChanges all = env;
  all["ZE_ENABLE_ALT_DRIVERS"] = simDriver();
  return runProcess(argv, all);
}

ProcessResult gtapRun(const std::string& dir, const std::vector<std::string>& args,
                      std::vector<std::string> options = {}, const EnvChanges& env = {}) {
  std::vector<std::string> argv = {gtapBinary(), "run", "--sim", "-q", "-o", dir + "/cap-%p.gtap"};
  argv.insert(argv.end(), options.begin(), options.end());
  argv.push_back("--");
  argv.push_back(workload("ze_signals"));
  argv.insert(argv.end(), args.begin(), args.end());
  return runProcess(argv, env);
}

std::string signalPrefix(int sig) { return "signal " + std::to_string(sig) + " ("; }

// The program behaves as without gtap; the capture is closed, names the
// signal that ended the program, and holds every call made before.
void expectSameAndClosed(const std::vector<std::string>& args, const std::string& dirName) {
  ProcessResult plain = plainRun(args);
  std::string dir = freshDirectory(dirName);
  ProcessResult traced = gtapRun(dir, args);
  EXPECT_EQ(traced.exitCode, plain.exitCode) << traced.err;
  EXPECT_EQ(traced.signal, plain.signal) << traced.err;
  EXPECT_EQ(traced.out, plain.out);
  auto files = filesIn(dir);
  ASSERT_EQ(files.size(), 1u) << traced.err;
  readers::Capture capture(files[0]);
  EXPECT_TRUE(capture.recovery().closedCleanly) << capture.recovery().stopReason;
  if (plain.signal)
    EXPECT_EQ(capture.trailer().closeReason.rfind(signalPrefix(plain.signal), 0), 0u)
        << capture.trailer().closeReason;
  else
    EXPECT_EQ(capture.trailer().closeReason, "exit");
  Counts expected = expectedCounts(traced.out);
  EXPECT_FALSE(expected.empty()) << traced.out;
  EXPECT_EQ(capturedCounts(capture), expected);
}

class SignalTest : public ::testing::Test {
 protected:
  // Default actions that dump core would litter the test directory.
  static void SetUpTestSuite() {
    rlimit none{0, 0};
    setrlimit(RLIMIT_CORE, &none);
  }
};

using Case = std::tuple<int, std::string, std::string>;  // signal, how, handler

class SignalMatrix : public ::testing::TestWithParam<Case> {
 protected:
  static void SetUpTestSuite() {
    rlimit none{0, 0};
    setrlimit(RLIMIT_CORE, &none);
  }
};

TEST_P(SignalMatrix, BehavesAsWithoutGtap) {
  auto [sig, how, handler] = GetParam();
  expectSameAndClosed({"die", std::to_string(sig), how, handler},
                      "sig-" + std::to_string(sig) + "-" + how + "-" + handler);
}

const int kFaults[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};

std::vector<int> terminatingSignals() {
  std::vector<int> s = {SIGABRT, SIGTRAP, SIGSYS,   SIGTERM, SIGINT, SIGHUP,    SIGQUIT, SIGXCPU,
                        SIGXFSZ, SIGUSR1, SIGUSR2,  SIGPIPE, SIGALRM, SIGVTALRM, SIGPROF, SIGIO,
                        SIGSTKFLT, SIGPWR};
  s.push_back(SIGRTMIN);
  s.push_back(SIGRTMIN + 5);
  s.push_back(SIGRTMAX);
  return s;
}

std::vector<Case> faultCases() {
  std::vector<Case> cases;
  for (int sig : kFaults) {
    for (const char* how : {"raise", "kill", "tgkill", "sigqueue", "fault"})
      for (const char* handler : {"none", "exit"}) cases.emplace_back(sig, how, handler);
  }
  return cases;
}

std::vector<Case> sentCases() {
  std::vector<Case> cases;
  for (int sig : terminatingSignals())
    for (const char* how : {"raise", "kill", "tgkill"})
      for (const char* handler : {"none", "exit", "return"}) cases.emplace_back(sig, how, handler);
  return cases;
}

std::string caseName(const ::testing::TestParamInfo<Case>& info) {
  auto [sig, how, handler] = info.param;
  return "sig" + std::to_string(sig) + "_" + how + "_" + handler;
}

INSTANTIATE_TEST_SUITE_P(Faults, SignalMatrix, ::testing::ValuesIn(faultCases()), caseName);
INSTANTIATE_TEST_SUITE_P(Sent, SignalMatrix, ::testing::ValuesIn(sentCases()), caseName);

// A program that handles its own signals pays nothing per signal: the file
// holds no more chunks after 2,000 handled SIGHUPs than after none.
TEST_F(SignalTest, HandledSignalsDoNotFlush) {
  std::string none = freshDirectory("handled-0"), many = freshDirectory("handled-2000");
  auto r0 = gtapRun(none, {"handled", "0"});
  auto r = gtapRun(many, {"handled", "2000"});
  ASSERT_EQ(r0.exitCode, 0) << r0.err;
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("handled 2000"), std::string::npos) << r.out;
  readers::Capture c0(filesIn(none).at(0)), c(filesIn(many).at(0));
  EXPECT_TRUE(c.recovery().closedCleanly);
  EXPECT_EQ(capturedCounts(c), expectedCounts(r.out));
  EXPECT_LE(chunkCount(c), chunkCount(c0) + 10) << "a flush per handled signal";
}

// Dispositions the program set to SIG_IGN stay ignored, whether set before
// gtap started recording or after.
TEST_F(SignalTest, IgnoredSignalsStayIgnored) { expectSameAndClosed({"ignored"}, "ignored"); }

// The program reads back its own dispositions, never gtap's handler, through
// sigaction, signal and siginterrupt; and a default restored still ends it.
TEST_F(SignalTest, ProgramSeesItsOwnDispositions) {
  expectSameAndClosed({"view"}, "view");
  auto plain = plainRun({"view"});
  EXPECT_NE(plain.out.find("SIGPIPE default"), std::string::npos) << plain.out;
}

// Dispositions a vfork child sets are its own: the parent's view, and what
// ends the parent, stay as without gtap.
TEST_F(SignalTest, VforkChildsDispositionsStayTheChilds) {
  expectSameAndClosed({"vforkview"}, "vforkview");
  auto plain = plainRun({"vforkview"});
  EXPECT_NE(plain.out.find("SIGPIPE default"), std::string::npos) << plain.out;
}

// A handler with SA_RESETHAND runs once; the next delivery takes the default
// action, and gtap still closes the file first.
TEST_F(SignalTest, ResetHandlerRunsOnceThenTheDefaultEnds) { expectSameAndClosed({"resethand"}, "resethand"); }

// Borrowing a signal with a meaning (a fault, termination) for scopes is
// refused before the program starts.
TEST_F(SignalTest, ScopeSignalRefusesFaultAndTerminationSignals) {
  for (const char* bad : {"11", "SIGTERM", "15", "SIGINT", "TSTP", "RTMIN+99", "bogus"}) {
    std::string dir = freshDirectory("scope-refused");
    auto r = gtapRun(dir, {"handled", "0"}, {"-m", "replay", "--scope-signal", bad});
    EXPECT_EQ(r.exitCode, 2) << bad;
    EXPECT_NE(r.err.find("--scope-signal"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("SIGUSR1, SIGUSR2"), std::string::npos) << r.err;
    EXPECT_TRUE(filesIn(dir).empty());
  }
  auto r = gtapRun(freshDirectory("scope-11"), {"handled", "0"}, {"-m", "replay", "--scope-signal", "11"});
  EXPECT_NE(r.err.find("signal 11 (SIGSEGV)"), std::string::npos) << r.err;
  for (const char* good : {"USR1", "SIGUSR2", "RTMIN+3", "SIGRTMAX-1", "10"}) {
    std::string dir = freshDirectory("scope-accepted");
    auto ok = gtapRun(dir, {"handled", "0"}, {"-m", "replay", "--scope-signal", good});
    EXPECT_EQ(ok.exitCode, 0) << good << ": " << ok.err;
  }
}

// Set by hand, a bad GTAP_SCOPE_SIGNAL is refused with one warning and
// ignored: SIGTERM still ends the program.
TEST_F(SignalTest, BadScopeSignalInTheEnvironmentIsIgnored) {
  std::string dir = freshDirectory("scope-env");
  std::vector<std::string> args = {"die", std::to_string(SIGTERM), "raise", "none"};
  auto r = gtapRun(dir, args, {"-m", "api,replay"}, {{"GTAP_SCOPE_SIGNAL", "SIGTERM"}});
  EXPECT_EQ(r.signal, SIGTERM) << r.err;
  size_t first = r.err.find("GTAP_SCOPE_SIGNAL");
  ASSERT_NE(first, std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("GTAP_SCOPE_SIGNAL", first + 1), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("signal 15 (SIGTERM)"), std::string::npos) << r.err;
  auto files = filesIn(dir);
  ASSERT_EQ(files.size(), 1u);
  readers::Capture capture(files[0]);
  EXPECT_EQ(capture.trailer().closeReason, "signal 15 (SIGTERM)");
}

}  // namespace
}  // namespace gtap::test
