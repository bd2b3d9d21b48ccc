// gtap takes no lock and makes no heap allocation per Level Zero launch on
// the program's thread. The launch loads of benchmarks/compare_ze count their
// own thread's allocations and lock acquisitions (tests/support/op_counters.c,
// preloaded) over their loop; run at N and 2N launches, alone and under gtap,
// the difference of differences over N is what gtap adds per launch, start-up
// and exit cancelled. Whatever gtap does once per block of records or once per
// synchronisation stays far below one per launch; one per launch does not.
// Under -m replay a submission compares host memory and writes its records
// under the recorder's lock: those loads synchronise less often, so what is
// per launch stands out from what is per submission.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "process.h"

namespace gtap::test {
namespace {

#if defined(GTAP_TEST_COMPARE_ZE) && defined(GTAP_TEST_OP_COUNTERS)

struct Counts {
  double allocations = 0, locks = 0;
};

constexpr uint32_t kLaunches = 5000;
constexpr double kMostPerLaunch = 0.02;

Counts counted(const std::string& load, uint32_t launches, uint32_t batch, const std::string& mode,
               const std::string& dir) {
  std::vector<std::string> argv{GTAP_TEST_COMPARE_ZE, load, std::to_string(launches), std::to_string(batch)};
  EnvChanges env{{"LD_PRELOAD", GTAP_TEST_OP_COUNTERS}};
  if (mode.empty()) {
    env["ZE_ENABLE_ALT_DRIVERS"] = std::string(GTAP_TEST_SIM_DIR) + "/libze_gtap_sim.so";
  } else {
    // gtap run adds its own library after the counting one.
    argv.insert(argv.begin(), {gtapBinary(), "run", "--sim", "-q", "-m", mode, "-o",
                               dir + "/" + load + "-" + std::to_string(launches) + ".gtap", "--"});
  }
  ProcessResult r = runProcess(argv, env, {"GTAP_SIM_INLINE"});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  std::smatch m;
  std::regex line("op_counts " + load + " allocations ([0-9]+) locks ([0-9]+)");
  if (!std::regex_search(r.err, m, line)) {
    ADD_FAILURE() << "no op_counts line from " << load << " (mode '" << mode << "'): " << r.err;
    return {};
  }
  return {std::stod(m[1]), std::stod(m[2])};
}

struct Case {
  std::string load, mode;
  uint32_t batch = 128;  // launches per synchronisation
};
void PrintTo(const Case& c, std::ostream* os) {
  *os << c.load << " under -m " << c.mode << ", " << c.batch << " per synchronisation";
}

class ZeLaunchOps : public ::testing::TestWithParam<Case> {};

TEST_P(ZeLaunchOps, NoLockOrAllocationPerLaunch) {
  const Case& c = GetParam();
  std::string dir = freshDirectory("launch-ops");
  Counts base1 = counted(c.load, kLaunches, c.batch, "", dir);
  Counts base2 = counted(c.load, 2 * kLaunches, c.batch, "", dir);
  Counts gtap1 = counted(c.load, kLaunches, c.batch, c.mode, dir);
  Counts gtap2 = counted(c.load, 2 * kLaunches, c.batch, c.mode, dir);
  double allocations = ((gtap2.allocations - gtap1.allocations) - (base2.allocations - base1.allocations)) / kLaunches;
  double locks = ((gtap2.locks - gtap1.locks) - (base2.locks - base1.locks)) / kLaunches;
  EXPECT_LT(allocations, kMostPerLaunch) << "heap allocations gtap adds per launch";
  EXPECT_LT(locks, kMostPerLaunch) << "lock acquisitions gtap adds per launch";
  // The program alone locks and allocates in the simulated driver every
  // launch: the counts are real.
  EXPECT_GT(base2.locks - base1.locks, kLaunches);
}

INSTANTIATE_TEST_SUITE_P(Loads, ZeLaunchOps,
                         ::testing::Values(Case{"launch-regular", "api,kernels"},
                                           Case{"launch-immediate", "api,kernels"},
                                           Case{"launch-regular", "api,kernels,memory"},
                                           Case{"launch-immediate", "api,kernels,memory"},
                                           Case{"launch-regular", "api,kernels,stacks"},
                                           Case{"launch-immediate", "api,kernels,stacks"},
                                           Case{"launch-regular", "replay", 1000}),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           std::string name = info.param.load + "_" + info.param.mode;
                           for (char& ch : name)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return name;
                         });

#else

TEST(ZeLaunchOps, NoLockOrAllocationPerLaunch) {
  GTEST_SKIP() << "needs benchmarks/compare_ze (GTAP_BUILD_BENCHMARKS=ON)";
}

#endif

}  // namespace
}  // namespace gtap::test
