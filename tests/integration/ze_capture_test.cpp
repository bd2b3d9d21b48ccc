// Level Zero API capture under `gtap run`, on real processes with the real
// loader and the simulated driver.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <tuple>

#include "gtap/readers/api_stats.h"
#include "gtap/readers/capture.h"
#include "process.h"

namespace gtap::test {
namespace {

using Counts = std::map<std::string, uint64_t>;

Counts capturedCounts(const std::string& path) {
  readers::Capture capture(path);
  EXPECT_TRUE(capture.notes().empty()) << capture.notes().front();
  Counts c;
  for (const auto& f : readers::summarizeApi({&capture}).functions) {
    EXPECT_EQ(f.unfinished, 0u) << f.name;
    c[f.name] = f.count;
  }
  return c;
}

ProcessResult gtapRun(const std::string& dir, const std::vector<std::string>& program,
                      std::vector<std::string> options = {}) {
  std::vector<std::string> argv = {gtapBinary(), "run", "--sim", "-o", dir + "/cap-%p.gtap"};
  argv.insert(argv.end(), options.begin(), options.end());
  argv.push_back("--");
  argv.insert(argv.end(), program.begin(), program.end());
  return runProcess(argv);
}

class RouteTest : public ::testing::TestWithParam<std::string> {};

// Whatever route the program takes to the loader, gtap records each call
// exactly once and nothing the program did not call.
TEST_P(RouteTest, CountsMatchWhatTheProgramCalled) {
  std::string dir = freshDirectory("route-" + GetParam());
  auto r = gtapRun(dir, {workload("ze_api_counts"), GetParam()});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  Counts expected = printedCounts(r.out, "calls");
  ASSERT_FALSE(expected.empty()) << r.out;
  auto files = filesIn(dir);
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(capturedCounts(files[0]), expected);
  readers::Capture capture(files[0]);
  EXPECT_TRUE(capture.recovery().closedCleanly) << capture.recovery().stopReason;
}

INSTANTIATE_TEST_SUITE_P(Routes, RouteTest,
                         ::testing::Values("direct", "dlopen", "table", "extension", "late", "init-drivers",
                                           "unseen-init", "vendor-extension"));

// The loader's own calls (its table getters while it initialises, whatever
// its version) and those of the layers it loads on request are not the
// program's: with each layer on, the capture still holds exactly what the
// program called.
class LoaderLayerTest : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(LoaderLayerTest, OnlyTheProgramsCallsAreRecorded) {
  const auto& [route, variable] = GetParam();
  std::string dir = freshDirectory("layer-" + route + "-" + variable);
  std::vector<std::string> argv = {gtapBinary(), "run", "--sim", "-o", dir + "/cap-%p.gtap", "--",
                                   workload("ze_api_counts"), route};
  auto r = runProcess(argv, {{variable, "1"}});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  Counts expected = printedCounts(r.out, "calls");
  ASSERT_FALSE(expected.empty()) << r.out;
  auto files = filesIn(dir);
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(capturedCounts(files[0]), expected);
}

INSTANTIATE_TEST_SUITE_P(Layers, LoaderLayerTest,
                         ::testing::Combine(::testing::Values("direct", "table", "init-drivers", "unseen-init"),
                                            ::testing::Values("ZE_ENABLE_VALIDATION_LAYER", "ZE_ENABLE_TRACING_LAYER",
                                                              "ZE_ENABLE_LOADER_INTERCEPT")),
                         [](const auto& info) {
                           std::string name = std::get<0>(info.param) + "_" + std::get<1>(info.param);
                           for (char& c : name)
                             if (c == '-') c = '_';
                           return name;
                         });

// A function gtap has no wrapper for (here a driver's vendor extension, found
// by name) passes through untouched, and the capture names it: gtap info
// lists it as unrecorded.
TEST(ZeCapture, InfoNamesFunctionsPassedThroughUnrecorded) {
  std::string dir = freshDirectory("unrecorded");
  auto r = gtapRun(dir, {workload("ze_api_counts"), "vendor-extension"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  auto names = printedCounts(r.out, "unrecorded");
  ASSERT_EQ(names.size(), 3u) << r.out;
  auto files = filesIn(dir);
  ASSERT_EQ(files.size(), 1u);
  readers::Capture capture(files[0]);
  auto unrecorded = capture.unrecordedFunctions();
  for (const auto& [name, count] : names)
    EXPECT_NE(std::find(unrecorded.begin(), unrecorded.end(), name), unrecorded.end()) << name;
  // No events of them: only the program's recorded calls.
  EXPECT_EQ(capturedCounts(files[0]), printedCounts(r.out, "calls"));
  auto info = runProcess({gtapBinary(), "info", files[0]});
  ASSERT_EQ(info.exitCode, 0) << info.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(info.out, m, std::regex(R"(unrecorded functions: (\d+) \(([^)]*)\))"))) << info.out;
  EXPECT_EQ(std::stoul(m[1]), unrecorded.size());
  for (const auto& [name, count] : names) EXPECT_NE(m[2].str().find(name), std::string::npos) << info.out;
  auto json = runProcess({gtapBinary(), "info", "--format=jsonl", files[0]});
  for (const auto& [name, count] : names) EXPECT_NE(json.out.find("\"" + name + "\""), std::string::npos) << json.out;
}

TEST(ZeCapture, ApiReportAsJsonLines) {
  std::string dir = freshDirectory("api-jsonl");
  auto r = gtapRun(dir, {workload("ze_api_counts"), "direct"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  auto files = filesIn(dir);
  ASSERT_EQ(files.size(), 1u);
  auto report = runProcess({gtapBinary(), "api", "--format=jsonl", files[0]});
  ASSERT_EQ(report.exitCode, 0) << report.err;
  Counts reported;
  std::regex row(R"re(\{"type":"api_function","function":"(\w+)","api":"ze","count":(\d+),"total":(\d+),"mean":(\d+),"min":(\d+),"max":(\d+),"p50":(\d+),"p99":(\d+),"failed":0,"unfinished":0\})re");
  std::istringstream in(report.out);
  std::string line;
  while (std::getline(in, line)) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(line, m, row)) << line;
    uint64_t count = std::stoull(m[2]), total = std::stoull(m[3]), min = std::stoull(m[5]),
             max = std::stoull(m[6]), p50 = std::stoull(m[7]), p99 = std::stoull(m[8]);
    EXPECT_LE(min, p50);
    EXPECT_LE(p50, p99);
    EXPECT_LE(p99, max);
    EXPECT_LE(max, total);
    reported[m[1]] = count;
  }
  EXPECT_EQ(reported, printedCounts(r.out, "calls"));
  auto csv = runProcess({gtapBinary(), "api", "--format=csv", files[0]});
  EXPECT_EQ(csv.out.substr(0, csv.out.find('\n')), "function,api,count,total,mean,min,max,p50,p99,failed,unfinished");
}

// 8 threads x 100,000 calls: every call present once, each thread's calls
// complete and in the order the thread made them.
TEST(ZeCapture, ThreadsKeepEveryCallInOrder) {
  std::string dir = freshDirectory("threads");
  const int threads = 8, calls = 100000;
  auto r = gtapRun(dir, {workload("ze_api_counts"), "threads", std::to_string(threads), std::to_string(calls)});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  auto files = filesIn(dir);
  ASSERT_EQ(files.size(), 1u);
  readers::Capture capture(files[0]);
  ASSERT_TRUE(capture.recovery().closedCleanly);
  std::map<uint32_t, std::vector<readers::ApiCall>> byThread;
  capture.forEachCall([&](const readers::ApiCall& c) { byThread[c.thread].push_back(c); });
  int workers = 0;
  for (auto& [thread, list] : byThread) {
    if (list.size() < static_cast<size_t>(calls)) continue;  // the main thread
    ++workers;
    ASSERT_EQ(list.size(), static_cast<size_t>(calls)) << "thread " << thread;
    int64_t lastBegin = 0;
    for (int i = 0; i < calls; ++i) {
      const auto& c = list[static_cast<size_t>(i)];
      ASSERT_TRUE(c.finished);
      ASSERT_EQ(capture.functionName(c.function), i % 3 == 0 ? "zeDriverGetApiVersion" : "zeDriverGet")
          << "thread " << thread << " call " << i;
      ASSERT_LE(c.beginNs, c.endNs);
      ASSERT_GE(c.beginNs, lastBegin);
      lastBegin = c.endNs;
    }
  }
  EXPECT_EQ(workers, threads);
  EXPECT_EQ(capturedCounts(files[0]), printedCounts(r.out, "calls"));
}

// No system call per intercepted call: strace counts every system call of the
// process and its threads, with and without gtap, over 200,000 calls.
TEST(ZeCapture, NoSystemCallPerCall) {
  std::string dir = freshDirectory("syscalls");
  const int calls = 200000;
  auto count = [&](const std::vector<std::string>& command, const EnvChanges& env) {
    std::string out = dir + "/strace.txt";
    std::vector<std::string> argv = {"strace", "-f", "-c", "-o", out};
    argv.insert(argv.end(), command.begin(), command.end());
    auto r = runProcess(argv, env);
    EXPECT_EQ(r.exitCode, 0) << r.err;
    std::ifstream in(out);
    uint64_t total = 0;
    for (std::string line; std::getline(in, line);) {
      std::istringstream fields(line);
      std::string pct, seconds, usecs, n, errors, name;
      if (line.find(" total") != std::string::npos && (fields >> pct >> seconds >> usecs >> n)) total = std::stoull(n);
    }
    return total;
  };
  std::string sim = std::string(GTAP_TEST_SIM_DIR) + "/libze_gtap_sim.so";
  uint64_t without = count({workload("ze_api_counts"), "threads", "1", std::to_string(calls)},
                           {{"ZE_ENABLE_ALT_DRIVERS", sim}});
  uint64_t with = count({gtapBinary(), "run", "--sim", "-q", "-o", dir + "/cap.gtap", "--", workload("ze_api_counts"),
                         "threads", "1", std::to_string(calls)},
                        {});
  ASSERT_GT(without, 0u);
  EXPECT_LT(with - std::min(with, without), static_cast<uint64_t>(calls) / 100) << without << " vs " << with;
}

TEST(ZeCapture, ForkedChildWritesItsOwnFile) {
  std::string dir = freshDirectory("fork");
  auto r = gtapRun(dir, {workload("ze_api_counts"), "fork"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  auto files = filesIn(dir);
  ASSERT_EQ(files.size(), 2u);
  int children = 0;
  for (const auto& f : files) {
    readers::Capture c(f);
    EXPECT_TRUE(c.recovery().closedCleanly) << f << ": " << c.recovery().stopReason;
    bool child = c.process().forkedFromPid != 0;
    children += child;
    EXPECT_EQ(capturedCounts(f), printedCounts(r.out, child ? "child" : "parent")) << f;
  }
  EXPECT_EQ(children, 1);
}

// SIGKILL: the file still opens, says it was recovered, and holds every call
// made before the last flush.
TEST(ZeCapture, KillNineKeepsCallsUpToTheLastFlush) {
  std::string dir = freshDirectory("kill9");
  RunningProcess p({gtapBinary(), "run", "--sim", "--flush-ms", "50", "-o", dir + "/cap.gtap", "--",
                    workload("ze_api_counts"), "forever"});
  std::string line;
  long doneAtMark = 0;
  while (p.readLine(line, std::chrono::seconds(20))) {
    if (line.rfind("done ", 0) == 0) doneAtMark = std::stol(line.substr(5));
    if (doneAtMark >= 20000) break;
  }
  ASSERT_GE(doneAtMark, 20000);
  // Several flush intervals pass; the program keeps calling meanwhile.
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
  while (std::chrono::steady_clock::now() < until) p.readLine(line, std::chrono::milliseconds(50));
  p.kill(SIGKILL);
  auto result = p.wait();
  EXPECT_EQ(result.signal, SIGKILL);
  readers::Capture c(dir + "/cap.gtap");
  EXPECT_FALSE(c.recovery().closedCleanly);
  EXPECT_FALSE(c.recovery().stopReason.empty());
  uint64_t versionCalls = 0;
  c.forEachCall([&](const readers::ApiCall& call) {
    if (call.finished && c.functionName(call.function) == "zeDriverGetApiVersion") ++versionCalls;
  });
  EXPECT_GE(versionCalls, static_cast<uint64_t>(doneAtMark));
  auto info = runProcess({gtapBinary(), "info", dir + "/cap.gtap"});
  EXPECT_EQ(info.exitCode, 0);
  EXPECT_NE(info.out.find("recovered"), std::string::npos) << info.out;
}

// A crash: gtap closes the file in its signal handler, then the default action
// happens as it would without gtap.
TEST(ZeCapture, CrashKeepsEveryCallAndTheSignalStillKills) {
  std::string dir = freshDirectory("crash");
  auto r = gtapRun(dir, {workload("ze_api_counts"), "crash"});
  EXPECT_EQ(r.signal, SIGSEGV) << r.err;
  auto files = filesIn(dir);
  ASSERT_EQ(files.size(), 1u);
  readers::Capture c(files[0]);
  EXPECT_TRUE(c.recovery().closedCleanly) << c.recovery().stopReason;
  EXPECT_EQ(c.trailer().closeReason, "signal 11 (SIGSEGV)");
  EXPECT_EQ(capturedCounts(files[0]), printedCounts(r.out, "calls"));
}

// A call that never returns: the program exits (from another thread) while
// main waits inside zeEventHostSynchronize. The capture still holds that
// call, as begun and unfinished, after every call that returned, all counted.
TEST(ZeCapture, ACallTheProgramExitsInsideShowsAsBegun) {
  std::string dir = freshDirectory("exit-in-call");
  auto r = gtapRun(dir, {workload("ze_api_counts"), "exit-in-call"});
  EXPECT_EQ(r.exitCode, 7) << r.err;
  auto files = filesIn(dir);
  ASSERT_EQ(files.size(), 1u);
  readers::Capture c(files[0]);
  EXPECT_TRUE(c.recovery().closedCleanly) << c.recovery().stopReason;
  EXPECT_TRUE(c.notes().empty()) << c.notes().front();
  Counts finished, unfinished;
  readers::ApiCall last;
  c.forEachCall([&](const readers::ApiCall& call) {
    (call.finished ? finished : unfinished)[c.functionName(call.function)] += 1;
    if (call.thread == 0 && call.beginNs >= last.beginNs) last = call;
  });
  EXPECT_EQ(unfinished, (Counts{{"zeEventHostSynchronize", 1}}));
  Counts printed = printedCounts(r.out, "calls");
  printed.erase("zeEventHostSynchronize");
  EXPECT_EQ(finished, printed);
  EXPECT_EQ(c.functionName(last.function), "zeEventHostSynchronize");
  EXPECT_FALSE(last.finished);
}

// _exit skips atexit handlers and destructors: gtap still closes the file,
// and the exit status is the program's.
TEST(ZeCapture, UnderscoreExitStillClosesTheFile) {
  std::string dir = freshDirectory("quick-exit");
  auto r = gtapRun(dir, {workload("ze_api_counts"), "quick-exit"});
  EXPECT_EQ(r.exitCode, 5) << r.err;
  auto files = filesIn(dir);
  ASSERT_EQ(files.size(), 1u);
  readers::Capture c(files[0]);
  EXPECT_TRUE(c.recovery().closedCleanly) << c.recovery().stopReason;
  EXPECT_EQ(capturedCounts(files[0]), printedCounts(r.out, "calls"));
}

// The program's own handler still runs (chained), and the program goes on.
TEST(ZeCapture, ProgramSignalHandlersStillRun) {
  std::string dir = freshDirectory("handler");
  auto r = gtapRun(dir, {workload("ze_api_counts"), "handler"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("handled 1"), std::string::npos) << r.out;
  auto files = filesIn(dir);
  ASSERT_EQ(files.size(), 1u);
  readers::Capture c(files[0]);
  EXPECT_TRUE(c.recovery().closedCleanly);
  EXPECT_EQ(c.trailer().closeReason, "exit");
  EXPECT_EQ(capturedCounts(files[0]), printedCounts(r.out, "calls"));
}

// An output that cannot be created: one warning, and the program's output and
// exit code are exactly those of a run without gtap.
TEST(ZeCapture, UnwritableOutputPassesThrough) {
  std::string dir = freshDirectory("unwritable");
  std::ofstream(dir + "/blocker") << "a file where a directory would have to be";
  std::string sim = std::string(GTAP_TEST_SIM_DIR) + "/libze_gtap_sim.so";
  auto without = runProcess({workload("ze_api_counts"), "direct"}, {{"ZE_ENABLE_ALT_DRIVERS", sim}});
  auto with = runProcess({gtapBinary(), "run", "--sim", "-o", dir + "/blocker/sub/x.gtap", "--",
                          workload("ze_api_counts"), "direct"});
  EXPECT_EQ(with.exitCode, without.exitCode);
  EXPECT_EQ(with.out, without.out);
  EXPECT_NE(with.err.find("continuing without capture"), std::string::npos) << with.err;
  size_t lines = 0;
  std::istringstream err(with.err);
  for (std::string line; std::getline(err, line);) lines += line.rfind("gtap: ", 0) == 0;
  EXPECT_EQ(lines, 1u) << with.err;
  EXPECT_TRUE(filesIn(dir).empty());
}

// The disk fills up mid-run (a file size limit stands in for it): one warning,
// the program is unaffected, and the file keeps what was written.
TEST(ZeCapture, FullDiskStopsCaptureNotTheProgram) {
  std::string dir = freshDirectory("fulldisk");
  std::string sim = std::string(GTAP_TEST_SIM_DIR) + "/libze_gtap_sim.so";
  auto without = runProcess({workload("ze_api_counts"), "threads", "4", "50000"}, {{"ZE_ENABLE_ALT_DRIVERS", sim}});
  auto with = runProcess({"prlimit", "--fsize=6000", gtapBinary(), "run", "--sim", "--flush-ms", "20", "-o",
                          dir + "/cap.gtap", "--", workload("ze_api_counts"), "threads", "4", "50000"});
  EXPECT_EQ(with.exitCode, without.exitCode) << with.err;
  EXPECT_EQ(with.out, without.out);
  EXPECT_NE(with.err.find("capture stops here"), std::string::npos) << with.err;
  readers::Capture c(dir + "/cap.gtap");
  EXPECT_FALSE(c.recovery().closedCleanly);
  EXPECT_LE(c.recovery().fileSize, 6000u);
}

TEST(ZeCapture, ExistingCaptureIsNeverOverwritten) {
  std::string dir = freshDirectory("no-overwrite");
  std::string fixed = dir + "/same.gtap";
  ASSERT_EQ(runProcess({gtapBinary(), "run", "--sim", "-o", fixed, "--", workload("ze_api_counts"), "direct"}).exitCode, 0);
  std::ifstream in(fixed, std::ios::binary);
  std::string before((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto second = runProcess({gtapBinary(), "run", "--sim", "-o", fixed, "--", workload("ze_api_counts"), "direct"});
  ASSERT_EQ(second.exitCode, 0);
  std::ifstream again(fixed, std::ios::binary);
  std::string after((std::istreambuf_iterator<char>(again)), std::istreambuf_iterator<char>());
  EXPECT_EQ(before, after);
  EXPECT_TRUE(std::filesystem::exists(dir + "/same.1.gtap"));
  EXPECT_NE(second.err.find("same.1.gtap"), std::string::npos) << second.err;
  struct stat st {};
  ASSERT_EQ(stat((dir + "/same.1.gtap").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST(ZeCapture, BarePreloadWithoutLauncher) {
  std::string dir = freshDirectory("bare");
  std::string lib = std::filesystem::path(gtapBinary()).parent_path().parent_path().string() + "/" +
                    GTAP_TEST_RELATIVE_LIB;
  auto r = runProcess({workload("ze_api_counts"), "direct"},
                      {{"LD_PRELOAD", lib}, {"GTAP_OUTPUT", dir + "/bare-%p.gtap"},
                       {"ZE_ENABLE_ALT_DRIVERS", std::string(GTAP_TEST_SIM_DIR) + "/libze_gtap_sim.so"}});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  auto files = filesIn(dir);
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(capturedCounts(files[0]), printedCounts(r.out, "calls"));
}

TEST(ZeCapture, LauncherKeepsExistingPreloadAndDisableSwitch) {
  std::string dir = freshDirectory("launcher");
  auto r = runProcess({gtapBinary(), "run", "--", "sh", "-c", "echo \"$LD_PRELOAD\""},
                      {{"LD_PRELOAD", "libm.so.6"}});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(r.out.rfind("libm.so.6:", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("libgtap.so"), std::string::npos) << r.out;
  auto off = runProcess({gtapBinary(), "run", "--sim", "-o", dir + "/off.gtap", "--", workload("ze_api_counts"), "direct"},
                        {{"GTAP_ENABLE", "0"}});
  EXPECT_EQ(off.exitCode, 0);
  EXPECT_TRUE(filesIn(dir).empty());
  auto code = runProcess({gtapBinary(), "run", "--", "sh", "-c", "exit 7"});
  EXPECT_EQ(code.exitCode, 7);
  EXPECT_TRUE(code.err.empty()) << code.err;  // no GPU calls: no file, no message
}

TEST(ZeCapture, ReportsNameTheFileTheyCannotRead) {
  std::string dir = freshDirectory("bad-input");
  std::ofstream(dir + "/junk.gtap") << "not a capture";
  auto r = runProcess({gtapBinary(), "api", dir + "/junk.gtap"});
  EXPECT_NE(r.exitCode, 0);
  EXPECT_NE(r.err.find(dir + "/junk.gtap"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("not a gtap capture"), std::string::npos) << r.err;
  auto info = runProcess({gtapBinary(), "info", dir + "/missing.gtap"});
  EXPECT_NE(info.exitCode, 0);
  EXPECT_NE(info.err.find("missing.gtap"), std::string::npos) << info.err;
}

}  // namespace
}  // namespace gtap::test
