// Named ranges around device work: one scale launch outside any range, then
// inside "outer" one launch before "inner" and two inside it, each launch on
// a synchronous immediate list (so each launch call's range is plain).
//
//   ze_ranges [--stray-pop] [--leave-open] [--threads N] [ELEMENTS=4096]
//
// --stray-pop: gtap_range_pop() with no range open, before the first push and
//   after the last pop (gtap ignores them and counts them).
// --leave-open: gtap_range_push("unclosed") after the launches, never popped.
// --threads N: N more threads, started before the first launch and joined
//   after the last, each pushing and popping 100 "worker" ranges with an
//   "item" range inside each, while the main thread launches in its own.
// The range calls do nothing without gtap. Prints "range NAME" (none:
// outside any) before each launch line, the copies, a checksum and the
// allocations and frees.
#include <thread>

#include "gtap/gtap.h"
#include "ze_workload.h"

using namespace workload;

int main(int argc, char** argv) {
  const char* usage = "[--stray-pop] [--leave-open] [--threads N] [ELEMENTS]";
  bool strayPop = false, leaveOpen = false;
  uint32_t workers = 0;
  int first = 1;
  for (; first < argc && argv[first][0] == '-'; ++first) {
    if (std::strcmp(argv[first], "--stray-pop") == 0) {
      strayPop = true;
    } else if (std::strcmp(argv[first], "--leave-open") == 0) {
      leaveOpen = true;
    } else if (std::strcmp(argv[first], "--threads") == 0 && first + 1 < argc) {
      workers = countArgument(argc, argv, ++first, 0, usage);
    } else {
      std::fprintf(stderr, "usage: %s %s\n", argv[0], usage);
      return 64;
    }
  }
  const uint32_t n = countArgument(argc, argv, first, 4096, usage);
  const size_t bytes = size_t(n) * sizeof(float);

  Report out = Report::immediate();
  Runtime rt = Runtime::open();
  Memory mem(rt.context, rt.device, out);
  float* host = mem.host<float>(n);
  float* result = mem.host<float>(n);
  float* x = mem.device<float>(n);
  float* y = mem.device<float>(n);
  for (uint32_t i = 0; i < n; ++i) host[i] = float(i % 89);

  ze_command_list_handle_t list = rt.immediateList(ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS);
  ZE_CHECK(zeCommandListAppendMemoryCopy(list, x, host, bytes, nullptr, 0, nullptr));
  out.copy(bytes);
  Kernel scale = rt.kernel("scale");
  scale.setGroupSize(64);
  const ze_group_count_t grid{groupsFor(n, scale.groupSize[0]), 1, 1};
  Checksum sum;
  float factor = 1.0f;
  auto launch = [&](const char* range) {
    std::printf("range %s\n", range);
    factor += 1.0f;
    scale.setArg(0, static_cast<const float*>(x));
    scale.setArg(1, y);
    scale.setArg(2, factor);
    scale.setArg(3, n);
    ZE_CHECK(zeCommandListAppendLaunchKernel(list, scale.handle, &grid, nullptr, 0, nullptr));
    out.launch(scale, grid);
    ZE_CHECK(zeCommandListAppendMemoryCopy(list, result, y, bytes, nullptr, 0, nullptr));
    out.copy(bytes);
    for (uint32_t i = 0; i < n; ++i)
      if (result[i] != factor * host[i]) wrongResult("factor %f element %u: %f", double(factor), i, double(result[i]));
    sum.add(result, bytes);
  };

  std::vector<std::thread> threads;
  for (uint32_t t = 0; t < workers; ++t)
    threads.emplace_back([] {
      for (int i = 0; i < 100; ++i) {
        gtap_range_push("worker");
        gtap_range_push("item");
        gtap_range_pop();
        gtap_range_pop();
      }
    });
  if (strayPop) gtap_range_pop();
  launch("none");
  gtap_range_push("outer");
  launch("outer");
  gtap_range_push("inner");
  launch("inner");
  launch("inner");
  gtap_range_pop();
  gtap_range_pop();
  if (strayPop) gtap_range_pop();
  for (std::thread& t : threads) t.join();
  if (leaveOpen) gtap_range_push("unclosed");

  out.checksum("ranges", sum);
  ZE_CHECK(zeCommandListDestroy(list));
  mem.free({host, result, x, y});
  std::fflush(stdout);
  return 0;
}
