// A program that times its own work, as HIP's runtime does on ROCr: it turns
// on profiling for its queue (hsa_amd_profiling_set_profiler_enabled) and for
// asynchronous copies (hsa_amd_profiling_async_copy_enable), reads each
// kernel's start and end with hsa_amd_profiling_get_dispatch_time on the
// packet's own completion signal, and one copy's with
// hsa_amd_profiling_get_async_copy_time. Both are in the system domain; the
// duration in nanoseconds uses HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY. A tool
// that also wants these times must not change what the program reads.
//
//   hsa_own_timestamps [DISPATCHES=3]
//
// Lines: alloc device (marks), alloc host (marks, zeros), alloc host (the
// kernarg segment); copy (zeros to the device marks, hsa_memory_copy); per
// dispatch "dispatch spin 2 1 1 1 1 1" then "timestamp spin NS"; copy (the
// marks back, profiled async copy); "checksum marks"; the frees.
//
// Each spin work-group busies itself for 200 us. Checks (exit 2): start <=
// end; start no earlier than a system timestamp read before the packet was
// written, end no later than one read after the wait; the duration at least
// the time the groups spin (less 1 us for the clock's resolution); and the
// same ordering for the copy.
#include "hsa_workload.h"
#include "hsa_workload_args.h"

using namespace workload;

namespace {

constexpr uint64_t kSpinNs = 200'000;  // per work-group
constexpr uint32_t kSpinGroups = 2;
constexpr uint64_t kResolutionSlackNs = 1'000;

uint64_t toNs(uint64_t ticks, uint64_t frequency) {
  return static_cast<uint64_t>(static_cast<unsigned __int128>(ticks) * 1'000'000'000u / frequency);
}

void checkInterval(const char* what, uint64_t start, uint64_t end, uint64_t before, uint64_t after) {
  if (start > end || start < before || end > after)
    wrongResult("%s: start %llu, end %llu, not within [%llu, %llu] (system timestamps before and after)", what,
                static_cast<unsigned long long>(start), static_cast<unsigned long long>(end),
                static_cast<unsigned long long>(before), static_cast<unsigned long long>(after));
}

}  // namespace

int main(int argc, char** argv) {
  const char* usage = "[DISPATCHES]";
  const uint32_t dispatches = countArgument(argc, argv, 1, 3, usage, 1000);
  noMoreArguments(argc, argv, 1, usage);
  const size_t markBytes = kSpinGroups * sizeof(uint32_t);

  Report out = Report::immediate();
  Runtime rt;
  rt.open(Runtime::Load::kFromMemory);
  uint64_t frequency = 0;
  HSA_CHECK(hsa_system_get_info(HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY, &frequency));
  if (frequency == 0) wrongResult("HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY is 0");
  Memory mem(out);

  const Kernel spin = rt.kernel("spin", sizeof(hsa_spin_args));
  uint32_t* dmarks = mem.allocate<uint32_t>(rt.devicePool, kSpinGroups);
  uint32_t* marks = mem.allocate<uint32_t>(rt.hostPool, kSpinGroups);
  auto* args = mem.kernarg(rt.kernargPool, spin, hsa_spin_args{kSpinNs, dmarks});
  std::memset(marks, 0, markBytes);
  HSA_CHECK(hsa_memory_copy(dmarks, marks, markBytes));  // device memory starts undefined
  out.copy(markBytes);

  Queue queue(rt, 64);
  HSA_CHECK(hsa_amd_profiling_set_profiler_enabled(queue.handle(), 1));
  HSA_CHECK(hsa_amd_profiling_async_copy_enable(true));
  hsa_signal_t done = createSignal(1);

  const uint32_t grid[3] = {kSpinGroups, 1, 1};
  const uint32_t workgroup[3] = {1, 1, 1};
  for (uint32_t d = 0; d < dispatches; ++d) {
    hsa_signal_store_relaxed(done, 1);
    const hsa_kernel_dispatch_packet_t packet = dispatchPacket(spin, grid, workgroup, args, done);
    const uint64_t before = rt.systemTimestamp();
    queue.submit(packet);
    out.dispatch(spin.name, packet);
    waitComplete(done);
    const uint64_t after = rt.systemTimestamp();

    hsa_amd_profiling_dispatch_time_t time{};
    HSA_CHECK(hsa_amd_profiling_get_dispatch_time(rt.gpu, done, &time));
    checkInterval("dispatch", time.start, time.end, before, after);
    const uint64_t ns = toNs(time.end - time.start, frequency);
    if (ns + kResolutionSlackNs < kSpinGroups * kSpinNs)
      wrongResult("dispatch %u: spin took %llu ns, but its groups spin for %llu ns", d,
                  static_cast<unsigned long long>(ns), static_cast<unsigned long long>(kSpinGroups * kSpinNs));
    out.timestamp(spin.name, ns);
  }

  // The marks back to the host by a profiled asynchronous copy.
  hsa_signal_store_relaxed(done, 1);
  const uint64_t before = rt.systemTimestamp();
  HSA_CHECK(hsa_amd_memory_async_copy(marks, rt.cpu, dmarks, rt.gpu, markBytes, 0, nullptr, done));
  out.copy(markBytes);
  waitComplete(done);
  const uint64_t after = rt.systemTimestamp();
  hsa_amd_profiling_async_copy_time_t copyTime{};
  HSA_CHECK(hsa_amd_profiling_get_async_copy_time(done, &copyTime));
  checkInterval("async copy", copyTime.start, copyTime.end, before, after);

  for (uint32_t g = 0; g < kSpinGroups; ++g) {
    if (marks[g] != dispatches * (g + 1))
      wrongResult("marks[%u] = %u, expected %u", g, marks[g], dispatches * (g + 1));
  }
  Checksum sum;
  sum.add(marks, markBytes);
  out.checksum("marks", sum);

  HSA_CHECK(hsa_amd_profiling_async_copy_enable(false));
  HSA_CHECK(hsa_signal_destroy(done));
  queue.destroy();
  mem.free({dmarks, marks, args});
  rt.close();
  return 0;
}
