// Counting the workgroups of IREE dispatches on a CPU driver's workers, as
// libgtap.so does for each workgroup's start and end: the lock-free table
// (core::WorkInFlight) against what it replaced, one spin lock around a map
// taken twice per workgroup, in the same run. Threads run workgroups of the
// same dispatches at once, as a driver's workers do.
#include <benchmark/benchmark.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

#include "work_in_flight.h"

namespace {

struct Dispatch {
  uint64_t number = 0;
  int64_t startNs = 0;
  uint32_t thread = 0;
};

constexpr uint64_t kWorkgroupsPerThread = 256;

// The baseline: every start and end under one process-wide spin lock.
class SpinLockedMap {
 public:
  using Key = std::array<uint64_t, 3>;
  template <class Describe>
  void begin(const Key& key, Describe&& describe) {
    std::lock_guard<gtap::core::SpinLock> lock(lock_);
    auto [it, added] = running_.try_emplace(key);
    if (added) it->second.total = describe(it->second.info);
  }
  void end(const Key& key, int64_t endNs) {
    std::lock_guard<gtap::core::SpinLock> lock(lock_);
    auto it = running_.find(key);
    if (it == running_.end() || ++it->second.done < it->second.total) return;
    finished_.push_back({it->second.info, endNs});
    running_.erase(it);
  }
  template <class Take>
  void drain(Take&&) {
    std::lock_guard<gtap::core::SpinLock> lock(lock_);
    finished_.clear();
  }

 private:
  struct Entry {
    Dispatch info;
    uint64_t done = 0, total = 0;
  };
  gtap::core::SpinLock lock_;
  std::map<Key, Entry> running_;
  std::vector<std::pair<Dispatch, int64_t>> finished_;
};

template <class Table>
void countWorkgroups(benchmark::State& state) {
  static Table* table;
  if (state.thread_index() == 0) table = new Table();
  uint64_t dispatch = 0;
  uint64_t parts = kWorkgroupsPerThread * static_cast<uint64_t>(state.threads());
  for (auto _ : state) {
    // Each iteration: this thread's share of one dispatch's workgroups.
    ++dispatch;
    std::array<uint64_t, 3> key{0x1000, dispatch % 4, 0x7f0000 + dispatch};
    for (uint64_t w = 0; w < kWorkgroupsPerThread; ++w) {
      table->begin(key, [&](Dispatch& d) {
        d.number = dispatch;
        d.thread = static_cast<uint32_t>(state.thread_index());
        return parts;
      });
      table->end(key, static_cast<int64_t>(w));
    }
    if (state.thread_index() == 0 && dispatch % 64 == 0) table->drain([](const auto&) {});
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(kWorkgroupsPerThread));
  if (state.thread_index() == 0) {
    // Left to the process (a few per run): no wait here for the other threads to be done with it.
    table = nullptr;
  }
}

void BM_WorkgroupsSpinLockedMap(benchmark::State& state) { countWorkgroups<SpinLockedMap>(state); }
void BM_WorkgroupsWorkInFlight(benchmark::State& state) {
  countWorkgroups<gtap::core::WorkInFlight<Dispatch>>(state);
}

BENCHMARK(BM_WorkgroupsSpinLockedMap)->Threads(1)->Threads(2)->UseRealTime();
BENCHMARK(BM_WorkgroupsWorkInFlight)->Threads(1)->Threads(2)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
