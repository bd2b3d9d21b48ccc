// A program that forks while its other threads keep the device busy, as a
// Python or MPI program using fork for its workers does: the child lands
// wherever those threads were (inside a wait, a reset, a destroy), cleans up
// the lists it inherited, and exits.
//
//   ze_fork_busy [THREADS=2 [FORKS=100]]
//
// THREADS threads each run rounds of 8 launches on a regular list of their
// own (append, close, execute with a fence, wait, reset). Meanwhile main forks
// FORKS times; each child destroys every thread's list (the driver says the
// parent's handles are not its own) and leaves with _exit(0). A child that
// has not ended within 20 s is killed and counted as hung. Prints
// "forks F, children ended E, hung H, rounds R" and exits 1 when one hung.
#include "ze_workload.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

using namespace workload;

namespace {

constexpr uint32_t kMaxThreads = 16;
std::atomic<ze_command_list_handle_t> g_lists[kMaxThreads];
std::atomic<bool> g_stop{false};
std::atomic<uint64_t> g_rounds{0};

void runThread(const Runtime& rt, uint32_t index) {
  Report out = Report::held();
  Memory mem(rt.context, rt.device, out);
  constexpr uint32_t n = 256;
  uint32_t* buf = mem.device<uint32_t>(n);
  Kernel add = rt.kernel("add_u32");
  add.setGroupSize(64);
  add.setArg(0, buf);
  add.setArg(1, 1u);
  add.setArg(2, n);
  const ze_group_count_t grid{groupsFor(n, 64), 1, 1};
  ze_command_queue_handle_t queue = rt.queue(index % rt.computeQueues);
  ze_command_list_handle_t list = rt.list();
  g_lists[index].store(list);
  ze_fence_desc_t fdesc{ZE_STRUCTURE_TYPE_FENCE_DESC, nullptr, 0};
  ze_fence_handle_t fence = nullptr;
  ZE_CHECK(zeFenceCreate(queue, &fdesc, &fence));
  while (!g_stop.load()) {
    for (int k = 0; k < 8; ++k) ZE_CHECK(zeCommandListAppendLaunchKernel(list, add.handle, &grid, nullptr, 0, nullptr));
    ZE_CHECK(zeCommandListClose(list));
    ZE_CHECK(zeCommandQueueExecuteCommandLists(queue, 1, &list, fence));
    ZE_CHECK(zeFenceHostSynchronize(fence, kForever));
    ZE_CHECK(zeFenceReset(fence));
    ZE_CHECK(zeCommandListReset(list));
    g_rounds.fetch_add(1);
  }
  g_lists[index].store(nullptr);
  ZE_CHECK(zeFenceDestroy(fence));
  ZE_CHECK(zeCommandListDestroy(list));
  ZE_CHECK(zeCommandQueueDestroy(queue));
  ZE_CHECK(zeKernelDestroy(add.handle));
  mem.free({buf});
}

// 0 ended, 1 hung (killed).
int waitChild(pid_t pid) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  for (;;) {
    int status = 0;
    pid_t got = waitpid(pid, &status, WNOHANG);
    if (got == pid) return 0;
    if (got < 0) return 0;
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

}  // namespace

int main(int argc, char** argv) {
  const char* usage = "[THREADS [FORKS]]";
  const uint32_t threads = countArgument(argc, argv, 1, 2, usage);
  const uint32_t forks = countArgument(argc, argv, 2, 100, usage);
  if (threads == 0 || threads > kMaxThreads) {
    std::fprintf(stderr, "usage: %s %s (1 to %u threads)\n", argv[0], usage, kMaxThreads);
    return kExitUsage;
  }
  Runtime rt = Runtime::open();
  std::vector<std::thread> pool;
  for (uint32_t t = 0; t < threads; ++t) pool.emplace_back(runThread, std::cref(rt), t);
  while (g_rounds.load() < threads) std::this_thread::yield();
  uint32_t ended = 0, hung = 0;
  for (uint32_t f = 0; f < forks; ++f) {
    // Somewhere inside the threads' rounds.
    std::this_thread::sleep_for(std::chrono::microseconds(200 + 37 * (f % 50)));
    pid_t pid = fork();
    if (pid < 0) {
      std::perror("fork");
      return 1;
    }
    if (pid == 0) {
      // The child's copy of the lists: not its own to use, but its own to clean up.
      for (uint32_t t = 0; t < threads; ++t)
        if (ze_command_list_handle_t l = g_lists[t].load()) zeCommandListDestroy(l);
      _exit(0);
    }
    if (waitChild(pid)) ++hung;
    else ++ended;
  }
  g_stop.store(true);
  for (auto& th : pool) th.join();
  rt.close();
  std::printf("forks %u, children ended %u, hung %u, rounds %s\n", forks, ended, hung,
              g_rounds.load() >= forks ? "enough" : "few");
  return hung ? 1 : 0;
}
