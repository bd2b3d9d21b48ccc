#include "gtap/readers/kernel_stats.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "gtap/readers/parallel.h"
#include "gtap/readers/ranges.h"

namespace gtap::readers {

bool parseKernelGrouping(const std::string& text, KernelGrouping& out) {
  if (text == "name") out = KernelGrouping::name;
  else if (text == "module") out = KernelGrouping::module;
  else if (text == "queue") out = KernelGrouping::queue;
  else if (text == "shape") out = KernelGrouping::shape;
  else if (text == "range") out = KernelGrouping::range;
  else return false;
  return true;
}

namespace {
std::string triple(const std::array<uint32_t, 3>& v) {
  return std::to_string(v[0]) + "x" + std::to_string(v[1]) + "x" + std::to_string(v[2]);
}
}  // namespace

namespace {
// What decides an operation's group, compared without building its text key:
// equal FastKeys always have equal text keys (a view's pointer and size stand
// for its text), though equal text keys may come from different FastKeys.
struct FastKey {
  size_t capture = 0;
  const char* text = nullptr;
  size_t textSize = 0;
  uint64_t queue = 0;
  std::array<uint32_t, 3> groupCount{}, groupSize{}, grid{};
  uint8_t gridSize = 0;
  uint8_t level = 0;
  bool operator==(const FastKey&) const = default;
};
struct FastKeyHash {
  size_t operator()(const FastKey& k) const {
    uint64_t h = k.capture * 0x9e3779b97f4a7c15ull;
    auto mix = [&](uint64_t v) { h = (h ^ v) * 0xff51afd7ed558ccdull; h ^= h >> 32; };
    mix(reinterpret_cast<uintptr_t>(k.text));
    mix(k.textSize);
    mix(k.queue);
    for (int i = 0; i < 3; ++i) mix((uint64_t{k.groupCount[i]} << 32) | k.groupSize[i]);
    for (int i = 0; i < 3; ++i) mix(k.grid[i]);
    mix((uint64_t{k.gridSize} << 8) | k.level);
    return h;
  }
};
}  // namespace

// Per group, as operations come: their durations, counts, and the shape of
// the last one. Capture by capture; tables of several captures merge in
// capture order.
class KernelTable {
 public:
  KernelTable(KernelGrouping by, bool perProcess) : by_(by), perProcess_(perProcess) {}

  void beginCapture(size_t index, const Capture& capture, const DeviceWork& work) {
    capture_ = index;
    work_ = &work;
    process_ = perProcess_ ? capture.label() : std::string();
    queueNames_.clear();
    if (by_ == KernelGrouping::range) {
      rangeLookup_.reset();
      ranges_ = loadRanges(capture);
      rangeLookup_.emplace(ranges_);
      // Said once, though a capture with IREE HAL work begins twice.
      for (std::string& p : ranges_.problems)
        if (std::find(problems_.begin(), problems_.end(), p) == problems_.end()) problems_.push_back(std::move(p));
    }
  }

  // The innermost range open on the launching thread when the launch was
  // appended (submitted, for work never appended apart); null outside any.
  const std::string* rangeOf(const DeviceOp& op) const {
    int64_t at = op.appendNs ? op.appendNs : op.submitNs;
    if (!rangeLookup_ || op.thread == ~0u || !at) return nullptr;
    const NamedRange* r = rangeLookup_->innermostAt(op.thread, at);
    return r ? &ranges_.nameOf(*r) : nullptr;
  }

  void add(const DeviceOp& op) {
    if (op.kind != schema::DeviceOpKind::KERNEL) return;
    // An IREE HAL dispatch as recorded ("hal"), as it ran on a CPU driver
    // ("host"), or as the device ran it ("device").
    uint8_t level = op.recordedBy != schema::Api::IREE_HAL ? 0 : op.operation == "host_execution" ? 1 : 2;
    FastKey fk;
    fk.capture = capture_;
    fk.level = level;
    bool cacheable = true;
    const std::string* range = by_ == KernelGrouping::range ? rangeOf(op) : nullptr;
    switch (by_) {
      case KernelGrouping::name: fk.text = op.name.data(); fk.textSize = op.name.size(); break;
      case KernelGrouping::module: fk.text = op.module.data(); fk.textSize = op.module.size(); break;
      case KernelGrouping::queue: fk.queue = op.queue; break;
      case KernelGrouping::shape:
        fk.text = op.name.data();
        fk.textSize = op.name.size();
        fk.groupCount = op.groupCount;
        fk.groupSize = op.groupSize;
        cacheable = op.gridSize.size() <= 3;
        fk.gridSize = static_cast<uint8_t>(op.gridSize.size());
        for (size_t i = 0; i < op.gridSize.size() && i < 3; ++i) fk.grid[i] = op.gridSize[i];
        break;
      case KernelGrouping::range:
        fk.text = range ? range->data() : kNoRange.data();
        fk.textSize = range ? range->size() : kNoRange.size();
        break;
    }
    Acc* accp = nullptr;
    // Launches of one kernel come in runs: the last group first.
    if (cacheable && lastAcc_ && fk == lastKey_) accp = lastAcc_;
    else if (cacheable)
      if (auto f = fast_.find(fk); f != fast_.end()) accp = f->second;
    if (!accp) {
      std::string key;
      switch (by_) {
        case KernelGrouping::name: key = op.name; break;
        case KernelGrouping::module: key = op.module.empty() ? "(unknown module)" : std::string(op.module); break;
        case KernelGrouping::queue: {
          auto [q, added] = queueNames_.try_emplace(op.queue);
          if (added) q->second = work_->queueName(op.queue);
          key = q->second;
          break;
        }
        case KernelGrouping::shape:
          key = std::string(op.name) + " " + triple(op.groupCount) + " " + triple(op.groupSize);
          for (uint32_t g : op.gridSize) key += " " + std::to_string(g);
          break;
        case KernelGrouping::range: key = range ? *range : std::string(kNoRange); break;
      }
      Acc& acc = groups_[{process_, kLevels[level], key}];
      if (acc.row.key.empty() && !key.empty()) acc.row.key = key;
      acc.row.level = kLevels[level];
      acc.row.process = process_;
      accp = &acc;
      if (cacheable) fast_.emplace(fk, accp);
    }
    if (cacheable) {
      lastKey_ = fk;
      lastAcc_ = accp;
    }
    Acc& acc = *accp;
    // The views point into the work's store, which outlives the table's use.
    acc.last = {op.name, op.groupCount, op.groupSize, op.gridSize};
    acc.lastSet = true;
    acc.row.joined += level == 2 ? op.deviceDispatches : op.hal != nullptr;
    if (op.timed) {
      acc.durations.push_back(op.durationNs());
      all_ += op.durationNs();
    } else {
      ++acc.row.untimed;
    }
  }

  // Takes `later`'s groups in: its operations came after this table's. The
  // merged groups own their last launch's name and shape, so `later`'s
  // capture and work need not outlive this table.
  void merge(KernelTable&& later) {
    for (auto& [key, acc] : later.groups_) {
      auto [it, added] = groups_.try_emplace(key);
      Acc& mine = it->second;
      acc.keepLast();
      if (added) {
        mine = std::move(acc);
        continue;
      }
      mine.durations.insert(mine.durations.end(), acc.durations.begin(), acc.durations.end());
      mine.row.untimed += acc.row.untimed;
      mine.row.joined += acc.row.joined;
      mine.kept = std::move(acc.kept);  // a group exists once an operation came
    }
    all_ += later.all_;
    later.groups_.clear();
    later.fast_.clear();
    later.lastAcc_ = nullptr;
    fast_.clear();  // its entries name this table's groups by capture; later captures add new ones
    lastAcc_ = nullptr;
  }

  std::vector<std::string> takeProblems() { return std::exchange(problems_, {}); }

  std::vector<KernelRow> rows() {
    std::vector<KernelRow> rows;
    rows.reserve(groups_.size());
    for (auto& [key, acc] : groups_) {
      acc.row.key = std::get<2>(key);
      acc.keepLast();
      acc.row.name = acc.kept->name;
      acc.row.groupCount = acc.kept->groupCount;
      acc.row.groupSize = acc.kept->groupSize;
      acc.row.gridSize = acc.kept->gridSize;
      acc.row.time = distributionOf(acc.durations);
      acc.row.share = all_ ? static_cast<double>(acc.row.time.total) / static_cast<double>(all_) : 0;
      rows.push_back(std::move(acc.row));
    }
    std::sort(rows.begin(), rows.end(), [](const KernelRow& a, const KernelRow& b) {
      return a.time.total != b.time.total ? a.time.total > b.time.total : a.key < b.key;
    });
    return rows;
  }

 private:
  struct Last {
    std::string_view name;
    std::array<uint32_t, 3> groupCount{}, groupSize{};
    std::span<const uint32_t> gridSize;
  };
  struct Kept {
    std::string name;
    std::array<uint32_t, 3> groupCount{}, groupSize{};
    std::vector<uint32_t> gridSize;
  };
  struct Acc {
    KernelRow row;
    std::vector<int64_t> durations;
    // The row shows the last launch's shape: `last` points into the work of
    // the capture being read; `kept` is a copy, made when the capture's part
    // is merged (or the rows made), and holds when `last` was not set since.
    Last last;
    bool lastSet = false;
    std::optional<Kept> kept;
    void keepLast() {
      if (!lastSet) return;
      kept = Kept{std::string(last.name), last.groupCount, last.groupSize,
                  std::vector<uint32_t>(last.gridSize.begin(), last.gridSize.end())};
      lastSet = false;
    }
  };
  static inline const std::string kLevels[] = {"device", "host", "hal"};
  static constexpr std::string_view kNoRange = "(no range)";
  KernelGrouping by_;
  bool perProcess_;
  size_t capture_ = 0;
  const DeviceWork* work_ = nullptr;
  std::string process_;
  std::unordered_map<uint64_t, std::string> queueNames_;
  ProgramRanges ranges_;                   // by range: the capture's
  std::optional<RangeLookup> rangeLookup_;  // over ranges_
  std::vector<std::string> problems_;       // what reading the ranges found wrong
  std::map<std::tuple<std::string, std::string, std::string>, Acc> groups_;
  std::unordered_map<FastKey, Acc*, FastKeyHash> fast_;
  FastKey lastKey_;
  Acc* lastAcc_ = nullptr;  // the group of lastKey_, while fast_ holds it
  int64_t all_ = 0;
};

KernelRowsBuilder::KernelRowsBuilder(KernelGrouping by, bool perProcess)
    : table_(std::make_unique<KernelTable>(by, perProcess)) {}
KernelRowsBuilder::~KernelRowsBuilder() = default;
KernelRowsBuilder::KernelRowsBuilder(KernelRowsBuilder&&) noexcept = default;
KernelRowsBuilder& KernelRowsBuilder::operator=(KernelRowsBuilder&&) noexcept = default;
void KernelRowsBuilder::beginCapture(size_t index, const Capture& capture, const DeviceWork& work) {
  table_->beginCapture(index, capture, work);
}
void KernelRowsBuilder::add(const DeviceOp& op) { table_->add(op); }
void KernelRowsBuilder::merge(KernelRowsBuilder&& later) { table_->merge(std::move(*later.table_)); }
std::vector<KernelRow> KernelRowsBuilder::rows() { return table_->rows(); }
std::vector<std::string> KernelRowsBuilder::takeProblems() { return table_->takeProblems(); }

std::vector<KernelRow> kernelRows(std::span<const LoadedCapture> captures, KernelGrouping by, bool perProcess) {
  KernelTable table(by, perProcess);
  for (size_t ci = 0; ci < captures.size(); ++ci) {
    table.beginCapture(ci, *captures[ci].capture, captures[ci].work);
    for (const DeviceOp& op : captures[ci].work.ops) table.add(op);
  }
  return table.rows();
}

KernelRowsBuilder kernelRowsOf(const Capture& capture, KernelGrouping by, bool perProcess,
                               std::vector<std::string>& notes) {
  KernelRowsBuilder mine(by, perProcess);
  DeviceWork work;
  mine.beginCapture(0, capture, work);
  // IREE HAL command-buffer work means dispatches to join: the join is made
  // (the first such operation comes early, a submission often only at the
  // end) and the operations are read again, joined.
  streamDeviceWorkJoined(
      capture, work,
      [&](std::span<const DeviceOp> ops) {
        for (const DeviceOp& op : ops) mine.add(op);
      },
      [&] {
        mine = KernelRowsBuilder(by, perProcess);
        mine.beginCapture(0, capture, work);
      });
  notes.insert(notes.end(), work.notes.begin(), work.notes.end());
  std::vector<std::string> rangeProblems = mine.takeProblems();
  notes.insert(notes.end(), rangeProblems.begin(), rangeProblems.end());
  // Its groups own what they show of the work, which ends here.
  KernelRowsBuilder owned(by, perProcess);
  owned.merge(std::move(mine));
  return owned;
}

std::vector<KernelRow> kernelRowsStreamed(std::span<const Capture* const> captures, KernelGrouping by, bool perProcess,
                                          std::vector<std::string>& notes, std::span<const DeviceWork* const> loaded) {
  // Each capture's table on its own (gtap -j: several at once), merged in the
  // order given: the same rows whatever the number of threads. A merged
  // group owns its name and shape, so no capture's work outlives its part.
  std::vector<std::optional<KernelRowsBuilder>> parts(captures.size());
  std::vector<std::vector<std::string>> partNotes(captures.size());
  KernelRowsBuilder table(by, perProcess);
  PartNotes joined(notes);
  forEachInParallel(captures.size(), [&](size_t ci) {
    if (ci < loaded.size() && loaded[ci]) {
      KernelRowsBuilder mine(by, perProcess);
      mine.beginCapture(ci, *captures[ci], *loaded[ci]);
      for (const DeviceOp& op : loaded[ci]->ops) mine.add(op);
      parts[ci].emplace(std::move(mine));
      return;
    }
    parts[ci].emplace(kernelRowsOf(*captures[ci], by, perProcess, partNotes[ci]));
  }, [&](size_t ci) {
    joined.add(std::move(partNotes[ci]));
    table.merge(std::move(*parts[ci]));
    parts[ci].reset();
    captures[ci]->reader().releasePages();
  });
  return table.rows();
}

std::vector<KernelRow> kernelRowsWithin(LoadedCapture capture,
                                        const std::vector<std::pair<int64_t, int64_t>>& windows) {
  std::vector<DeviceOp> inside;
  for (const auto& op : capture.work.ops) {
    int64_t t = op.submitNs ? op.submitNs : op.appendNs;
    if (std::any_of(windows.begin(), windows.end(), [&](const auto& w) { return t >= w.first && t <= w.second; }))
      inside.push_back(op);
  }
  capture.work.ops = std::move(inside);
  return kernelRows(std::span<const LoadedCapture>(&capture, 1), KernelGrouping::name, false);
}

}  // namespace gtap::readers
