// An exception inside gtap never reaches the watched program. The test-only
// GTAP_TEST_THROW_AT makes gtap throw (as a failed allocation does) at one of
// its catch boundaries; each workload then runs as it does without gtap (its
// output, its exit status, its own result checks: a runtime call made twice
// or not at all fails them), stderr says so once, and the capture keeps what
// was recorded before.
#include <gtest/gtest.h>

#include <cctype>
#include <map>
#include <sstream>

#include "gtap/readers/api_stats.h"
#include "gtap/readers/capture.h"
#include "process.h"

namespace gtap::test {
namespace {

struct Case {
  std::string site;            // GTAP_TEST_THROW_AT
  std::string program;         // a workload
  std::vector<std::string> args;
  std::string mode;            // -m
  std::string where;           // what the message names
  std::string recordedBefore;  // a function the file holds calls of
  std::string afterwards;      // a function called after the error too: recorded fewer times than made ("" to skip)
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.site << " in " << c.program; }

enum class Runtime { levelZero, hsa, hal };

Runtime runtimeOf(const Case& c) {
  if (c.program.rfind("ze_", 0) == 0) return Runtime::levelZero;
  if (c.program.rfind("hsa_", 0) == 0) return Runtime::hsa;
  return Runtime::hal;
}

ProcessResult plainRun(const Case& c) {
  std::vector<std::string> argv = {workload(c.program)};
  argv.insert(argv.end(), c.args.begin(), c.args.end());
  switch (runtimeOf(c)) {
    case Runtime::levelZero:
      return runProcess(argv, {{"ZE_ENABLE_ALT_DRIVERS", std::string(GTAP_TEST_SIM_DIR) + "/libze_gtap_sim.so"}});
    case Runtime::hsa:
      return runProcess(argv, {{"LD_LIBRARY_PATH", std::string(GTAP_TEST_SIM_DIR) + "/hsa"}});
    case Runtime::hal:
      break;
  }
  return runProcess(argv);
}

// Device times differ from run to run; everything else the program prints is the same.
std::string withoutTimestamps(const std::string& out) {
  std::string kept;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("timestamp ", 0) != 0) kept += line + "\n";
  return kept;
}

std::vector<std::string> linesWith(const std::string& text, const std::string& word) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.find(word) != std::string::npos) lines.push_back(line);
  return lines;
}

std::map<std::string, uint64_t> recordedCalls(const readers::Capture& cap) {
  std::map<std::string, uint64_t> calls;
  for (const auto& f : readers::summarizeApi({&cap}).functions) calls[f.name] = f.count;
  return calls;
}

class InternalError : public ::testing::TestWithParam<Case> {};

TEST_P(InternalError, ProgramRunsAsWithoutGtap) {
  const Case& c = GetParam();
  ProcessResult plain = plainRun(c);
  ASSERT_EQ(plain.exitCode, 0) << plain.err;

  std::string dir = freshDirectory("internal-error-" + c.site.substr(0, c.site.find(':')));
  std::string file = dir + "/cap.gtap";
  std::vector<std::string> argv = {gtapBinary(), "run", "--sim", "-m", c.mode, "-o", file, "--", workload(c.program)};
  argv.insert(argv.end(), c.args.begin(), c.args.end());
  // Drains only at exit (the writer's are then counted in order).
  ProcessResult run = runProcess(argv, {{"GTAP_TEST_THROW_AT", c.site}, {"GTAP_FLUSH_MS", "60000"}});

  // The program: same exit, same output; its own checks of the results
  // passed (each runtime call made once, with the program's arguments).
  EXPECT_EQ(run.signal, 0) << run.err;
  EXPECT_EQ(run.exitCode, plain.exitCode) << run.err;
  EXPECT_EQ(withoutTimestamps(run.out), withoutTimestamps(plain.out)) << run.err;

  // One message, naming where.
  auto messages = linesWith(run.err, "internal error");
  ASSERT_EQ(messages.size(), 1u) << run.err;
  EXPECT_NE(messages[0].find(c.where), std::string::npos) << messages[0];
  EXPECT_NE(messages[0].find("calls pass through to the runtime"), std::string::npos) << messages[0];

  // The capture: readable, with what was recorded before the error.
  readers::Capture cap(file);
  EXPECT_TRUE(cap.notes().empty()) << cap.notes().front();
  auto calls = recordedCalls(cap);
  EXPECT_GT(calls[c.recordedBefore], 0u) << c.recordedBefore;
  if (c.site.rfind("writer", 0) == 0) {
    // The writer stopped mid-way: what it wrote stays, with no trailer.
    EXPECT_FALSE(cap.recovery().closedCleanly);
  } else {
    // The writer went on: the file is closed as at any exit.
    EXPECT_TRUE(cap.recovery().closedCleanly) << cap.recovery().stopReason;
  }
  if (!c.afterwards.empty()) {
    // Nothing is recorded after the error: the program made more launches
    // than the file holds ("launch ..." lines: one per launch it made).
    EXPECT_LT(calls[c.afterwards], linesWith(plain.out, "launch ").size()) << c.afterwards;
  }
}

// ze_multithread checks its buffers: add_u32 launched twice, or not at all,
// makes it exit with "wrong result".
INSTANTIATE_TEST_SUITE_P(
    Boundaries, InternalError,
    ::testing::Values(
        // Level Zero: gtap has substituted its own event, the append is not made yet.
        // (One thread appends a copy, a barrier, then its first launch: the third timed append.)
        Case{"ze-before:3", "ze_multithread", {"1", "8", "256"}, "api,kernels", "zeCommandListAppendLaunchKernel",
             "zeInit", "zeCommandListAppendLaunchKernel"},
        // Level Zero: the append (with gtap's event) is made; it must not be made again.
        Case{"ze-after:3", "ze_multithread", {"1", "8", "256"}, "api,kernels", "zeCommandListAppendLaunchKernel",
             "zeInit", "zeCommandListAppendLaunchKernel"},
        // HSA: after hsa_executable_freeze, which fails if made twice.
        Case{"hsa", "hsa_vector_add", {}, "api,kernels,memory", "hsa_executable_freeze", "hsa_init", ""},
        // HSA: the queue's packet handler, with a packet already rewritten to gtap's signal.
        Case{"hsa-packet", "hsa_pipeline", {}, "api,kernels,memory", "HSA packet handler",
             "hsa_executable_freeze", ""},
        // IREE HAL: a vtable slot's call start, and a dispatch thunk on the driver's worker thread.
        Case{"hal-call:2", "hal_fixture", {"100", "2"}, "api,kernels", "IREE HAL vtable hook",
             "iree_hal_fake_command_buffer_begin", ""},
        Case{"hal-thunk:2", "hal_fixture", {"100", "2"}, "api,kernels", "IREE HAL dispatch thunk",
             "iree_hal_fake_command_buffer_fill_buffer", ""},
        // A thread's next record block, inside a call (one thread fills three blocks).
        Case{"record-buffer:3", "ze_multithread", {"1", "600", "64"}, "api,kernels", "record buffer", "zeInit",
             "zeCommandListAppendLaunchKernel"},
        // The writer thread, at its second drain (the one at the very end).
        Case{"writer:2", "ze_multithread", {"2", "8", "256"}, "api,kernels", "writer thread", "zeInit", ""}),
    [](const ::testing::TestParamInfo<Case>& info) {
      std::string name;
      for (char ch : info.param.site.substr(0, info.param.site.find(':')))
        name += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
      return name;
    });

}  // namespace
}  // namespace gtap::test
