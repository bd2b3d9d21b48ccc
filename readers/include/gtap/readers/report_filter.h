// What a report or export keeps of its captures (--kernel, --from, --to,
// --pid, --rank): set on a Capture (Capture::setFilter), it applies wherever
// the capture's calls and device operations are read (forEachCallBatch,
// streamDeviceOps and the readers built on them), so every report sees the
// same narrowed capture.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gtap/readers/capture.h"
#include "gtap/readers/device_work.h"

namespace gtap::readers {

struct ReportFilter {
  // fnmatch glob on kernel names: only the kernel executions (and IREE HAL
  // dispatches) whose names match are kept, and of the API calls only those
  // that appended or submitted one (zeCommandListAppendLaunchKernel,
  // hsa_queue_store_write_index..., the HAL's dispatch). Empty: everything.
  std::string kernel;
  // Offsets into the run (from the capture's start, each capture its own),
  // ns: what starts in [from, to] is kept: calls by their begin, device
  // operations by their device start (their submission when untimed),
  // allocations and frees, named ranges and device-metric samples by their
  // time.
  std::optional<int64_t> fromNs, toNs;
  // Only the captures of these processes / ranks (empty: all).
  std::vector<uint32_t> pids;
  std::vector<int32_t> ranks;

  bool narrowsRecords() const { return !kernel.empty() || fromNs || toNs; }
  bool keepsProcess(const ProcessInfo& process) const;
  bool inWindow(const Capture& capture, int64_t hostNs) const;
  bool keepsOp(const Capture& capture, const DeviceOp& op) const;
  bool keepsMemory(const Capture& capture, const MemoryOp& op) const;
  // The window only: the kernel glob's calls are the capture's to find
  // (Capture::forEachCallBatch).
  bool keepsCallTime(const Capture& capture, const ApiCall& call) const;
};

// The calls (thread, per-thread event index) that appended or submitted the
// device operations `capture`'s filter keeps.
std::vector<std::pair<uint32_t, uint64_t>> callsOfKeptOps(const Capture& capture);

// Drops from `work` (loaded whole) the operations and memory operations the
// capture's filter does not keep; IREE HAL join indices into it no longer
// hold afterwards, so only reports that read names and times use it.
void narrowDeviceWork(const Capture& capture, DeviceWork& work);

}  // namespace gtap::readers
