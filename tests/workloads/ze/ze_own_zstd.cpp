// A Level Zero program linked against a zstd of its own (own_zstd.c, a
// libzstd.so.1 that is not zstd), as programs that bundle their own
// compression library are: it launches vector_add ITERATIONS times and says
// which zstd its own calls reached.
//
//   ze_own_zstd [ITERATIONS=3]
//
// Prints the workload lines, then "zstd version N" and "zstd output
// marked|unmarked".
#include <cstring>

#include "ze_workload.h"

extern "C" {
unsigned ZSTD_versionNumber(void);
size_t ZSTD_compress(void* dst, size_t dstCapacity, const void* src, size_t srcSize, int level);
}

using namespace workload;

int main(int argc, char** argv) {
  const uint32_t iterations = countArgument(argc, argv, 1, 3, "[ITERATIONS]");
  const uint32_t n = 1024;
  Report out = Report::immediate();
  Runtime rt = Runtime::open();
  Memory mem(rt.context, rt.device, out);
  float* a = mem.shared<float>(n);
  float* b = mem.shared<float>(n);
  float* c = mem.shared<float>(n);
  for (uint32_t i = 0; i < n; ++i) {
    a[i] = float(i);
    b[i] = 1.0f;
  }
  Kernel add = rt.kernel("vector_add");
  add.setGroupSize(256);
  add.setArg(0, a);
  add.setArg(1, b);
  add.setArg(2, c);
  add.setArg(3, n);
  const ze_group_count_t groups{groupsFor(n, 256), 1, 1};
  ze_command_list_handle_t list = rt.immediateList(ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS);
  for (uint32_t it = 0; it < iterations; ++it) {
    ZE_CHECK(zeCommandListAppendLaunchKernel(list, add.handle, &groups, nullptr, 0, nullptr));
    out.launch(add, groups);
  }
  ZE_CHECK(zeCommandListDestroy(list));
  char in[16] = "sixteen bytes..", packed[64] = {};
  size_t size = ZSTD_compress(packed, sizeof packed, in, sizeof in, 3);
  std::printf("zstd version %u\n", ZSTD_versionNumber());
  std::printf("zstd output %s (%zu bytes)\n", std::memcmp(packed, "OWNZSTD!", 8) == 0 ? "marked" : "unmarked", size);
  return 0;
}
