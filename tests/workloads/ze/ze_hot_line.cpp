// A kernel whose time is on one source line (hot_loop in workload_kernels.c,
// the line marked GTAP_HOT_LINE), launched from two call paths: main ->
// shortRuns (STEPS / 4 steps per group) and main -> longRuns (STEPS steps),
// two groups each, on one synchronous immediate list, so every launch is
// timed. What instruction sampling (mode samples) is tested with.
//
//   ze_hot_line [STEPS=4000000 [ROUNDS=2]]
//
// Prints a launch line per launch, then "checksum hot_line".
#include "ze_workload.h"

using namespace workload;

#define FRAME __attribute__((noinline, noclone))

namespace {

void run(ze_command_list_handle_t list, Kernel& k, uint64_t* out, uint64_t steps, Report& report) {
  k.setArg(0, out);
  k.setArg(1, steps);
  const ze_group_count_t grid{2, 1, 1};
  ZE_CHECK(zeCommandListAppendLaunchKernel(list, k.handle, &grid, nullptr, 0, nullptr));
  report.launch(k, grid);
}

}  // namespace

FRAME void shortRuns(ze_command_list_handle_t list, Kernel& k, uint64_t* out, uint64_t steps, Report& report) {
  run(list, k, out, steps / 4, report);
  asm volatile("" ::: "memory");
}

FRAME void longRuns(ze_command_list_handle_t list, Kernel& k, uint64_t* out, uint64_t steps, Report& report) {
  run(list, k, out, steps, report);
  asm volatile("" ::: "memory");
}

int main(int argc, char** argv) {
  const uint64_t steps = countArgument(argc, argv, 1, 4000000, "[STEPS [ROUNDS]]");
  const uint32_t rounds = countArgument(argc, argv, 2, 2, "[STEPS [ROUNDS]]");
  Report report = Report::immediate();
  Runtime rt = Runtime::open();
  Memory mem(rt.context, rt.device, report);
  uint64_t* out = mem.shared<uint64_t>(2);
  ze_command_list_handle_t list = rt.immediateList(ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS);
  Kernel k = rt.kernel("hot_loop");
  k.setGroupSize(1);
  Checksum sum;
  for (uint32_t r = 0; r < rounds; ++r) {
    shortRuns(list, k, out, steps, report);
    sum.add(out, 2 * sizeof(uint64_t));
    longRuns(list, k, out, steps, report);
    sum.add(out, 2 * sizeof(uint64_t));
  }
  report.checksum("hot_line", sum);
  ZE_CHECK(zeCommandListDestroy(list));
  ZE_CHECK(zeKernelDestroy(k.handle));
  mem.free(out);
  rt.close();
  return 0;
}
