// exec, vfork, posix_spawn and clone under `gtap run`, on real processes with
// the real loader and the simulated driver: what a process recorded before it
// replaced itself is in a complete file, a failed exec loses nothing, and a
// child sharing its parent's memory leaves the parent's capture alone.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <sstream>

#include "gtap/readers/api_stats.h"
#include "gtap/readers/capture.h"
#include "process.h"

namespace gtap::test {
namespace {

using Counts = std::map<std::string, uint64_t>;

Counts capturedCounts(const readers::Capture& capture) {
  Counts c;
  for (const auto& f : readers::summarizeApi({&capture}).functions) {
    EXPECT_EQ(f.unfinished, 0u) << capture.path() << ": " << f.name;
    c[f.name] = f.count;
  }
  return c;
}

// A file every reader takes as whole: a trailer that indexes every chunk,
// nothing it had to recover or could not decode.
void expectComplete(const readers::Capture& c, const std::string& reason) {
  EXPECT_TRUE(c.recovery().closedCleanly) << c.path() << ": " << c.recovery().stopReason;
  EXPECT_TRUE(c.notes().empty()) << c.path() << ": " << c.notes().front();
  EXPECT_EQ(c.trailer().closeReason, reason) << c.path();
}

ProcessResult gtapRun(const std::string& dir, const std::vector<std::string>& program) {
  std::vector<std::string> argv = {gtapBinary(), "run", "--sim", "-o", dir + "/cap-%p.gtap", "--"};
  argv.insert(argv.end(), program.begin(), program.end());
  return runProcess(argv);
}

std::string baseName(const std::string& path) { return std::filesystem::path(path).filename().string(); }

// The program's file and the file of the image it exec'd: the same pid, so
// %p names the same file, and the second takes the first free numbered name.
void expectExecFiles(const std::string& dir, const ProcessResult& r) {
  auto files = filesIn(dir);
  ASSERT_EQ(files.size(), 2u) << r.err;
  std::sort(files.begin(), files.end(), [](const std::string& a, const std::string& b) { return a.size() < b.size(); });
  readers::Capture before(files[0]);
  readers::Capture image(files[1]);
  std::string pid = std::to_string(before.process().pid);
  EXPECT_EQ(baseName(files[0]), "cap-" + pid + ".gtap");
  EXPECT_EQ(baseName(files[1]), "cap-" + pid + ".1.gtap");
  EXPECT_EQ(image.process().pid, before.process().pid);
  expectComplete(before, "exec");
  EXPECT_EQ(capturedCounts(before), printedCounts(r.out, "calls"));
  expectComplete(image, "exit");
  EXPECT_EQ(capturedCounts(image), printedCounts(r.out, "image"));
  EXPECT_FALSE(printedCounts(r.out, "image").empty()) << r.out;
}

class ExecVariantTest : public ::testing::TestWithParam<std::string> {};

// Every exec function: the file is complete before the image is replaced, and
// the new image writes its own file beside it.
TEST_P(ExecVariantTest, FileIsCompleteBeforeTheImageIsReplaced) {
  std::string dir = freshDirectory("exec-" + GetParam());
  auto r = gtapRun(dir, {workload("ze_exec_vfork"), "exec", GetParam()});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  expectExecFiles(dir, r);
}

INSTANTIATE_TEST_SUITE_P(ExecFamily, ExecVariantTest,
                         ::testing::Values("execve", "execv", "execvp", "execvpe", "execl", "execlp", "execle",
                                           "fexecve", "execveat"));

// Execs that fail return to a program that goes on calling: those calls join
// the same file, written on after the trailer the exec had made it write.
TEST(ExecVfork, FailedExecsLoseNothing) {
  std::string dir = freshDirectory("exec-fails");
  auto r = gtapRun(dir, {workload("ze_exec_vfork"), "exec-fails"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  expectExecFiles(dir, r);
}

// The parent's one file, closed by the parent at its exit, with every call.
void expectParentFileOnly(const std::string& dir, const ProcessResult& r) {
  auto files = filesIn(dir);
  ASSERT_EQ(files.size(), 1u) << r.err;
  readers::Capture c(files[0]);
  expectComplete(c, "exit");
  Counts printed = printedCounts(r.out, "calls");
  ASSERT_FALSE(printed.empty()) << r.out << r.err;
  EXPECT_EQ(capturedCounts(c), printed);
}

// vfork children share the parent's memory: their _exit, _Exit and exec
// (failing or not) must not close the parent's file.
TEST(ExecVfork, VforkChildrenLeaveTheParentsFileAlone) {
  std::string dir = freshDirectory("vfork");
  auto r = gtapRun(dir, {workload("ze_exec_vfork"), "vfork"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  expectParentFileOnly(dir, r);
}

// posix_spawn (a CLONE_VFORK child inside libc), and a clone(CLONE_VM |
// CLONE_VFORK) child of the program's own whose exec fails and which _exits.
TEST(ExecVfork, SpawnedChildrenLeaveTheParentsFileAlone) {
  std::string dir = freshDirectory("spawn");
  auto r = gtapRun(dir, {workload("ze_exec_vfork"), "spawn"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  expectParentFileOnly(dir, r);
}

// Python's subprocess starts children with vfork; one whose program is
// missing leaves with _exit.
TEST(ExecVfork, PythonSubprocessLeavesTheParentsFileAlone) {
  std::string dir = freshDirectory("python-subprocess");
  auto r = gtapRun(dir, {GTAP_TEST_PYTHON, GTAP_TEST_PY_SUBPROCESS});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  expectParentFileOnly(dir, r);
}

}  // namespace
}  // namespace gtap::test
