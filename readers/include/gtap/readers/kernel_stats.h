// Device time per kernel (or per module, queue, or launch shape), over one or
// more captures.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "gtap/readers/device_work.h"
#include "gtap/readers/stats.h"

namespace gtap::readers {

// range: the innermost named range (gtap_range_push) open on the thread that
// launched it, when it appended the launch; "(no range)" outside any.
enum class KernelGrouping { name, module, queue, shape, range };
bool parseKernelGrouping(const std::string& text, KernelGrouping& out);

struct KernelRow {
  std::string key;        // kernel name, module, queue, "name groups size", or range name
  std::string process;    // set when grouping per process
  std::string name;       // kernel name (shape grouping)
  std::string level;      // "hal": dispatches an IREE command buffer recorded; "device": device work
  std::array<uint32_t, 3> groupCount{};
  std::array<uint32_t, 3> groupSize{};
  std::vector<uint32_t> gridSize;  // HSA: work-items per dimension
  Distribution time;      // timed executions
  uint64_t untimed = 0;   // executions without device times
  // IREE HAL and device dispatches joined (joinHalDispatches): on a "hal" row,
  // the device dispatches its dispatches became; on a "device" row, those of
  // its dispatches a HAL dispatch made.
  uint64_t joined = 0;
  double share = 0;       // of all kernels' device time
};

struct LoadedCapture {
  const Capture* capture;
  DeviceWork work;
};

std::vector<KernelRow> kernelRows(std::span<const LoadedCapture> captures, KernelGrouping by, bool perProcess);

// The rows kernelRows gives, built as the operations come: for a reader that
// builds other things in the same pass over them (gtap summary, explain).
// Captures begin in order; the operations' views must outlive rows().
class KernelTable;
class KernelRowsBuilder {
 public:
  KernelRowsBuilder(KernelGrouping by, bool perProcess);
  ~KernelRowsBuilder();
  KernelRowsBuilder(KernelRowsBuilder&&) noexcept;
  KernelRowsBuilder& operator=(KernelRowsBuilder&&) noexcept;
  void beginCapture(size_t index, const Capture& capture, const DeviceWork& work);
  void add(const DeviceOp& op);
  // Takes `later`'s groups in: its captures came after this one's.
  void merge(KernelRowsBuilder&& later);
  std::vector<KernelRow> rows();
  // What reading the captures' ranges found wrong (by range), once each.
  std::vector<std::string> takeProblems();

 private:
  std::unique_ptr<KernelTable> table_;
};

// The same rows read a chunk of device operations at a time
// (streamDeviceWork), without holding every operation: a capture with IREE
// HAL command-buffer work (joinsHal) is joined (joinHalStreamed) and read
// again. What reading found wrong is added to `notes`. A
// capture whose work is `loaded` already (same index, not null) is taken
// from there.
// One capture's groups, read as kernelRowsStreamed reads it, to merge in order
// into another builder; they hold nothing of the capture.
KernelRowsBuilder kernelRowsOf(const Capture& capture, KernelGrouping by, bool perProcess,
                               std::vector<std::string>& notes);
std::vector<KernelRow> kernelRowsStreamed(std::span<const Capture* const> captures, KernelGrouping by, bool perProcess,
                                          std::vector<std::string>& notes,
                                          std::span<const DeviceWork* const> loaded = {});

// Per kernel name, the launches of `capture` submitted (appended, when never
// submitted) within one of `windows` (host ns, both ends included): the work
// of timed stretches, as `gtap bench` times them.
std::vector<KernelRow> kernelRowsWithin(LoadedCapture capture,
                                        const std::vector<std::pair<int64_t, int64_t>>& windows);

}  // namespace gtap::readers
