// Inputs the host writes in place between executions: two shared allocations
// a kernel reads directly, and a host allocation a copy reads. Each command
// list is recorded once; before each execution the host writes new values
// into all pages of the inputs in some rounds and into a few pages (or a few
// elements) in others, so what the device reads changes without any call
// saying so. Results come back into ordinary malloc'ed memory.
//
//   ze_shared_inputs [ROUNDS=5 [ELEMENTS=6444]]
//
// Shared list: launch vector_add(a, b) into device c, copy c to the result.
// Host list:   copy host h to device d, launch add(a, d) into c, copy c back.
// Per shared round (ROUNDS of them): launch, copy. Then two host rounds
// (all of h, then one page of h): copy, launch, copy. Then "checksum shared"
// and "checksum host". The default size spans 7 pages of 4 KiB per input,
// the last one partly.
#include "ze_workload.h"

#include <algorithm>
#include <cmath>
#include <memory>

using namespace workload;

namespace {

constexpr uint32_t kGroupSize = 64;
// gtap looks for changed host memory in 4 KiB pages from each allocation's
// start, so rounds write whole pages, single pages, or single elements.
constexpr uint32_t kPageElements = 4096 / sizeof(float);

// An input and the values the program meant to put in it.
struct Input {
  float* data;
  std::vector<float> intended;

  // Elements [first, end) get the values of `round`, different in every round.
  void write(uint32_t round, uint32_t first, uint32_t end, float salt) {
    end = std::min<uint32_t>(end, intended.size());
    for (uint32_t i = first; i < end; ++i) {
      float value = float(i % 509) * 0.5f + float(round + 1) * salt;
      data[i] = value;
      intended[i] = value;
    }
  }
  void writePage(uint32_t round, uint32_t page, float salt) {
    write(round, page * kPageElements, (page + 1) * kPageElements, salt);
  }
  uint32_t pages() const { return groupsFor(uint32_t(intended.size()), kPageElements); }
};

// Which parts of the inputs a shared round rewrites, by round number.
void writeSharedRound(uint32_t round, Input& a, Input& b) {
  const uint32_t n = uint32_t(a.intended.size());
  const uint32_t last = a.pages() - 1;
  switch (round % 5) {
    case 0:  // everything
      a.write(round, 0, n, 3.0f);
      b.write(round, 0, n, -1.0f);
      break;
    case 1:  // one page of one input
      a.writePage(round, std::min(1u, last), 3.0f);
      break;
    case 2:  // pages at both ends of b, one in the middle of a
      b.writePage(round, 0, -1.0f);
      b.writePage(round, last, -1.0f);
      a.writePage(round, last / 2, 3.0f);
      break;
    case 3:  // everything again, with new values
      a.write(round, 0, n, 3.0f);
      b.write(round, 0, n, -1.0f);
      break;
    case 4:  // one element in the partial last page of a, a few scattered in b
      a.write(round, n - 1, n, 3.0f);
      for (uint32_t i = 7; i < n; i += 3 * kPageElements + 5) b.write(round, i, i + 1, -1.0f);
      break;
  }
}

void checkResult(const char* what, uint32_t round, const float* result, const std::vector<float>& x,
                 const std::vector<float>& y) {
  for (size_t i = 0; i < x.size(); ++i) {
    float expected = x[i] + y[i];
    if (result[i] != expected) wrongResult("%s round %u: c[%zu] = %g, expected %g", what, round, i, result[i], expected);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const char* usage = "[ROUNDS [ELEMENTS]]";
  const uint32_t rounds = countArgument(argc, argv, 1, 5, usage);
  const uint32_t n = countArgument(argc, argv, 2, 6 * kPageElements + 300, usage);
  const size_t bytes = size_t(n) * sizeof(float);

  Report out = Report::immediate();
  Runtime rt = Runtime::open();
  Memory mem(rt.context, rt.device, out);

  Input a{mem.shared<float>(n), std::vector<float>(n, 0.0f)};
  Input b{mem.shared<float>(n), std::vector<float>(n, 0.0f)};
  float* c = mem.device<float>(n);
  Input h{mem.host<float>(n), std::vector<float>(n, 0.0f)};
  float* d = mem.device<float>(n);
  // Shared and host allocations start with unspecified contents.
  for (Input* in : {&a, &b, &h}) std::fill_n(in->data, n, 0.0f);
  // Ordinary host memory: the read-backs' destination.
  std::unique_ptr<float, decltype(&std::free)> result(static_cast<float*>(std::malloc(bytes)), &std::free);
  if (!result) wrongResult("cannot allocate %zu bytes of host memory", bytes);

  const ze_group_count_t grid{groupsFor(n, kGroupSize), 1, 1};
  Kernel vectorAdd = rt.kernel("vector_add");
  vectorAdd.setGroupSize(kGroupSize);
  vectorAdd.setArg(0, a.data);
  vectorAdd.setArg(1, b.data);
  vectorAdd.setArg(2, c);
  vectorAdd.setArg(3, n);
  Kernel add = rt.kernel("add");
  add.setGroupSize(kGroupSize);
  add.setArg(0, a.data);
  add.setArg(1, d);
  add.setArg(2, c);
  add.setArg(3, n);

  ze_command_queue_handle_t queue = rt.queue();
  ze_command_list_handle_t sharedList = rt.list();
  Report sharedLines = Report::held();
  ZE_CHECK(zeCommandListAppendLaunchKernel(sharedList, vectorAdd.handle, &grid, nullptr, 0, nullptr));
  sharedLines.launch(vectorAdd, grid);
  ZE_CHECK(zeCommandListAppendBarrier(sharedList, nullptr, 0, nullptr));
  ZE_CHECK(zeCommandListAppendMemoryCopy(sharedList, result.get(), c, bytes, nullptr, 0, nullptr));
  sharedLines.copy(bytes);
  ZE_CHECK(zeCommandListClose(sharedList));

  ze_command_list_handle_t hostList = rt.list();
  Report hostLines = Report::held();
  ZE_CHECK(zeCommandListAppendMemoryCopy(hostList, d, h.data, bytes, nullptr, 0, nullptr));
  hostLines.copy(bytes);
  ZE_CHECK(zeCommandListAppendBarrier(hostList, nullptr, 0, nullptr));
  ZE_CHECK(zeCommandListAppendLaunchKernel(hostList, add.handle, &grid, nullptr, 0, nullptr));
  hostLines.launch(add, grid);
  ZE_CHECK(zeCommandListAppendBarrier(hostList, nullptr, 0, nullptr));
  ZE_CHECK(zeCommandListAppendMemoryCopy(hostList, result.get(), c, bytes, nullptr, 0, nullptr));
  hostLines.copy(bytes);
  ZE_CHECK(zeCommandListClose(hostList));

  auto run = [&](ze_command_list_handle_t list, const Report& lines) {
    // A value no round writes, so a copy that did not happen shows.
    std::fill_n(result.get(), n, std::nanf(""));
    ZE_CHECK(zeCommandQueueExecuteCommandLists(queue, 1, &list, nullptr));
    lines.replayInto(out);
    ZE_CHECK(zeCommandQueueSynchronize(queue, kForever));
  };

  Checksum sharedSum;
  for (uint32_t r = 0; r < rounds; ++r) {
    writeSharedRound(r, a, b);
    run(sharedList, sharedLines);
    checkResult("shared", r, result.get(), a.intended, b.intended);
    sharedSum.add(result.get(), bytes);
  }
  out.checksum("shared", sharedSum);

  Checksum hostSum;
  for (uint32_t r = 0; r < 2; ++r) {
    if (r == 0) {
      h.write(r, 0, n, 0.25f);
    } else {
      h.writePage(r, h.pages() / 2, 0.25f);
    }
    run(hostList, hostLines);
    checkResult("host", r, result.get(), a.intended, h.intended);
    hostSum.add(result.get(), bytes);
  }
  out.checksum("host", hostSum);

  ZE_CHECK(zeCommandListDestroy(hostList));
  ZE_CHECK(zeCommandListDestroy(sharedList));
  ZE_CHECK(zeCommandQueueDestroy(queue));
  ZE_CHECK(zeKernelDestroy(add.handle));
  ZE_CHECK(zeKernelDestroy(vectorAdd.handle));
  mem.free({a.data, b.data, c, h.data, d});
  rt.close();
  return 0;
}
