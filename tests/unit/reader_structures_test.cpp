// The compact structures the reports read captures into: interned names and
// lists that never move, per-kernel names resolved across chunks, and the
// reports' per-group caches, which must group exactly as the text keys do.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "gtap/readers/kernel_stats.h"
#include "gtap/readers/op_store.h"
#include "gtap/readers/overview.h"
#include "gtap/readers/timeline_builder.h"
#include "profile_capture_builder.h"

namespace gtap::readers {
namespace {

class Files {
 public:
  Files() : dir_(std::filesystem::temp_directory_path() / ("gtap-reader-structures-" + std::to_string(getpid()))) {
    std::filesystem::create_directories(dir_);
  }
  ~Files() { std::filesystem::remove_all(dir_); }
  // Writes the capture and opens it.
  std::unique_ptr<Capture> open(const test::ProfileCaptureBuilder& b) {
    std::string path = (dir_ / ("capture" + std::to_string(next_++) + ".gtap")).string();
    EXPECT_EQ(b.write(path), "");
    return std::make_unique<Capture>(path);
  }

 private:
  std::filesystem::path dir_;
  int next_ = 0;
};

TEST(OpStore, EqualStringsShareOneCopyAndNothingMovesAsItGrows) {
  OpStore store;
  std::string a = "vector_add";
  std::string_view first = store.intern(a);
  a[0] = 'X';  // the store holds its own copy
  EXPECT_EQ(first, "vector_add");
  EXPECT_EQ(store.intern("vector_add").data(), first.data());
  EXPECT_NE(store.intern("vector_ad").data(), first.data());
  auto list = store.allocate<uint32_t>(3);
  list[0] = 7, list[1] = 8, list[2] = 9;
  const uint32_t* where = list.data();
  // Many blocks' worth more, and a value larger than a block.
  for (int i = 0; i < 100000; ++i) store.intern("name " + std::to_string(i));
  auto big = store.allocate<uint64_t>(1 << 18);
  big[(1 << 18) - 1] = 1;
  EXPECT_EQ(first, "vector_add");
  EXPECT_EQ(store.intern("vector_add").data(), first.data());
  EXPECT_EQ(list.data(), where);
  EXPECT_EQ(list[0] + list[1] + list[2], 24u);
  EXPECT_EQ(store.intern("name 99999"), "name 99999");
}

TEST(DeviceWorkLoad, KernelNamesAreRightAcrossChunksAndInterleavedKernels) {
  test::ProfileCaptureBuilder b;
  b.opsPerChunk = 3;
  const char* names[] = {"a", "b", "b", "a", "c", "a", "b", "c", "c", "a"};
  int64_t t = 100;
  for (const char* n : names) {
    b.kernel(n, t, t + 1, t + 2);
    t += 10;
  }
  Files files;
  auto capture = files.open(b);
  DeviceWork work = loadDeviceWork(*capture);
  ASSERT_EQ(work.ops.size(), std::size(names));
  for (size_t i = 0; i < work.ops.size(); ++i) {
    EXPECT_EQ(work.ops[i].name, names[i]) << i;
    EXPECT_EQ(work.ops[i].startNs, 100 + 10 * static_cast<int64_t>(i) + 1) << i;
  }
  // Equal names are one stored string.
  EXPECT_EQ(work.ops[0].name.data(), work.ops[3].name.data());
}

TEST(DeviceWorkLoad, ACopyKeepsItsNamesAfterTheOriginalIsGone) {
  test::ProfileCaptureBuilder b;
  b.kernel("kept_after_copy", 100, 110, 120);
  Files files;
  auto capture = files.open(b);
  auto original = std::make_unique<DeviceWork>(loadDeviceWork(*capture));
  DeviceWork copy = *original;
  original.reset();
  ASSERT_EQ(copy.ops.size(), 1u);
  EXPECT_EQ(copy.ops[0].name, "kept_after_copy");
}

std::map<std::string, uint64_t> countsByKey(const std::vector<KernelRow>& rows) {
  std::map<std::string, uint64_t> out;
  for (const auto& r : rows) out[r.process + "|" + r.level + "|" + r.key] += r.time.count + r.untimed;
  return out;
}

TEST(KernelRows, GroupsMergeAcrossCaptures) {
  test::ProfileCaptureBuilder one, two;
  one.kernel("a", 100, 110, 120);
  one.kernel("b", 130, 140, 150);
  one.kernel("a", 160, 170, 180);
  two.kernel("a", 100, 110, 130);
  two.kernel("b", 140, 150, 160);
  two.kernel("b", 170, 180, 190);
  Files files;
  auto c1 = files.open(one);
  auto c2 = files.open(two);
  std::vector<LoadedCapture> loaded{{c1.get(), loadDeviceWork(*c1)}, {c2.get(), loadDeviceWork(*c2)}};
  // Names interned per capture: the same name at two addresses is one group.
  ASSERT_NE(loaded[0].work.ops[0].name.data(), loaded[1].work.ops[0].name.data());
  EXPECT_EQ(countsByKey(kernelRows(loaded, KernelGrouping::name, false)),
            (std::map<std::string, uint64_t>{{"|device|a", 3}, {"|device|b", 3}}));
  // Both captures' queue 1 has the same name: one row.
  auto byQueue = kernelRows(loaded, KernelGrouping::queue, false);
  ASSERT_EQ(byQueue.size(), 1u);
  EXPECT_EQ(byQueue[0].time.count, 6u);
  auto total = kernelRows(loaded, KernelGrouping::name, false);
  int64_t sum = 0;
  for (const auto& r : total) sum += r.time.total;
  EXPECT_EQ(sum, 10 + 10 + 10 + 20 + 10 + 10);
}

TEST(KernelRows, ShapesAreGroupedApartAndARowShowsItsLastLaunch) {
  test::ProfileCaptureBuilder b;
  b.kernel("k", 100, 110, 120, {4, 1, 1}, {64, 1, 1});
  b.kernel("k", 130, 140, 150, {8, 1, 1}, {64, 1, 1});
  b.kernel("k", 160, 170, 180, {4, 1, 1}, {64, 1, 1});
  b.kernel("k", 190, 200, 210, {2, 2, 1}, {32, 1, 1});
  Files files;
  auto c = files.open(b);
  std::vector<LoadedCapture> loaded{{c.get(), loadDeviceWork(*c)}};
  EXPECT_EQ(countsByKey(kernelRows(loaded, KernelGrouping::shape, false)),
            (std::map<std::string, uint64_t>{{"|device|k 2x2x1 32x1x1", 1},
                                             {"|device|k 4x1x1 64x1x1", 2},
                                             {"|device|k 8x1x1 64x1x1", 1}}));
  auto byName = kernelRows(loaded, KernelGrouping::name, false);
  ASSERT_EQ(byName.size(), 1u);
  EXPECT_EQ(byName[0].groupCount, (std::array<uint32_t, 3>{2, 2, 1}));
  EXPECT_EQ(byName[0].groupSize, (std::array<uint32_t, 3>{32, 1, 1}));
}

TEST(Timeline, EachKernelSliceHasItsOwnShapeWhenShapesAlternate) {
  test::ProfileCaptureBuilder b;
  b.call("zeInit", 10, 20);
  b.kernel("k", 100, 110, 120, {4, 1, 1});
  b.kernel("k", 130, 140, 150, {8, 1, 1});
  b.kernel("k", 160, 170, 180, {4, 1, 1});
  b.kernel("k", 190, 200, 210, {8, 1, 1});
  Files files;
  auto c = files.open(b);
  std::vector<LoadedCapture> loaded{{c.get(), loadDeviceWork(*c)}};
  Timeline t = buildTimeline(loaded);
  std::vector<std::string> groups;
  for (const auto& s : t.slices) {
    if (s.category != "kernel") continue;
    for (const auto& [key, value] : s.args)
      if (key == "groups") groups.emplace_back(value);
  }
  EXPECT_EQ(groups, (std::vector<std::string>{"4,1,1", "8,1,1", "4,1,1", "8,1,1"}));
  // The slices outlive the work they were built from.
  loaded.clear();
  ASSERT_FALSE(t.slices.empty());
  EXPECT_EQ(t.slices.front().name, "zeInit");
}


// A device's busy time (the union of its operations) and its longest idle
// gaps, against a plain reference, when more operations than one block of
// the overview's come in file order that is not start order (several queues
// read in turn), some nested in others; read whole and streamed alike.
TEST(Overview, BusyTimeAndGapsAreRightForOperationsOutOfStartOrder) {
  constexpr int64_t kOps = 150000;
  struct Span {
    int64_t start, end;
    std::string name;
  };
  std::vector<Span> spans;
  for (int64_t i = 0; i < kOps; ++i) {
    int64_t start = 1000 * i + (i % 997 == 0 ? 400 : 0);  // some gaps longer than the rest
    spans.push_back({start, start + 500 + (i % 13), "k" + std::to_string(i % 3)});
    if (i % 10 == 0) spans.push_back({start + 100, start + 200, "inner"});  // inside the one before
  }
  // File order: a fixed permutation, far from start order.
  std::vector<size_t> order(spans.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = (i * 7919) % order.size();
  ASSERT_EQ(std::set<size_t>(order.begin(), order.end()).size(), order.size());
  test::ProfileCaptureBuilder b;
  b.opsPerChunk = 5000;
  for (size_t i : order) b.kernel(spans[i].name, spans[i].start, spans[i].start, spans[i].end);
  // The reference: sorted, then unioned.
  std::vector<Span> sorted = spans;
  std::stable_sort(sorted.begin(), sorted.end(), [](const Span& a, const Span& c) { return a.start < c.start; });
  int64_t busy = 0, cover = INT64_MIN;
  std::vector<std::pair<int64_t, int64_t>> gaps;  // (length, start)
  for (const Span& x : sorted) {
    if (x.start > cover) {
      if (cover != INT64_MIN) gaps.push_back({x.start - cover, cover});
      busy += x.end - x.start;
      cover = x.end;
    } else if (x.end > cover) {
      busy += x.end - cover;
      cover = x.end;
    }
  }
  std::sort(gaps.begin(), gaps.end(), [](const auto& a, const auto& c) { return a.first != c.first ? a.first > c.first : a.second < c.second; });
  Files files;
  auto c = files.open(b);
  LoadedCapture whole{c.get(), loadDeviceWork(*c)};
  DeviceWork work;
  auto streamed = overviewStreamed(*c, work, nullptr, 5);
  for (const ProcessOverview& p : {overviewOf(whole, 5), streamed}) {
    ASSERT_EQ(p.devices.size(), 1u);
    const DeviceOverview& d = p.devices[0];
    EXPECT_EQ(d.busyNs, busy);
    EXPECT_EQ(d.firstNs, sorted.front().start);
    EXPECT_EQ(d.lastNs, cover);
    ASSERT_EQ(d.largestGaps.size(), 5u);
    for (size_t i = 0; i < 5; ++i) {
      EXPECT_EQ(d.largestGaps[i].startNs, gaps[i].second) << "gap " << i;
      EXPECT_EQ(d.largestGaps[i].endNs - d.largestGaps[i].startNs, gaps[i].first) << "gap " << i;
    }
  }
}

}  // namespace
}  // namespace gtap::readers
