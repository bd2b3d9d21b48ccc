#include "gtap/readers/kernel_stats.h"

#include <algorithm>
#include <map>
#include <tuple>

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

std::vector<KernelRow> kernelRows(const std::vector<LoadedCapture>& captures, KernelGrouping by, bool perProcess) {
  struct Acc {
    KernelRow row;
    std::vector<int64_t> durations;
  };
  std::map<std::tuple<std::string, std::string, std::string>, Acc> groups;
  int64_t all = 0;
  for (const auto& lc : captures) {
    std::string process = perProcess ? lc.capture->label() : std::string();
    for (const DeviceOp& op : lc.work.ops) {
      if (op.kind != schema::DeviceOpKind::KERNEL) continue;
      std::string key;
      switch (by) {
        case KernelGrouping::name: key = op.name; break;
        case KernelGrouping::module: key = op.module.empty() ? "(unknown module)" : op.module; break;
        case KernelGrouping::queue: key = lc.work.queueName(op.queue); break;
        case KernelGrouping::shape:
          key = op.name + " " + triple(op.groupCount) + " " + triple(op.groupSize);
          for (uint32_t g : op.gridSize) key += " " + std::to_string(g);
          break;
      }
      // An IREE HAL dispatch as recorded ("hal"), as it ran on a CPU driver
      // ("host"), or as the device ran it ("device").
      std::string level = op.recordedBy != schema::Api::IREE_HAL ? "device"
                          : op.operation == "host_execution"    ? "host"
                                                                : "hal";
      Acc& acc = groups[{process, level, key}];
      acc.row.key = key;
      acc.row.level = level;
      acc.row.process = process;
      acc.row.name = op.name;
      acc.row.groupCount = op.groupCount;
      acc.row.groupSize = op.groupSize;
      acc.row.gridSize = op.gridSize;
      acc.row.joined += level == "hal" ? op.deviceDispatches : op.halDispatch != DeviceOp::kNone;
      if (op.timed) {
        acc.durations.push_back(op.durationNs());
        all += op.durationNs();
      } else {
        ++acc.row.untimed;
      }
    }
  }
  std::vector<KernelRow> rows;
  for (auto& [key, acc] : groups) {
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
  return kernelRows({capture}, KernelGrouping::name, false);
}

}  // namespace gtap::readers
