// Whole-run figures for summary and explain: span of the run, API calls,
// device busy time (union of device operation intervals), idle gaps, and
// what the device work was.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "gtap/readers/kernel_stats.h"

namespace gtap::readers {

struct Gap {
  int64_t startNs = 0;
  int64_t endNs = 0;
  std::string before;  // the operation that ended at startNs
  std::string after;   // the operation that started at endNs
  std::vector<std::pair<std::string, int64_t>> hostCalls;  // API time of the process during the gap, by function
};

struct DeviceOverview {
  uint32_t device = 0;
  std::string name;
  int64_t firstNs = 0, lastNs = 0;  // first start, last end of timed operations
  int64_t busyNs = 0;               // union of operation intervals
  uint64_t kernels = 0, copies = 0, fills = 0, barriers = 0, untimed = 0;
  uint64_t copyBytes = 0;
  std::vector<Gap> largestGaps;     // longest idle stretches, longest first
};

struct ProcessOverview {
  std::string label;
  std::string executable;
  int64_t startNs = 0, endNs = 0;   // first and last record of any kind
  uint64_t apiCalls = 0, unfinishedCalls = 0, failedCalls = 0;
  int64_t apiNs = 0;                // time in outermost API calls, all threads
  size_t threads = 0;
  std::vector<DeviceOverview> devices;
  // IREE HAL dispatches recorded into command buffers: a level above the
  // device work (no device times), counted apart from the devices.
  uint64_t halDispatches = 0;
  size_t halExecutables = 0;
  uint64_t halFills = 0, halFillBytes = 0, halCopies = 0, halCopyBytes = 0;  // queue and command-buffer transfers
  uint64_t halSubmissions = 0;  // queue_execute
  uint64_t halWaits = 0;        // semaphore_wait, wait_semaphores
  // Images whose IREE waits on semaphore lists through
  // iree_async_semaphore_multi_wait, which gtap does not see (halWaits leaves them out).
  std::vector<std::string> halUnrecordedWaits;
  uint64_t allocations = 0, allocatedBytes = 0;
  std::vector<std::string> untimedReasons;  // distinct notes of untimed operations
  bool closedCleanly = true;
  std::string recovery;
  uint64_t eventsDropped = 0;
};

// The images the HAL front end said wait on semaphore lists through
// iree_async_semaphore_multi_wait, which calls no vtable slot: those waits
// are missing from the capture.
std::vector<std::string> halUnrecordedWaits(const DeviceWork& work);
// What `gtap summary` and `gtap info` say of them; `recorded`: the waits that
// went through a semaphore's or a device's wait slot (UINT64_MAX: not said).
std::string halUnrecordedWaitsText(const std::vector<std::string>& images, uint64_t recorded);

// `gapCount` longest gaps per device are kept.
ProcessOverview overviewOf(const LoadedCapture& capture, size_t gapCount);
// The same, reading the device operations a batch at a time
// (streamDeviceWork) into `work`, which then holds all but the operations
// (each timed operation is kept as its start, end and name for the busy time
// and the gaps). `also`, when set, sees each operation too (what else a
// reader builds in the same pass). When the capture has IREE HAL
// command-buffer work (joinsHal), the join is made (joinHalStreamed) and the
// operations are read again, joined: `restart` is called first, and what
// `also` built from the part it saw must be dropped then.
ProcessOverview overviewStreamed(const Capture& capture, DeviceWork& work,
                                 const std::function<void(const DeviceOp&)>& also = {}, size_t gapCount = 0,
                                 const std::function<void()>& restart = {});

}  // namespace gtap::readers
