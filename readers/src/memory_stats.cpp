#include "gtap/readers/memory_stats.h"

#include <algorithm>
#include <map>

namespace gtap::readers {

namespace {
// The kinds a report names apart: memoryKindName's, every other value "unknown".
size_t kindSlot(schema::MemoryKind k) {
  switch (k) {
    case schema::MemoryKind::HOST: return 1;
    case schema::MemoryKind::DEVICE: return 2;
    case schema::MemoryKind::SHARED: return 3;
    case schema::MemoryKind::LOCKED: return 4;
    default: return 0;
  }
}
constexpr schema::MemoryKind kSlotKinds[] = {schema::MemoryKind::UNKNOWN, schema::MemoryKind::HOST,
                                             schema::MemoryKind::DEVICE, schema::MemoryKind::SHARED,
                                             schema::MemoryKind::LOCKED};
}  // namespace

std::vector<AllocationRow> allocationRows(const std::vector<LoadedCapture>& captures, bool perProcess) {
  std::map<std::pair<std::string, std::string>, AllocationRow> rows;
  for (const auto& lc : captures) {
    std::string process = perProcess ? lc.capture->label() : std::string();
    // Live bytes per kind through time, in the order the calls happened
    // (recorded in that order already, as a rule: sorted only when not).
    const std::vector<MemoryOp>* ordered = &lc.work.memory;
    std::vector<MemoryOp> sorted;
    auto earlier = [](const MemoryOp& a, const MemoryOp& b) { return a.hostNs < b.hostNs; };
    if (!std::is_sorted(ordered->begin(), ordered->end(), earlier)) {
      sorted = *ordered;
      std::stable_sort(sorted.begin(), sorted.end(), earlier);
      ordered = &sorted;
    }
    // This capture's figures per kind, added to the rows at its end.
    struct Figures {
      bool seen = false;
      uint64_t allocations = 0, frees = 0, bytes = 0, largest = 0, peak = 0, live = 0;
    };
    Figures figures[5];
    for (const MemoryOp& m : *ordered) {
      Figures& f = figures[kindSlot(m.kind)];
      f.seen = true;
      if (m.isFree) {
        ++f.frees;
        f.live -= std::min(f.live, m.size);
      } else {
        ++f.allocations;
        f.bytes += m.size;
        f.largest = std::max(f.largest, m.size);
        f.live += m.size;
        f.peak = std::max(f.peak, f.live);
      }
    }
    for (size_t k = 0; k < 5; ++k) {
      const Figures& f = figures[k];
      if (!f.seen) continue;
      std::string kind = memoryKindName(kSlotKinds[k]);
      AllocationRow& r = rows[{process, kind}];
      r.process = process;
      r.kind = kind;
      r.allocations += f.allocations;
      r.frees += f.frees;
      r.bytes += f.bytes;
      r.largest = std::max(r.largest, f.largest);
      // Peaks add up across processes only per process; merged rows keep the
      // largest single-process peak plus the others' (an upper bound).
      r.peakBytes = std::max(r.peakBytes, f.peak);
      r.liveAtEnd += f.live;
    }
  }
  std::vector<AllocationRow> out;
  for (auto& [k, r] : rows) out.push_back(r);
  return out;
}

void TransferTable::beginCapture(const Capture& capture) {
  process_ = perProcess_ ? capture.label() : std::string();
  rowOf_.clear();
  last_ = nullptr;
}

void TransferTable::add(const DeviceOp& op) {
  if (op.kind != schema::DeviceOpKind::COPY && op.kind != schema::DeviceOpKind::FILL) return;
  Key key{op.kind, op.kind == schema::DeviceOpKind::FILL ? schema::CopyDirection::UNKNOWN : op.direction};
  if (!last_ || key != lastKey_) {
    auto [it, added] = rowOf_.try_emplace(key, nullptr);
    if (added) {
      std::string kind = op.kind == schema::DeviceOpKind::FILL ? "fill" : "copy " + directionName(op.direction);
      TransferRow& r = rows_[{process_, kind}];
      r.process = process_;
      r.kind = kind;
      it->second = &r;
    }
    last_ = it->second;
    lastKey_ = key;
  }
  TransferRow& r = *last_;
  ++r.count;
  r.bytes += op.bytes;
  if (op.timed) {
    r.deviceNs += op.durationNs();
    r.timedBytes += op.bytes;
  }
}

void TransferTable::merge(const TransferTable& other) {
  for (const auto& [key, theirs] : other.rows_) {
    TransferRow& r = rows_[key];
    r.process = theirs.process;
    r.kind = theirs.kind;
    r.count += theirs.count;
    r.bytes += theirs.bytes;
    r.deviceNs += theirs.deviceNs;
    r.timedBytes += theirs.timedBytes;
  }
}

std::vector<TransferRow> TransferTable::rows() const {
  std::vector<TransferRow> out;
  for (const auto& [k, r] : rows_) out.push_back(r);
  std::sort(out.begin(), out.end(), [](const TransferRow& a, const TransferRow& b) { return a.bytes > b.bytes; });
  return out;
}

std::vector<TransferRow> transferRows(const std::vector<LoadedCapture>& captures, bool perProcess) {
  TransferTable table(perProcess);
  for (const auto& lc : captures) {
    table.beginCapture(*lc.capture);
    for (const DeviceOp& op : lc.work.ops) table.add(op);
  }
  return table.rows();
}

}  // namespace gtap::readers
