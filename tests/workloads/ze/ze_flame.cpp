// Launches of one kernel from call paths a flame graph must tell apart, each
// with its own group count so a test can tell which path made which device
// operation: main -> fromPathA (8 groups) and main -> fromPathB (16 groups),
// the same kernel; main -> recurse x3 (4 groups, at the bottom of the
// recursion); main -> viaInlinedHelper -> launchInline (always inlined, 32
// groups); and a second thread, workerThread (2 groups), which main never
// calls. Built with -g -O2; every launch is on one synchronous immediate
// list, so each is timed.
//
//   ze_flame [ROUNDS=2 [DEPTH=3 [PAUSE_MS]]]
//
// DEPTH is how many times recurse calls itself (deep stacks for benchmarks);
// PAUSE_MS, a sleep after each round (a run that spans seconds).
// Prints a launch line per launch, then "checksum flame".
#include <pthread.h>
#include <unistd.h>

#include "ze_workload.h"

using namespace workload;

namespace {

struct Target {
  const Runtime& rt;
  ze_command_list_handle_t list;
  Kernel& scale;
  float* in;
  float* out;
  uint32_t n;
  Report& report;
  pthread_mutex_t* lock;
};

// The launch every path ends in, with `groups` groups of 64.
__attribute__((noinline)) void launch(Target& t, uint32_t groups) {
  pthread_mutex_lock(t.lock);  // one list, two threads
  t.scale.setArg(0, static_cast<const float*>(t.in));
  t.scale.setArg(1, t.out);
  t.scale.setArg(2, 2.0f);
  t.scale.setArg(3, t.n);
  const ze_group_count_t grid{groups, 1, 1};
  ZE_CHECK(zeCommandListAppendLaunchKernel(t.list, t.scale.handle, &grid, nullptr, 0, nullptr));
  t.report.launch(t.scale, grid);
  pthread_mutex_unlock(t.lock);
  asm volatile("" ::: "memory");
}

}  // namespace

// Out of the anonymous namespace, so the frames read as these plain names;
// noclone keeps GCC from renaming a frame to a specialised copy.
#define FRAME __attribute__((noinline, noclone))

// The frame a flame graph shows as `launchInline [inlined]`.
__attribute__((always_inline)) inline void launchInline(Target& t) {
  pthread_mutex_lock(t.lock);
  const ze_group_count_t grid{32, 1, 1};  // the arguments are those launch() set last
  ZE_CHECK(zeCommandListAppendLaunchKernel(t.list, t.scale.handle, &grid, nullptr, 0, nullptr));
  t.report.launch(t.scale, grid);
  pthread_mutex_unlock(t.lock);
}

FRAME void fromPathA(Target& t) {
  launch(t, 8);
  asm volatile("" ::: "memory");
}

FRAME void fromPathB(Target& t) {
  launch(t, 16);
  asm volatile("" ::: "memory");
}

FRAME void recurse(Target& t, int depth) {
  if (depth == 0) launch(t, 4);
  else recurse(t, depth - 1);
  asm volatile("" ::: "memory");  // not a tail call: each level keeps its frame
}

FRAME void viaInlinedHelper(Target& t) {
  launchInline(t);
  asm volatile("" ::: "memory");
}

FRAME void* workerThread(void* arg) {
  launch(*static_cast<Target*>(arg), 2);
  asm volatile("" ::: "memory");
  return nullptr;
}

int main(int argc, char** argv) {
  const uint32_t rounds = countArgument(argc, argv, 1, 2, "[ROUNDS [DEPTH]]");
  const uint32_t depth = countArgument(argc, argv, 2, 3, "[ROUNDS [DEPTH [PAUSE_MS]]]");
  const uint32_t pauseMs = argc > 3 ? countArgument(argc, argv, 3, 0, "[ROUNDS [DEPTH [PAUSE_MS]]]") : 0;
  const uint32_t n = 64 * 32;
  Report report = Report::immediate();
  Runtime rt = Runtime::open();
  Memory mem(rt.context, rt.device, report);
  float* in = mem.shared<float>(n);
  float* out = mem.shared<float>(n);
  for (uint32_t i = 0; i < n; ++i) in[i] = float(i % 17);
  ze_command_list_handle_t list = rt.immediateList(ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS);
  Kernel scale = rt.kernel("scale");
  scale.setGroupSize(64);
  pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  Target t{rt, list, scale, in, out, n, report, &lock};
  Checksum sum;
  for (uint32_t r = 0; r < rounds; ++r) {
    fromPathA(t);
    fromPathB(t);
    recurse(t, static_cast<int>(depth));
    viaInlinedHelper(t);
    pthread_t worker;
    if (pthread_create(&worker, nullptr, workerThread, &t) != 0) return 1;
    pthread_join(worker, nullptr);
    sum.add(out, n * sizeof(float));
    if (pauseMs) usleep(pauseMs * 1000);
  }
  report.checksum("flame", sum);
  ZE_CHECK(zeCommandListDestroy(list));
  ZE_CHECK(zeKernelDestroy(scale.handle));
  mem.free({in, out});
  rt.close();
  return 0;
}
