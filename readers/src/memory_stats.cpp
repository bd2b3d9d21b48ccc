#include "gtap/readers/memory_stats.h"

#include <algorithm>
#include <map>

namespace gtap::readers {

std::vector<AllocationRow> allocationRows(const std::vector<LoadedCapture>& captures, bool perProcess) {
  std::map<std::pair<std::string, std::string>, AllocationRow> rows;
  for (const auto& lc : captures) {
    std::string process = perProcess ? lc.capture->label() : std::string();
    // Live bytes per kind through time, in the order the calls happened.
    std::vector<MemoryOp> ops = lc.work.memory;
    std::stable_sort(ops.begin(), ops.end(), [](const MemoryOp& a, const MemoryOp& b) { return a.hostNs < b.hostNs; });
    std::map<std::string, uint64_t> live;
    for (const MemoryOp& m : ops) {
      std::string kind = memoryKindName(m.kind);
      AllocationRow& r = rows[{process, kind}];
      r.process = process;
      r.kind = kind;
      uint64_t& l = live[kind];
      if (m.isFree) {
        ++r.frees;
        l -= std::min(l, m.size);
      } else {
        ++r.allocations;
        r.bytes += m.size;
        r.largest = std::max(r.largest, m.size);
        l += m.size;
        // Peaks add up across processes only per process; merged rows keep the
        // largest single-process peak plus the others' (an upper bound).
        r.peakBytes = std::max(r.peakBytes, l);
      }
    }
    for (auto& [kind, l] : live) rows[{process, kind}].liveAtEnd += l;
  }
  std::vector<AllocationRow> out;
  for (auto& [k, r] : rows) out.push_back(r);
  return out;
}

std::vector<TransferRow> transferRows(const std::vector<LoadedCapture>& captures, bool perProcess) {
  std::map<std::pair<std::string, std::string>, TransferRow> rows;
  for (const auto& lc : captures) {
    std::string process = perProcess ? lc.capture->label() : std::string();
    for (const DeviceOp& op : lc.work.ops) {
      if (op.kind != schema::DeviceOpKind::COPY && op.kind != schema::DeviceOpKind::FILL) continue;
      std::string kind = op.kind == schema::DeviceOpKind::FILL ? "fill" : "copy " + directionName(op.direction);
      TransferRow& r = rows[{process, kind}];
      r.process = process;
      r.kind = kind;
      ++r.count;
      r.bytes += op.bytes;
      if (op.timed) {
        r.deviceNs += op.durationNs();
        r.timedBytes += op.bytes;
      }
    }
  }
  std::vector<TransferRow> out;
  for (auto& [k, r] : rows) out.push_back(r);
  std::sort(out.begin(), out.end(), [](const TransferRow& a, const TransferRow& b) { return a.bytes > b.bytes; });
  return out;
}

}  // namespace gtap::readers
