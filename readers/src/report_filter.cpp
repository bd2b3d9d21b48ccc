#include "gtap/readers/report_filter.h"

#include <fnmatch.h>

#include <algorithm>

namespace gtap::readers {

bool ReportFilter::keepsProcess(const ProcessInfo& process) const {
  if (!pids.empty() && std::find(pids.begin(), pids.end(), process.pid) == pids.end()) return false;
  if (!ranks.empty() && std::find(ranks.begin(), ranks.end(), process.rank) == ranks.end()) return false;
  return true;
}

bool ReportFilter::inWindow(const Capture& capture, int64_t hostNs) const {
  int64_t offset = hostNs - capture.process().startHostNs;
  return (!fromNs || offset >= *fromNs) && (!toNs || offset <= *toNs);
}

bool ReportFilter::keepsOp(const Capture& capture, const DeviceOp& op) const {
  if (!kernel.empty()) {
    if (op.kind != schema::DeviceOpKind::KERNEL) return false;
    std::string name(op.name);
    if (fnmatch(kernel.c_str(), name.c_str(), 0) != 0) return false;
  }
  if (!fromNs && !toNs) return true;
  int64_t at = op.timed ? op.startNs : op.submitNs ? op.submitNs : op.appendNs;
  return inWindow(capture, at);
}

bool ReportFilter::keepsMemory(const Capture& capture, const MemoryOp& op) const {
  return inWindow(capture, op.hostNs);
}

bool ReportFilter::keepsCallTime(const Capture& capture, const ApiCall& call) const {
  return inWindow(capture, call.beginNs);
}

std::vector<std::pair<uint32_t, uint64_t>> callsOfKeptOps(const Capture& capture) {
  std::vector<std::pair<uint32_t, uint64_t>> calls;
  DeviceWork work;
  streamDeviceWork(capture, work, false, [&](std::span<const DeviceOp> ops) {
    for (const DeviceOp& op : ops)
      if (op.appendIndex != ~uint64_t{0}) calls.emplace_back(op.thread, op.appendIndex);
    return true;
  });
  std::sort(calls.begin(), calls.end());
  calls.erase(std::unique(calls.begin(), calls.end()), calls.end());
  return calls;
}

void narrowDeviceWork(const Capture& capture, DeviceWork& work) {
  const ReportFilter* filter = capture.filter();
  if (!filter || !filter->narrowsRecords()) return;
  std::erase_if(work.ops, [&](const DeviceOp& op) { return !filter->keepsOp(capture, op); });
  std::erase_if(work.memory, [&](const MemoryOp& m) { return !filter->keepsMemory(capture, m); });
}

}  // namespace gtap::readers
