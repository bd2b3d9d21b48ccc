// gtap's private copies of common libraries stay out of the program's way: a
// program linked against a libzstd.so.1 of its own (a different zstd:
// tests/workloads/ze/own_zstd.c) keeps calling its own under gtap, and gtap
// keeps compressing with the zstd linked, hidden, into libgtap.so.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "process.h"

namespace gtap::test {
namespace {

TEST(PrivateLibraries, AProgramWithItsOwnZstdKeepsItsOwn) {
  std::string dir = freshDirectory("private-zstd");
  std::string file = dir + "/cap.gtap";
  auto plain = runProcess({workload("ze_own_zstd"), "3"},
                          {{"ZE_ENABLE_ALT_DRIVERS", std::string(GTAP_TEST_SIM_DIR) + "/libze_gtap_sim.so"}});
  ASSERT_EQ(plain.exitCode, 0) << plain.err;
  ASSERT_NE(plain.out.find("zstd version 10999\nzstd output marked"), std::string::npos) << plain.out;
  auto traced = runProcess({gtapBinary(), "run", "--sim", "-q", "-m", "api,kernels,memory,replay", "-o", file, "--",
                            workload("ze_own_zstd"), "3"});
  ASSERT_EQ(traced.exitCode, 0) << traced.err;
  EXPECT_EQ(traced.out, plain.out) << "the program's calls reached its own zstd";
  // gtap's chunks were compressed by a real zstd (the program's would have
  // made them larger) and read back whole.
  auto info = runProcess({gtapBinary(), "info", "--format=jsonl", file});
  ASSERT_EQ(info.exitCode, 0) << info.err;
  EXPECT_NE(info.out.find("\"closed_cleanly\":true"), std::string::npos) << info.out;
  size_t at = info.out.find("\"compression_ratio\":");
  ASSERT_NE(at, std::string::npos) << info.out;
  EXPECT_GT(std::stod(info.out.substr(at + 20)), 1.5) << info.out;
  auto kernels = runProcess({gtapBinary(), "kernels", "--format=csv", file});
  ASSERT_EQ(kernels.exitCode, 0) << kernels.err;
  EXPECT_NE(kernels.out.find("\nvector_add,3,"), std::string::npos) << kernels.out;
}

}  // namespace
}  // namespace gtap::test

namespace gtap::test {
namespace {

// gtap bundle: the install's layout with every library but the C library's
// in lib/gtap/deps; the bundled gtap starts with no library path at all, from
// another place; an existing folder with anything in it is refused and kept.
TEST(Bundle, HoldsGtapAndItsLibrariesAndRefusesAFolderInUse) {
  namespace fs = std::filesystem;
  std::string dir = freshDirectory("bundle");
  auto made = runProcess({gtapBinary(), "bundle", dir + "/b"});
  ASSERT_EQ(made.exitCode, 0) << made.err;
  EXPECT_NE(made.err.find("gtap bundle: wrote " + dir + "/b ("), std::string::npos) << made.err;
  EXPECT_NE(made.err.find("or newer"), std::string::npos) << made.err;
  EXPECT_TRUE(fs::is_regular_file(dir + "/b/bin/gtap"));
  EXPECT_TRUE(fs::is_regular_file(dir + "/b/lib/gtap/libgtap.so"));
  EXPECT_FALSE(fs::exists(dir + "/b/lib/gtap/sim")) << "only with --with-sim";
  for (const char* lib : {"libcapnp-0.9.2.so", "libkj-0.9.2.so", "libunwind.so.8", "libelf.so.1", "libstdc++.so.6"})
    EXPECT_TRUE(fs::is_regular_file(dir + "/b/lib/gtap/deps/" + lib)) << lib;
  for (const char* lib : {"libc.so.6", "libm.so.6", "ld-linux-x86-64.so.2", "libze_loader.so.1"})
    EXPECT_FALSE(fs::exists(dir + "/b/lib/gtap/deps/" + lib)) << lib << " is the system's";
  // bin/gtap is the static launcher, which runs bin/gtap.bin once the
  // system's C library is as new as lib/gtap/needs-glibc says.
  EXPECT_TRUE(fs::is_regular_file(dir + "/b/bin/gtap.bin"));
  std::string needs;
  std::getline(std::ifstream(dir + "/b/lib/gtap/needs-glibc"), needs);
  EXPECT_TRUE(std::regex_match(needs, std::regex("2\\.[0-9]+"))) << needs;
  // Moved elsewhere, it still finds its own libraries.
  fs::rename(dir + "/b", dir + "/moved");
  auto version = runProcess({"env", "-i", dir + "/moved/bin/gtap", "--version"});
  EXPECT_EQ(version.exitCode, 0) << version.err;
  EXPECT_EQ(version.out.rfind("gtap ", 0), 0u) << version.out;
  // On a C library older than the bundle needs, the launcher says which
  // version it needs and runs nothing.
  { std::ofstream(dir + "/moved/lib/gtap/needs-glibc") << "2.9999\n"; }
  auto old = runProcess({dir + "/moved/bin/gtap", "--version"});
  EXPECT_EQ(old.exitCode, 127) << old.err;
  EXPECT_TRUE(old.out.empty()) << old.out;
  EXPECT_NE(old.err.find("this gtap bundle needs glibc 2.9999 or newer"), std::string::npos) << old.err;
  EXPECT_TRUE(std::regex_search(old.err, std::regex("C library is glibc 2\\.[0-9]+ \\("))) << old.err;
  // A folder in use is never replaced.
  fs::create_directories(dir + "/used");
  { std::ofstream(dir + "/used/mine.txt") << "mine"; }
  auto refused = runProcess({gtapBinary(), "bundle", dir + "/used"});
  EXPECT_EQ(refused.exitCode, 2) << refused.err;
  EXPECT_NE(refused.err.find("is not an empty directory"), std::string::npos) << refused.err;
  EXPECT_TRUE(fs::is_regular_file(dir + "/used/mine.txt"));
  size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++entries;
  EXPECT_EQ(entries, 2u) << "no half bundle is left beside them";
}

}  // namespace
}  // namespace gtap::test

namespace gtap::test {
namespace {

// A program that loads a C++ runtime older than libgtap.so needs (as in an
// older image, or an environment that carries its own): preloaded, the
// loader would stop it before it starts. gtap run says so and runs it as
// without gtap: same output, same exit status, no capture.
TEST(PrivateLibraries, AProgramWithAnOlderCxxRuntimeRunsAsWithoutGtap) {
  namespace fs = std::filesystem;
  std::string dir = freshDirectory("old-cxx");
  auto plain = runProcess({workload("old_cxx_program")});
  ASSERT_EQ(plain.exitCode, 0) << plain.err;
  auto traced = runProcess({gtapBinary(), "run", "-o", dir + "/cap.gtap", "--", workload("old_cxx_program")});
  EXPECT_EQ(traced.exitCode, 0) << traced.err;
  EXPECT_EQ(traced.out, plain.out);
  EXPECT_NE(traced.err.find("old-cxx/libstdc++.so.6, which lacks "), std::string::npos) << traced.err;
  EXPECT_NE(traced.err.find("GLIBCXX_3.4."), std::string::npos) << traced.err;
  EXPECT_NE(traced.err.find("it runs without gtap, and nothing is captured"), std::string::npos) << traced.err;
  EXPECT_FALSE(fs::exists(dir + "/cap.gtap"));
  // A program whose libraries are new enough is not held back by the check.
  auto fine = runProcess({gtapBinary(), "run", "--sim", "-q", "-o", dir + "/fine.gtap", "--", workload("ze_vector_add"),
                          "1", "64"});
  EXPECT_EQ(fine.exitCode, 0) << fine.err;
  EXPECT_EQ(fine.err.find("runs without gtap"), std::string::npos) << fine.err;
  EXPECT_TRUE(fs::exists(dir + "/fine.gtap"));
}

}  // namespace
}  // namespace gtap::test
