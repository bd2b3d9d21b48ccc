// Recording phases from a program and from outside: three rounds of scale
// launches on a synchronous immediate list, round r launching r + 2 times.
//
//   ze_phases [--api | --wait FIFO] [ELEMENTS=4096]
//
// --api: gtap_stop() before round 0, gtap_start() before round 1 and
//   gtap_stop() after it (the calls do nothing without gtap).
// --wait FIFO: before rounds 1 and 2 prints "waiting ROUND PID" and reads a
//   line from FIFO, so that a test can signal the process between rounds.
// Either way the program's own SIGUSR1 handler is raised at the end and
// "handler own" printed when it ran.
//
// Prints "round R" before each round's lines, then launch and copy lines, a
// checksum and the frees.
#include <signal.h>
#include <unistd.h>

#include "gtap/gtap.h"
#include "ze_workload.h"

using namespace workload;

namespace {
volatile sig_atomic_t g_ownHandlerRan = 0;
void onUsr1(int) { g_ownHandlerRan = 1; }

void waitFor(const char* fifo, uint32_t round) {
  std::printf("waiting %u %d\n", round, static_cast<int>(getpid()));
  std::fflush(stdout);
  FILE* f = std::fopen(fifo, "r");
  if (!f) {
    std::fprintf(stderr, "ze_phases: cannot open %s\n", fifo);
    std::exit(64);
  }
  char line[64];
  if (!std::fgets(line, sizeof line, f)) {
    std::fprintf(stderr, "ze_phases: nothing read from %s\n", fifo);
    std::exit(64);
  }
  std::fclose(f);
}
}  // namespace

int main(int argc, char** argv) {
  const char* usage = "[--api | --wait FIFO] [ELEMENTS]";
  bool api = argc > 1 && std::strcmp(argv[1], "--api") == 0;
  const char* fifo = argc > 2 && std::strcmp(argv[1], "--wait") == 0 ? argv[2] : nullptr;
  int first = api ? 2 : fifo ? 3 : 1;
  const uint32_t n = countArgument(argc, argv, first, 4096, usage);
  const size_t bytes = size_t(n) * sizeof(float);

  struct sigaction sa {};
  sa.sa_handler = &onUsr1;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGUSR1, &sa, nullptr);

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
  if (api) gtap_stop();
  for (uint32_t r = 0; r < 3; ++r) {
    if (fifo && r > 0) waitFor(fifo, r);
    if (api && r == 1) gtap_start();
    std::printf("round %u\n", r);
    float factor = 1.0f + float(r);
    for (uint32_t k = 0; k < r + 2; ++k) {
      scale.setArg(0, static_cast<const float*>(x));
      scale.setArg(1, y);
      scale.setArg(2, factor);
      scale.setArg(3, n);
      ZE_CHECK(zeCommandListAppendLaunchKernel(list, scale.handle, &grid, nullptr, 0, nullptr));
      out.launch(scale, grid);
    }
    ZE_CHECK(zeCommandListAppendMemoryCopy(list, result, y, bytes, nullptr, 0, nullptr));
    out.copy(bytes);
    for (uint32_t i = 0; i < n; ++i)
      if (result[i] != factor * host[i]) wrongResult("round %u element %u: %f", r, i, double(result[i]));
    sum.add(result, bytes);
    if (api && r == 1) gtap_stop();
  }
  out.checksum("phases", sum);
  ZE_CHECK(zeCommandListDestroy(list));
  mem.free({host, result, x, y});
  raise(SIGUSR1);
  if (g_ownHandlerRan) std::printf("handler own\n");
  std::fflush(stdout);
  return 0;
}
