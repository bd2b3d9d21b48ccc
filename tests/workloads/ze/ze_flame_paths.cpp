// Launches through 2^BITS distinct call paths: launch i walks the bits of i
// from the highest, calling left() for a 0 and right() for a 1, and launches
// at the bottom; so every launch has a stack of its own, BITS frames below
// main. For flame graphs of many distinct stacks (readability, cost).
// Built with -g -O2; one synchronous immediate list, so each launch is timed.
//
//   ze_flame_paths [BITS=4]
//
// Prints a launch line per launch, then "checksum paths".
#include "ze_workload.h"

using namespace workload;

namespace {

struct Target {
  ze_command_list_handle_t list;
  Kernel& scale;
  Report& report;
};

}  // namespace

// noipa: GCC would otherwise fold left and right, identical, into one function.
#define FRAME __attribute__((noipa))

FRAME void left(Target& t, uint32_t path, int bit);
FRAME void right(Target& t, uint32_t path, int bit);

// The next bit's step, or the launch at the bottom.
FRAME void step(Target& t, uint32_t path, int bit) {
  if (bit < 0) {
    const ze_group_count_t grid{1 + path % 8, 1, 1};
    ZE_CHECK(zeCommandListAppendLaunchKernel(t.list, t.scale.handle, &grid, nullptr, 0, nullptr));
    t.report.launch(t.scale, grid);
  } else if ((path >> bit) & 1) {
    right(t, path, bit - 1);
  } else {
    left(t, path, bit - 1);
  }
  asm volatile("" ::: "memory");  // not a tail call: each level keeps its frame
}

FRAME void left(Target& t, uint32_t path, int bit) {
  step(t, path, bit);
  asm volatile("" ::: "memory");
}

FRAME void right(Target& t, uint32_t path, int bit) {
  step(t, path, bit);
  asm volatile("" ::: "memory");
}

int main(int argc, char** argv) {
  const uint32_t bits = countArgument(argc, argv, 1, 4, "[BITS]");
  if (bits > 20) {
    std::fprintf(stderr, "usage: %s [BITS] (at most 20)\n", argv[0]);
    return kExitUsage;
  }
  const uint32_t n = 64 * 8;
  Report report = Report::immediate();
  Runtime rt = Runtime::open();
  Memory mem(rt.context, rt.device, report);
  float* in = mem.shared<float>(n);
  float* out = mem.shared<float>(n);
  for (uint32_t i = 0; i < n; ++i) in[i] = float(i % 13);
  ze_command_list_handle_t list = rt.immediateList(ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS);
  Kernel scale = rt.kernel("scale");
  scale.setGroupSize(64);
  scale.setArg(0, static_cast<const float*>(in));
  scale.setArg(1, out);
  scale.setArg(2, 3.0f);
  scale.setArg(3, n);
  Target t{list, scale, report};
  for (uint32_t path = 0; path < (1u << bits); ++path) step(t, path, static_cast<int>(bits) - 1);
  Checksum sum;
  sum.add(out, n * sizeof(float));
  report.checksum("paths", sum);
  ZE_CHECK(zeCommandListDestroy(list));
  ZE_CHECK(zeKernelDestroy(scale.handle));
  mem.free({in, out});
  rt.close();
  return 0;
}
