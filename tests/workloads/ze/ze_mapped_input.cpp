// Input read straight from a file mapping, as programs load weights: the file
// is mapped read-only and private, and copies take their source inside the
// mapping, from an offset that is neither zero nor page-aligned. The device
// adds a constant to each 32-bit word; the host checks against the file.
//
//   ze_mapped_input FILE [OFFSET=4196 [BYTES]]
//   ze_mapped_input --make FILE SIZE     writes SIZE deterministic bytes, prints nothing
//
// BYTES (a multiple of 4, at least 16) defaults to the rest of the file after
// OFFSET, rounded down to a multiple of 4.
//
// A regular list (copy of the range to the device, launch add_u32 +7, copy
// back to host memory) is executed twice: copy, launch, copy each time. Then
// an asynchronous immediate list does the same with +1000003 for half the
// range, from one byte past a word boundary: copy, launch, copy. Then
// "checksum regular" and "checksum immediate".
#include "ze_workload.h"

#include <algorithm>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace workload;

namespace {

constexpr uint32_t kGroupSize = 64;
constexpr uint32_t kRegularAdd = 7;
constexpr uint32_t kImmediateAdd = 1000003;
constexpr uint64_t kDefaultOffset = 4096 + 100;
constexpr const char* kUsage = "FILE [OFFSET [BYTES]] | --make FILE SIZE";

[[noreturn]] void usage(const char* program, const char* why) {
  std::fprintf(stderr, "%s\nusage: %s %s\n", why, program, kUsage);
  std::exit(kExitUsage);
}

uint64_t sizeArgument(const char* program, const char* text) {
  char* end = nullptr;
  unsigned long long value = std::strtoull(text, &end, 10);
  if (*text == '\0' || *end != '\0' || value > (1ull << 40)) usage(program, "not a size");
  return value;
}

// splitmix64: cheap, well-mixed bytes that tests can regenerate anywhere.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

int makeInput(const char* program, const char* path, uint64_t size) {
  FILE* f = std::fopen(path, "wb");
  if (f == nullptr) usage(program, "cannot create the file");
  for (uint64_t at = 0; at < size; at += 8) {
    uint64_t word = mix(at / 8);
    uint8_t bytes[8];
    for (int i = 0; i < 8; ++i) bytes[i] = uint8_t(word >> (8 * i));
    size_t n = size - at < 8 ? size_t(size - at) : 8;
    if (std::fwrite(bytes, 1, n, f) != n) usage(program, "cannot write the file");
  }
  if (std::fclose(f) != 0) usage(program, "cannot write the file");
  return 0;
}

// The word at `p`, which need not be aligned.
uint32_t wordAt(const uint8_t* p) {
  uint32_t w;
  std::memcpy(&w, p, sizeof w);
  return w;
}

void check(const char* what, const uint32_t* result, const uint8_t* source, uint32_t words, uint32_t added) {
  for (uint32_t i = 0; i < words; ++i) {
    uint32_t expected = wordAt(source + 4 * size_t(i)) + added;
    if (result[i] != expected) wrongResult("%s: word %u = %u, expected %u", what, i, result[i], expected);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "--make") == 0) {
    if (argc != 4) usage(argv[0], "--make takes FILE and SIZE");
    return makeInput(argv[0], argv[2], sizeArgument(argv[0], argv[3]));
  }
  if (argc < 2 || argc > 4) usage(argv[0], "no input file");
  const char* path = argv[1];
  const uint64_t offset = argc > 2 ? sizeArgument(argv[0], argv[2]) : kDefaultOffset;

  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) usage(argv[0], "cannot open the input file");
  struct stat st{};
  if (::fstat(fd, &st) != 0) usage(argv[0], "cannot stat the input file");
  const uint64_t fileSize = uint64_t(st.st_size);
  if (offset >= fileSize) usage(argv[0], "OFFSET is past the end of the file");
  const uint64_t bytes = argc > 3 ? sizeArgument(argv[0], argv[3]) : (fileSize - offset) / 4 * 4;
  if (bytes % 4 != 0 || bytes < 16 || bytes > fileSize - offset || bytes / 4 > (1u << 28))
    usage(argv[0], "BYTES must be a multiple of 4, at least 16, within the file");
  void* mapping = ::mmap(nullptr, fileSize, PROT_READ, MAP_PRIVATE, fd, 0);
  if (mapping == MAP_FAILED) usage(argv[0], "cannot map the input file");
  ::close(fd);  // the mapping keeps the file
  const auto* file = static_cast<const uint8_t*>(mapping);
  const uint32_t words = uint32_t(bytes / 4);
  // The immediate list's range: half as many words, starting one byte past a
  // word boundary in the middle of the first range.
  const uint32_t immediateWords = words / 2;
  const uint64_t immediateOffset = offset + 4 * (words / 4) + 1;
  const size_t immediateBytes = size_t(immediateWords) * 4;

  Report out = Report::immediate();
  Runtime rt = Runtime::open();
  Memory mem(rt.context, rt.device, out);
  uint32_t* buf = mem.device<uint32_t>(words);
  std::vector<uint32_t> result(words);

  Kernel add = rt.kernel("add_u32");
  add.setGroupSize(kGroupSize);
  add.setArg(0, buf);

  ze_command_queue_handle_t queue = rt.queue();
  ze_command_list_handle_t list = rt.list();
  Report recorded = Report::held();
  const ze_group_count_t grid{groupsFor(words, kGroupSize), 1, 1};
  ZE_CHECK(zeCommandListAppendMemoryCopy(list, buf, file + offset, bytes, nullptr, 0, nullptr));
  recorded.copy(bytes);
  ZE_CHECK(zeCommandListAppendBarrier(list, nullptr, 0, nullptr));
  add.setArg(1, kRegularAdd);
  add.setArg(2, words);
  ZE_CHECK(zeCommandListAppendLaunchKernel(list, add.handle, &grid, nullptr, 0, nullptr));
  recorded.launch(add, grid);
  ZE_CHECK(zeCommandListAppendBarrier(list, nullptr, 0, nullptr));
  ZE_CHECK(zeCommandListAppendMemoryCopy(list, result.data(), buf, bytes, nullptr, 0, nullptr));
  recorded.copy(bytes);
  ZE_CHECK(zeCommandListClose(list));

  ze_fence_desc_t fdesc{ZE_STRUCTURE_TYPE_FENCE_DESC, nullptr, 0};
  ze_fence_handle_t fence = nullptr;
  ZE_CHECK(zeFenceCreate(queue, &fdesc, &fence));
  Checksum regularSum;
  for (uint32_t e = 0; e < 2; ++e) {
    std::fill(result.begin(), result.end(), 0u);
    ZE_CHECK(zeCommandQueueExecuteCommandLists(queue, 1, &list, fence));
    recorded.replayInto(out);
    ZE_CHECK(zeFenceHostSynchronize(fence, kForever));
    ZE_CHECK(zeFenceReset(fence));
    check(e == 0 ? "regular, first execution" : "regular, second execution", result.data(), file + offset, words,
          kRegularAdd);
    regularSum.add(result.data(), bytes);
  }
  out.checksum("regular", regularSum);

  enum EventIndex : uint32_t { kUploaded, kAdded, kDownloaded, kEventCount };
  ze_event_pool_handle_t pool = rt.eventPool(kEventCount, ZE_EVENT_POOL_FLAG_HOST_VISIBLE);
  ze_event_handle_t ev[kEventCount];
  for (uint32_t i = 0; i < kEventCount; ++i) {
    ze_event_desc_t desc{ZE_STRUCTURE_TYPE_EVENT_DESC, nullptr, i, ZE_EVENT_SCOPE_FLAG_HOST, ZE_EVENT_SCOPE_FLAG_HOST};
    ZE_CHECK(zeEventCreate(pool, &desc, &ev[i]));
  }
  ze_command_list_handle_t immediate = rt.immediateList(ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
  const ze_group_count_t halfGrid{groupsFor(immediateWords, kGroupSize), 1, 1};
  std::fill(result.begin(), result.end(), 0u);
  ZE_CHECK(zeCommandListAppendMemoryCopy(immediate, buf, file + immediateOffset, immediateBytes, ev[kUploaded], 0,
                                         nullptr));
  out.copy(immediateBytes);
  add.setArg(1, kImmediateAdd);
  add.setArg(2, immediateWords);
  ZE_CHECK(zeCommandListAppendLaunchKernel(immediate, add.handle, &halfGrid, ev[kAdded], 1, &ev[kUploaded]));
  out.launch(add, halfGrid);
  ZE_CHECK(zeCommandListAppendMemoryCopy(immediate, result.data(), buf, immediateBytes, ev[kDownloaded], 1,
                                         &ev[kAdded]));
  out.copy(immediateBytes);
  ZE_CHECK(zeEventHostSynchronize(ev[kDownloaded], kForever));
  check("immediate", result.data(), file + immediateOffset, immediateWords, kImmediateAdd);
  Checksum immediateSum;
  immediateSum.add(result.data(), immediateBytes);
  out.checksum("immediate", immediateSum);

  ZE_CHECK(zeCommandListDestroy(immediate));
  for (ze_event_handle_t e : ev) ZE_CHECK(zeEventDestroy(e));
  ZE_CHECK(zeEventPoolDestroy(pool));
  ZE_CHECK(zeFenceDestroy(fence));
  ZE_CHECK(zeCommandListDestroy(list));
  ZE_CHECK(zeCommandQueueDestroy(queue));
  ZE_CHECK(zeKernelDestroy(add.handle));
  mem.free(buf);
  rt.close();
  ::munmap(mapping, fileSize);
  return 0;
}
