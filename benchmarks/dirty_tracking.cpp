// Finding which 4 KiB pages of host memory changed since the last look, as
// replay capture must at every submission for each host and shared
// allocation (the program writes them without telling anyone):
//
//   BM_HashPages    XXH3-64 of every page against the hashes kept from the
//                   last look (8 bytes kept per page)
//   BM_ShadowCopy   memcmp of every page against a shadow copy, and memcpy of
//                   the changed pages into it (a second copy of everything)
//
// Arguments: buffer size in MiB, and the share of pages changed before each
// look in thousandths. The changes are made outside the timed region: the
// last 8 bytes of each changed page, so memcmp scans the whole page before
// it finds the difference (its worst case; a change at a page's start would
// let it stop early). Bytes processed are the buffer's bytes; the
// `overhead` counter is the memory kept between looks.
#include <benchmark/benchmark.h>
#include <xxhash.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

namespace {

constexpr size_t kPage = 4096;

struct FreeDeleter {
  void operator()(uint8_t* p) const { std::free(p); }
};
using Bytes = std::unique_ptr<uint8_t[], FreeDeleter>;

// Page-aligned, written once so no page fault lands in a timed region.
Bytes pageAlignedBuffer(size_t bytes) {
  Bytes buffer(static_cast<uint8_t*>(std::aligned_alloc(kPage, bytes)));
  if (!buffer) std::abort();
  for (size_t i = 0; i < bytes; ++i) buffer[i] = uint8_t(i * 131 + (i >> 12));
  return buffer;
}

// Changes `perMille` thousandths of the pages (evenly spread, starting at a
// page that moves with `generation`) and returns how many it changed.
size_t changePages(uint8_t* buffer, size_t pages, int64_t perMille, uint64_t generation) {
  if (perMille == 0) return 0;
  const size_t stride = size_t(1000 / perMille);
  size_t changed = 0;
  for (size_t page = generation % stride; page < pages; page += stride) {
    std::memcpy(buffer + (page + 1) * kPage - sizeof generation, &generation, sizeof generation);
    ++changed;
  }
  return changed;
}

// Per iteration: change pages (untimed), then time `look`, which appends the
// index of each page it finds changed and updates what it keeps.
template <class Look>
void runLooks(benchmark::State& state, uint8_t* buffer, size_t pages, size_t overheadBytes, Look look) {
  const int64_t perMille = state.range(1);
  std::vector<uint32_t> changedPages;
  changedPages.reserve(pages);
  uint64_t generation = 0;
  size_t expected = 0;
  for (auto _ : state) {
    expected = changePages(buffer, pages, perMille, ++generation);
    changedPages.clear();
    auto start = std::chrono::steady_clock::now();
    look(changedPages);
    auto end = std::chrono::steady_clock::now();
    state.SetIterationTime(std::chrono::duration<double>(end - start).count());
    benchmark::DoNotOptimize(changedPages.data());
    if (changedPages.size() != expected) {
      state.SkipWithError("found a different number of changed pages than were changed");
      break;
    }
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(pages * kPage));
  state.counters["changed_pages"] = double(expected);
  state.counters["overhead"] = benchmark::Counter(double(overheadBytes), benchmark::Counter::kDefaults,
                                                  benchmark::Counter::OneK::kIs1024);
  state.counters["overhead_pct"] = 100.0 * double(overheadBytes) / double(pages * kPage);
}

void BM_HashPages(benchmark::State& state) {
  const size_t bytes = size_t(state.range(0)) << 20;
  const size_t pages = bytes / kPage;
  Bytes buffer = pageAlignedBuffer(bytes);
  std::vector<uint64_t> hashes(pages);
  for (size_t i = 0; i < pages; ++i) hashes[i] = XXH3_64bits(buffer.get() + i * kPage, kPage);
  runLooks(state, buffer.get(), pages, pages * sizeof(uint64_t), [&](std::vector<uint32_t>& changed) {
    const uint8_t* base = buffer.get();
    for (size_t i = 0; i < pages; ++i) {
      uint64_t h = XXH3_64bits(base + i * kPage, kPage);
      if (h != hashes[i]) {
        hashes[i] = h;
        changed.push_back(uint32_t(i));
      }
    }
  });
}

void BM_ShadowCopy(benchmark::State& state) {
  const size_t bytes = size_t(state.range(0)) << 20;
  const size_t pages = bytes / kPage;
  Bytes buffer = pageAlignedBuffer(bytes);
  Bytes shadow = pageAlignedBuffer(bytes);
  std::memcpy(shadow.get(), buffer.get(), bytes);
  runLooks(state, buffer.get(), pages, bytes, [&](std::vector<uint32_t>& changed) {
    const uint8_t* base = buffer.get();
    uint8_t* copy = shadow.get();
    for (size_t i = 0; i < pages; ++i) {
      if (std::memcmp(base + i * kPage, copy + i * kPage, kPage) != 0) {
        std::memcpy(copy + i * kPage, base + i * kPage, kPage);
        changed.push_back(uint32_t(i));
      }
    }
  });
}

void sizesAndShares(benchmark::internal::Benchmark* b) {
  b->ArgNames({"MiB", "permille"})->ArgsProduct({{1, 16, 256}, {0, 10, 1000}})->UseManualTime();
}

}  // namespace

BENCHMARK(BM_HashPages)->Apply(sizesAndShares);
BENCHMARK(BM_ShadowCopy)->Apply(sizesAndShares);

BENCHMARK_MAIN();
