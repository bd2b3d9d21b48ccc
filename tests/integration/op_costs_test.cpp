// gtap takes no lock and no heap allocation on the program's thread per HSA
// dispatch or IREE HAL operation. Each load runs N and 2N operations, alone
// and under `gtap run`, with libgtap_op_counters.so preloaded; the load
// prints its loop's counts for its own thread. What gtap adds per operation,
// ((gtap 2N - gtap N) - (alone 2N - alone N)) / N, must stay far below what a
// single lock or allocation per operation would add (1): start-up, first
// uses and buffer blocks cancel out or amortise to nearly nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <regex>
#include <string>

#include "process.h"

namespace gtap::test {
namespace {

std::string simHsaDir() { return std::string(GTAP_TEST_SIM_DIR) + "/hsa"; }
std::string opCounters() { return std::string(GTAP_TEST_OP_COUNTERS); }

struct Counts {
  double allocations = 0, locks = 0;
};

struct Load {
  const char* name;      // the op_counts name the load prints
  const char* workload;  // in the workload directory
  bool hsa;
  // argv after the workload for `n` operations
  std::vector<std::string> (*args)(uint32_t n);
  uint32_t n;
  uint32_t perN;  // operations the loop makes for `n`
};

Counts run(const Load& load, uint32_t n, const char* mode, const std::string& dir) {
  std::vector<std::string> argv;
  EnvChanges env = {{"LD_PRELOAD", opCounters()}};
  if (mode) {
    argv = {gtapBinary(), "run", "--sim", "-q", "-m", mode, "-o", dir + "/run-%p.gtap", "--"};
  } else if (load.hsa) {
    env["LD_LIBRARY_PATH"] = simHsaDir();
  }
  argv.push_back(workload(load.workload));
  for (const std::string& a : load.args(n)) argv.push_back(a);
  ProcessResult r = runProcess(argv, env);
  EXPECT_EQ(r.exitCode, 0) << load.name << ": " << r.err;
  std::smatch m;
  std::regex line(std::string("op_counts ") + load.name + " allocations (\\d+) locks (\\d+)");
  if (!std::regex_search(r.err, m, line)) {
    ADD_FAILURE() << load.name << " printed no op_counts (" << (mode ? mode : "alone") << "): " << r.err;
    return {};
  }
  return {std::stod(m[1]), std::stod(m[2])};
}

class OpCosts : public ::testing::TestWithParam<const char*> {};

TEST_P(OpCosts, NoLockOrAllocationPerOperation) {
  const char* mode = GetParam();
  const Load loads[] = {
      {"hsa-dispatch-batch", "hsa_dispatch_loop", true,
       [](uint32_t n) { return std::vector<std::string>{std::to_string(n), "64"}; }, 6400, 6400},
      {"hsa-dispatch-wait", "hsa_dispatch_loop", true,
       [](uint32_t n) { return std::vector<std::string>{std::to_string(n), "1"}; }, 2000, 2000},
      // hal_fixture N: N fills, N/10+1 dispatches on thread 0.
      {"hal-fill", "hal_fixture", false, [](uint32_t n) { return std::vector<std::string>{std::to_string(n)}; },
       20000, 20000},
      {"hal-dispatch", "hal_fixture", false, [](uint32_t n) { return std::vector<std::string>{std::to_string(n)}; },
       20000, 2000},
  };
  std::string dir = std::string("op_costs_") + mode;  // one of its own per mode: the modes run in parallel
  std::replace(dir.begin(), dir.end(), ',', '_');
  dir = freshDirectory(dir);
  for (const Load& load : loads) {
    Counts base1 = run(load, load.n, nullptr, dir), base2 = run(load, 2 * load.n, nullptr, dir);
    Counts gtap1 = run(load, load.n, mode, dir), gtap2 = run(load, 2 * load.n, mode, dir);
    double ops = load.perN;  // the extra operations of the 2N run
    double allocations = ((gtap2.allocations - gtap1.allocations) - (base2.allocations - base1.allocations)) / ops;
    double locks = ((gtap2.locks - gtap1.locks) - (base2.locks - base1.locks)) / ops;
    EXPECT_LT(allocations, 0.02) << load.name << " in mode " << mode << ": gtap adds " << allocations
                                 << " heap allocations per operation (alone " << base1.allocations << " / "
                                 << base2.allocations << ", under gtap " << gtap1.allocations << " / "
                                 << gtap2.allocations << ")";
    EXPECT_LT(locks, 0.02) << load.name << " in mode " << mode << ": gtap adds " << locks
                           << " lock acquisitions per operation (alone " << base1.locks << " / " << base2.locks
                           << ", under gtap " << gtap1.locks << " / " << gtap2.locks << ")";
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, OpCosts, ::testing::Values("api,kernels", "api,kernels,memory", "api,kernels,stacks"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           std::string name;  // "api,kernels,memory" -> "ApiKernelsMemory"
                           bool start = true;
                           for (const char* c = info.param; *c; ++c) {
                             if (*c == ',') {
                               start = true;
                               continue;
                             }
                             name += start ? static_cast<char>(std::toupper(static_cast<unsigned char>(*c))) : *c;
                             start = false;
                           }
                           return name;
                         });

}  // namespace
}  // namespace gtap::test
