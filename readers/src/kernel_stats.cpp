#include "gtap/readers/kernel_stats.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

namespace gtap::readers {

bool parseKernelGrouping(const std::string& text, KernelGrouping& out) {
  if (text == "name") out = KernelGrouping::name;
  else if (text == "module") out = KernelGrouping::module;
  else if (text == "queue") out = KernelGrouping::queue;
  else if (text == "shape") out = KernelGrouping::shape;
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

std::vector<KernelRow> kernelRows(std::span<const LoadedCapture> captures, KernelGrouping by, bool perProcess) {
  struct Acc {
    KernelRow row;
    std::vector<int64_t> durations;
    const DeviceOp* last = nullptr;  // the row shows the last launch's shape
  };
  static const std::string kLevels[] = {"device", "host", "hal"};
  std::map<std::tuple<std::string, std::string, std::string>, Acc> groups;
  std::unordered_map<FastKey, Acc*, FastKeyHash> fast;
  int64_t all = 0;
  for (size_t ci = 0; ci < captures.size(); ++ci) {
    const auto& lc = captures[ci];
    std::string process = perProcess ? lc.capture->label() : std::string();
    std::unordered_map<uint64_t, std::string> queueNames;
    for (const DeviceOp& op : lc.work.ops) {
      if (op.kind != schema::DeviceOpKind::KERNEL) continue;
      // An IREE HAL dispatch as recorded ("hal"), as it ran on a CPU driver
      // ("host"), or as the device ran it ("device").
      uint8_t level = op.recordedBy != schema::Api::IREE_HAL ? 0 : op.operation == "host_execution" ? 1 : 2;
      FastKey fk;
      fk.capture = ci;
      fk.level = level;
      bool cacheable = true;
      switch (by) {
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
      }
      Acc* accp = nullptr;
      if (cacheable)
        if (auto f = fast.find(fk); f != fast.end()) accp = f->second;
      if (!accp) {
        std::string key;
        switch (by) {
          case KernelGrouping::name: key = op.name; break;
          case KernelGrouping::module: key = op.module.empty() ? "(unknown module)" : std::string(op.module); break;
          case KernelGrouping::queue: {
            auto [q, added] = queueNames.try_emplace(op.queue);
            if (added) q->second = lc.work.queueName(op.queue);
            key = q->second;
            break;
          }
          case KernelGrouping::shape:
            key = std::string(op.name) + " " + triple(op.groupCount) + " " + triple(op.groupSize);
            for (uint32_t g : op.gridSize) key += " " + std::to_string(g);
            break;
        }
        Acc& acc = groups[{process, kLevels[level], key}];
        if (acc.row.key.empty() && !key.empty()) acc.row.key = key;
        acc.row.level = kLevels[level];
        acc.row.process = process;
        accp = &acc;
        if (cacheable) fast.emplace(fk, accp);
      }
      Acc& acc = *accp;
      acc.last = &op;
      acc.row.joined += level == 2 ? op.deviceDispatches : op.halDispatch != DeviceOp::kNone;
      if (op.timed) {
        acc.durations.push_back(op.durationNs());
        all += op.durationNs();
      } else {
        ++acc.row.untimed;
      }
    }
  }
  std::vector<KernelRow> rows;
  rows.reserve(groups.size());
  for (auto& [key, acc] : groups) {
    acc.row.key = std::get<2>(key);
    acc.row.name = acc.last->name;
    acc.row.groupCount = acc.last->groupCount;
    acc.row.groupSize = acc.last->groupSize;
    acc.row.gridSize.assign(acc.last->gridSize.begin(), acc.last->gridSize.end());
    acc.row.time = distributionOf(acc.durations);
    acc.row.share = all ? static_cast<double>(acc.row.time.total) / static_cast<double>(all) : 0;
    rows.push_back(std::move(acc.row));
  }
  std::sort(rows.begin(), rows.end(), [](const KernelRow& a, const KernelRow& b) {
    return a.time.total != b.time.total ? a.time.total > b.time.total : a.key < b.key;
  });
  return rows;
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
