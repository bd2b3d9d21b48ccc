// Replay scopes from a program: rounds of scale launches on an immediate list,
// round 1 inside gtap_scope_begin("work") / gtap_scope_end("work") (the calls
// do nothing without gtap), and, with --raise-signal, round 2 between two
// raise(SIGUSR2) (only under `gtap run --scope-signal SIGUSR2`: the signal's
// default action ends a program that nobody told to expect it).
//
//   ze_scopes [--raise-signal] [ROUNDS=4 [ELEMENTS=4096]]
//
// Prints the alloc lines, a copy, per round a launch and a copy, then
// "checksum scopes" and the frees.
#include <signal.h>

#include "gtap/gtap.h"
#include "ze_workload.h"

using namespace workload;

int main(int argc, char** argv) {
  bool raiseSignal = argc > 1 && std::strcmp(argv[1], "--raise-signal") == 0;
  int first = raiseSignal ? 2 : 1;
  const char* usage = "[--raise-signal] [ROUNDS [ELEMENTS]]";
  const uint32_t rounds = countArgument(argc, argv, first, 4, usage);
  const uint32_t n = countArgument(argc, argv, first + 1, 4096, usage);
  const size_t bytes = size_t(n) * sizeof(float);

  Report out = Report::immediate();
  Runtime rt = Runtime::open();
  Memory mem(rt.context, rt.device, out);
  float* host = mem.host<float>(n);
  float* result = mem.host<float>(n);
  float* x = mem.device<float>(n);
  float* y = mem.device<float>(n);
  for (uint32_t i = 0; i < n; ++i) host[i] = float(i % 97);

  ze_command_list_handle_t list = rt.immediateList(ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS);
  ZE_CHECK(zeCommandListAppendMemoryCopy(list, x, host, bytes, nullptr, 0, nullptr));
  out.copy(bytes);
  Kernel scale = rt.kernel("scale");
  scale.setGroupSize(64);
  const ze_group_count_t grid{groupsFor(n, scale.groupSize[0]), 1, 1};
  Checksum sum;
  for (uint32_t r = 0; r < rounds; ++r) {
    if (r == 1) gtap_scope_begin("work");
    if (r == 2 && raiseSignal) raise(SIGUSR2);
    float factor = 1.0f + float(r);
    scale.setArg(0, static_cast<const float*>(x));
    scale.setArg(1, y);
    scale.setArg(2, factor);
    scale.setArg(3, n);
    ZE_CHECK(zeCommandListAppendLaunchKernel(list, scale.handle, &grid, nullptr, 0, nullptr));
    out.launch(scale, grid);
    ZE_CHECK(zeCommandListAppendMemoryCopy(list, result, y, bytes, nullptr, 0, nullptr));
    out.copy(bytes);
    for (uint32_t i = 0; i < n; ++i)
      if (result[i] != factor * host[i]) wrongResult("round %u element %u: %f", r, i, double(result[i]));
    sum.add(result, bytes);
    if (r == 1) gtap_scope_end("work");
    if (r == 2 && raiseSignal) raise(SIGUSR2);
  }
  out.checksum("scopes", sum);
  ZE_CHECK(zeCommandListDestroy(list));
  mem.free({host, result, x, y});
  return 0;
}
