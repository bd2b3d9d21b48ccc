// gtap's private copies of common libraries stay out of the program's way: a
// program linked against a libzstd.so.1 of its own (a different zstd:
// tests/workloads/ze/own_zstd.c) keeps calling its own under gtap, and gtap
// keeps compressing with the zstd linked, hidden, into libgtap.so.
#include <gtest/gtest.h>

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
