// The Level Zero loads of benchmarks/compare. Each runs a fixed amount of work
// on the simulated device and prints two lines on stdout:
//
//   ns_per_op NS        host time of the measured loop over its operation count
//   checksum HEX        the results, equal with and without any tracer
//
//   compare_ze calls N
//       N calls of zeDriverGetApiVersion: the cheapest call a driver answers.
//   compare_ze launch-regular N BATCH
//       N launches of a one-work-item kernel appended to a regular command
//       list, BATCH per list: reset, append BATCH, close, execute, synchronise.
//   compare_ze launch-immediate N BATCH
//       N launches on an asynchronous immediate list; every BATCH, a barrier
//       with an event the host waits for.
//   compare_ze mixed CALLS LAUNCHES
//       A long run: CALLS calls of zeDriverGetApiVersion with LAUNCHES launches
//       spread evenly among them on an asynchronous immediate list (a barrier
//       and a host wait every 64 launches). ns_per_op is per call.
//   compare_ze upload N MIB distinct|repeat
//       N copies of MIB MiB from ordinary host memory to the device on a
//       synchronous immediate list; "distinct" changes every page before each
//       copy, "repeat" copies the same bytes every time.
//   compare_ze exit-busy THREADS MS
//       THREADS threads call zeDriverGetApiVersion in a loop; after MS ms main
//       prints "returning_ns T" (CLOCK_MONOTONIC) and returns while they still
//       call: the time from T to the process's end is what exit costs.
//
// The launch loads also print "op_counts NAME allocations A locks L" on stderr
// for their loop when tests/support/op_counters.c is preloaded.
#include <time.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "op_counters.h"
#include "ze_workload.h"

using namespace workload;

namespace {

const char* kUsage =
    "calls N | launch-regular N BATCH | launch-immediate N BATCH | mixed CALLS LAUNCHES | upload N MIB "
    "distinct|repeat | exit-busy THREADS MS";

using SteadyClock = std::chrono::steady_clock;

// argv[index] as a count from 1 to 2^31 (`zero_ok`: from 0); else the usage.
uint32_t count(int argc, char** argv, int index, bool zero_ok = false) {
  char* end = nullptr;
  unsigned long long v = index < argc ? std::strtoull(argv[index], &end, 10) : 0;
  if (index >= argc || *argv[index] == '\0' || *end != '\0' || (v == 0 && !zero_ok) || v > (1ull << 31)) {
    std::fprintf(stderr, "usage: %s %s\n", argv[0], kUsage);
    std::exit(kExitUsage);
  }
  return static_cast<uint32_t>(v);
}

void report(SteadyClock::time_point start, uint64_t ops, const Checksum& sum) {
  double ns = std::chrono::duration<double, std::nano>(SteadyClock::now() - start).count();
  std::printf("ns_per_op %.3f\nchecksum %016llx\n", ns / double(ops), static_cast<unsigned long long>(sum.value()));
}

int calls(uint32_t n) {
  ZE_CHECK(zeInit(ZE_INIT_FLAG_GPU_ONLY));
  uint32_t count = 1;
  ze_driver_handle_t driver = nullptr;
  ZE_CHECK(zeDriverGet(&count, &driver));
  ze_api_version_t version{};
  uint64_t ok = 0;
  auto start = SteadyClock::now();
  for (uint32_t i = 0; i < n; ++i) ok += zeDriverGetApiVersion(driver, &version) == ZE_RESULT_SUCCESS;
  Checksum sum;
  sum.add(&ok, sizeof ok);
  sum.add(&version, sizeof version);
  report(start, n, sum);
  return ok == n ? 0 : kExitZeFailure;
}

int exitBusy(uint32_t threads, uint32_t ms) {
  ZE_CHECK(zeInit(ZE_INIT_FLAG_GPU_ONLY));
  uint32_t count = 1;
  ze_driver_handle_t driver = nullptr;
  ZE_CHECK(zeDriverGet(&count, &driver));
  std::atomic<uint32_t> started{0};
  for (uint32_t i = 0; i < threads; ++i)
    std::thread([driver, &started] {
      ze_api_version_t version{};
      started.fetch_add(1);
      for (;;) zeDriverGetApiVersion(driver, &version);
    }).detach();
  while (started.load() < threads) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  std::printf("returning_ns %lld\nchecksum 0\n", static_cast<long long>(now.tv_sec) * 1000000000 + now.tv_nsec);
  std::fflush(stdout);
  return 0;
}

// The kernel adds 1 to one counter per launch; the counter is the result.
struct Counter {
  Report silent = Report::held();
  Runtime rt = Runtime::open();
  Memory mem{rt.context, rt.device, silent};
  uint32_t* value = mem.shared<uint32_t>(1);
  Kernel add = rt.kernel("add_u32");

  Counter() {
    *value = 0;
    add.setGroupSize(1);
    add.setArg(0, value);
    add.setArg(1, 1u);
    add.setArg(2, 1u);
  }
  // `ops` is what the time is divided by: the launches unless given.
  int finish(SteadyClock::time_point start, uint32_t launches, uint64_t ops = 0) {
    Checksum sum;
    sum.add(value, sizeof *value);
    report(start, ops ? ops : launches, sum);
    if (*value != launches) wrongResult("the counter is %u after %u launches", *value, launches);
    mem.free(value);
    ZE_CHECK(zeKernelDestroy(add.handle));
    rt.close();
    return 0;
  }
};

int launchRegular(uint32_t n, uint32_t batch) {
  Counter c;
  ze_command_queue_handle_t queue = c.rt.queue();
  ze_command_list_handle_t list = c.rt.list();
  const ze_group_count_t one{1, 1, 1};
  op_counts counted = op_counts_now();
  auto start = SteadyClock::now();
  for (uint32_t done = 0; done < n;) {
    uint32_t count = std::min(batch, n - done);
    ZE_CHECK(zeCommandListReset(list));
    for (uint32_t i = 0; i < count; ++i)
      ZE_CHECK(zeCommandListAppendLaunchKernel(list, c.add.handle, &one, nullptr, 0, nullptr));
    ZE_CHECK(zeCommandListClose(list));
    ZE_CHECK(zeCommandQueueExecuteCommandLists(queue, 1, &list, nullptr));
    ZE_CHECK(zeCommandQueueSynchronize(queue, kForever));
    done += count;
  }
  op_counts_report("launch-regular", counted);
  int rc = c.finish(start, n);
  ZE_CHECK(zeCommandListDestroy(list));
  ZE_CHECK(zeCommandQueueDestroy(queue));
  return rc;
}

// Launches on an asynchronous immediate list, waited for every `batch`.
struct ImmediateLauncher {
  Counter& c;
  uint32_t batch;
  ze_command_list_handle_t list = c.rt.immediateList(ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
  ze_event_pool_handle_t pool = c.rt.eventPool(1, ZE_EVENT_POOL_FLAG_HOST_VISIBLE);
  ze_event_handle_t done = nullptr;
  uint32_t pending = 0;

  ImmediateLauncher(Counter& counter, uint32_t b) : c(counter), batch(b) {
    ze_event_desc_t desc{ZE_STRUCTURE_TYPE_EVENT_DESC, nullptr, 0, ZE_EVENT_SCOPE_FLAG_HOST,
                         ZE_EVENT_SCOPE_FLAG_HOST};
    ZE_CHECK(zeEventCreate(pool, &desc, &done));
  }
  void launch() {
    const ze_group_count_t one{1, 1, 1};
    ZE_CHECK(zeCommandListAppendLaunchKernel(list, c.add.handle, &one, nullptr, 0, nullptr));
    if (++pending == batch) wait();
  }
  void wait() {
    if (pending == 0) return;
    ZE_CHECK(zeCommandListAppendBarrier(list, done, 0, nullptr));
    ZE_CHECK(zeEventHostSynchronize(done, kForever));
    ZE_CHECK(zeEventHostReset(done));
    pending = 0;
  }
  ~ImmediateLauncher() {
    ZE_CHECK(zeEventDestroy(done));
    ZE_CHECK(zeEventPoolDestroy(pool));
    ZE_CHECK(zeCommandListDestroy(list));
  }
};

int launchImmediate(uint32_t n, uint32_t batch) {
  Counter c;
  ImmediateLauncher launcher(c, batch);
  op_counts counted = op_counts_now();
  auto start = SteadyClock::now();
  for (uint32_t i = 0; i < n; ++i) launcher.launch();
  launcher.wait();
  op_counts_report("launch-immediate", counted);
  return c.finish(start, n);
}

int mixed(uint32_t calls, uint32_t launches) {
  Counter c;
  ImmediateLauncher launcher(c, 64);
  ze_api_version_t version{};
  uint64_t ok = 0;
  const uint64_t every = launches == 0 ? UINT64_MAX : std::max<uint64_t>(1, calls / launches);
  uint32_t launched = 0;
  auto start = SteadyClock::now();
  for (uint32_t i = 0; i < calls; ++i) {
    ok += zeDriverGetApiVersion(c.rt.driver, &version) == ZE_RESULT_SUCCESS;
    if (launched < launches && (i + 1) % every == 0) {
      launcher.launch();
      ++launched;
    }
  }
  while (launched < launches) {
    launcher.launch();
    ++launched;
  }
  launcher.wait();
  if (ok != calls) wrongResult("%llu of %u calls succeeded", static_cast<unsigned long long>(ok), calls);
  return c.finish(start, launches, calls);
}

int upload(uint32_t n, uint32_t mib, bool distinct) {
  const size_t bytes = size_t(mib) << 20;
  Report silent = Report::held();
  Runtime rt = Runtime::open();
  Memory mem(rt.context, rt.device, silent);
  auto* device = mem.device<uint32_t>(bytes / 4);
  std::vector<uint32_t> host(bytes / 4), back(bytes / 4);
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<uint32_t>(i * 2654435761u);
  ze_command_list_handle_t list = rt.immediateList(ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS);
  auto start = SteadyClock::now();
  for (uint32_t s = 0; s < n; ++s) {
    if (distinct)
      for (size_t i = 0; i < host.size(); i += 1024) host[i] = s + 1;  // one word in every page
    ZE_CHECK(zeCommandListAppendMemoryCopy(list, device, host.data(), bytes, nullptr, 0, nullptr));
  }
  double ns = std::chrono::duration<double, std::nano>(SteadyClock::now() - start).count();
  ZE_CHECK(zeCommandListAppendMemoryCopy(list, back.data(), device, bytes, nullptr, 0, nullptr));
  if (back != host) wrongResult("the device copy differs from the last upload");
  Checksum sum;
  sum.add(back.data(), bytes);
  std::printf("ns_per_op %.3f\nchecksum %016llx\n", ns / n, static_cast<unsigned long long>(sum.value()));
  ZE_CHECK(zeCommandListDestroy(list));
  mem.free(device);
  rt.close();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s %s\n", argv[0], kUsage);
    return kExitUsage;
  }
  const std::string what = argv[1];
  const uint32_t n = count(argc, argv, 2);
  if (what == "calls" && argc == 3) return calls(n);
  if (what == "exit-busy" && argc == 4) return exitBusy(n, count(argc, argv, 3));
  if (what == "launch-regular" && argc == 4) return launchRegular(n, count(argc, argv, 3));
  if (what == "launch-immediate" && argc == 4) return launchImmediate(n, count(argc, argv, 3));
  if (what == "mixed" && argc == 4) return mixed(n, count(argc, argv, 3, true));
  if (what == "upload" && argc == 5 && (std::strcmp(argv[4], "distinct") == 0 || std::strcmp(argv[4], "repeat") == 0))
    return upload(n, count(argc, argv, 3), std::strcmp(argv[4], "distinct") == 0);
  std::fprintf(stderr, "usage: %s %s\n", argv[0], kUsage);
  return kExitUsage;
}
