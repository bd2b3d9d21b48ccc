// Loads for measuring replay capture: what it stores for uploads and what it
// costs per submission. Prints one line, "SECONDS_PER_STEP BYTES_PER_STEP".
//
//   ze_replay_load upload STEPS distinct|repeat
//       STEPS copies of 1 MiB from ordinary host memory to the device on a
//       synchronous immediate list; "distinct" changes every page before each
//       copy, "repeat" copies the same bytes every time.
//   ze_replay_load submit STEPS SHARED_MIB
//       STEPS executions of a one-launch list whose kernel reads a shared
//       allocation of SHARED_MIB MiB, the host writing one 4 KiB page of it
//       before each (what replay's page comparison finds and stores).
#include <chrono>

#include "ze_workload.h"

using namespace workload;

namespace {
double seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

int upload(uint32_t steps, bool distinct) {
  constexpr size_t kBytes = 1u << 20;
  Report out = Report::held();
  Runtime rt = Runtime::open();
  Memory mem(rt.context, rt.device, out);
  uint32_t* device = mem.device<uint32_t>(kBytes / 4);
  std::vector<uint32_t> host(kBytes / 4);
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<uint32_t>(i * 2654435761u);
  ze_command_list_handle_t list = rt.immediateList(ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS);
  auto start = std::chrono::steady_clock::now();
  for (uint32_t s = 0; s < steps; ++s) {
    if (distinct)
      for (size_t i = 0; i < host.size(); i += 1024) host[i] = s + 1;  // one word in every page
    ZE_CHECK(zeCommandListAppendMemoryCopy(list, device, host.data(), kBytes, nullptr, 0, nullptr));
  }
  double took = seconds(start);
  ZE_CHECK(zeCommandListDestroy(list));
  mem.free(device);
  std::printf("%.9f %zu\n", took / steps, kBytes);
  return 0;
}

int submit(uint32_t steps, uint32_t sharedMiB) {
  const size_t words = size_t(sharedMiB) << 18;
  Report out = Report::held();
  Runtime rt = Runtime::open();
  Memory mem(rt.context, rt.device, out);
  uint32_t* shared = mem.shared<uint32_t>(words);
  for (size_t i = 0; i < words; ++i) shared[i] = static_cast<uint32_t>(i);
  Kernel add = rt.kernel("add_u32");
  add.setGroupSize(64);
  const uint32_t n = 64;  // the kernel touches one group: the submission itself is what is timed
  add.setArg(0, shared);
  add.setArg(1, 1u);
  add.setArg(2, n);
  ze_command_queue_handle_t queue = rt.queue();
  ze_command_list_handle_t list = rt.list();
  const ze_group_count_t grid{1, 1, 1};
  ZE_CHECK(zeCommandListAppendLaunchKernel(list, add.handle, &grid, nullptr, 0, nullptr));
  ZE_CHECK(zeCommandListClose(list));
  auto start = std::chrono::steady_clock::now();
  for (uint32_t s = 0; s < steps; ++s) {
    shared[(size_t(s) * 1024 * 7) % words] += 1;  // one page changes per submission
    ZE_CHECK(zeCommandQueueExecuteCommandLists(queue, 1, &list, nullptr));
    ZE_CHECK(zeCommandQueueSynchronize(queue, kForever));
  }
  double took = seconds(start);
  ZE_CHECK(zeCommandListDestroy(list));
  ZE_CHECK(zeCommandQueueDestroy(queue));
  mem.free(shared);
  std::printf("%.9f %zu\n", took / steps, size_t{4096});
  return 0;
}
}  // namespace

int main(int argc, char** argv) {
  const char* usage = "upload STEPS distinct|repeat | submit STEPS SHARED_MIB";
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s %s\n", argv[0], usage);
    return kExitUsage;
  }
  uint32_t steps = countArgument(argc, argv, 2, 1, usage);
  if (std::strcmp(argv[1], "upload") == 0) return upload(steps, std::strcmp(argv[3], "distinct") == 0);
  if (std::strcmp(argv[1], "submit") == 0) return submit(steps, countArgument(argc, argv, 3, 1, usage));
  std::fprintf(stderr, "usage: %s %s\n", argv[0], usage);
  return kExitUsage;
}
