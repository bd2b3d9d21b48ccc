// Allocations by kind (count, bytes, peak live bytes) and transfers by
// direction (count, bytes, device time, bandwidth), over one or more captures.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "gtap/readers/kernel_stats.h"

namespace gtap::readers {

struct AllocationRow {
  std::string process;
  std::string kind;
  uint64_t allocations = 0;
  uint64_t frees = 0;
  uint64_t bytes = 0;       // allocated in total
  uint64_t peakBytes = 0;   // most live at once
  uint64_t largest = 0;
  uint64_t liveAtEnd = 0;   // bytes never freed
};

struct TransferRow {
  std::string process;
  std::string kind;         // "copy host-to-device", "fill", ...
  uint64_t count = 0;
  uint64_t bytes = 0;
  int64_t deviceNs = 0;     // timed ones only
  uint64_t timedBytes = 0;
  double bandwidth() const { return deviceNs > 0 ? static_cast<double>(timedBytes) / (static_cast<double>(deviceNs) * 1e-9) : 0; }
};

std::vector<AllocationRow> allocationRows(const std::vector<LoadedCapture>& captures, bool perProcess);
std::vector<TransferRow> transferRows(const std::vector<LoadedCapture>& captures, bool perProcess);

// The transfer rows built as operations come, capture by capture (for
// readers that stream them: streamDeviceWork).
class TransferTable {
 public:
  explicit TransferTable(bool perProcess) : perProcess_(perProcess) {}
  void beginCapture(const Capture& capture);
  void add(const DeviceOp& op);
  std::vector<TransferRow> rows() const;
  // Adds the rows of `other` (built on its own) to these.
  void merge(const TransferTable& other);

 private:
  using Key = std::pair<schema::DeviceOpKind, schema::CopyDirection>;
  bool perProcess_;
  std::string process_;
  std::map<std::pair<std::string, std::string>, TransferRow> rows_;
  // The row of each kind and direction, found by name once per capture.
  std::map<Key, TransferRow*> rowOf_;
  Key lastKey_{};
  TransferRow* last_ = nullptr;
};

}  // namespace gtap::readers
