// The queues of a capture seen one at a time, as iree-profile's queue
// projection shows them: each submission in order with its host submit time,
// the semaphores it waited for and signalled (where the runtime's records hold
// them), the device span of its work and the idle gap before it. `gtap queue`
// prints them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gtap/readers/capture.h"
#include "gtap/readers/device_work.h"

namespace gtap::readers {

// One submission to a queue: a Level Zero execute of command lists (every
// operation it ran), one append to an immediate list, one HSA packet, or one
// IREE HAL queue operation (queue_execute, queue_alloca, ...).
struct QueueSubmission {
  int64_t submitNs = 0;  // host clock
  uint32_t thread = ~0u;
  std::string what;                 // "execute", "launch", "queue_execute", ...
  std::vector<uint64_t> lists;      // the command lists or command buffer it submitted
  std::vector<std::string> names;   // what ran, in order: kernel names, copy, fill, barrier
  uint32_t operations = 0;          // device operations it ran (a queue_execute: the dispatches joined to it)
  uint32_t timed = 0;
  bool hasSpan = false;             // startNs / endNs valid: at least one timed operation
  int64_t startNs = 0, endNs = 0;   // first start to last end of its work, host clock
  bool hasGap = false;              // gapNs valid: a submission before it had a span
  int64_t gapNs = 0;                // its start minus the latest end before it (negative: overlap)
  std::vector<format::OpSemaphore> waits, signals;
};

struct QueueView {
  const Capture* capture = nullptr;
  uint64_t id = 0;  // gtap's object id, unique in its process
  std::string name;
  std::string kind;  // "ze queue", "ze immediate list", "hsa queue", "hal queue"
  std::vector<QueueSubmission> submissions;
  int64_t busyNs = 0;   // union of the submissions' spans
  int64_t spanNs = 0;   // first start to last end
  int64_t gapNs = 0;    // sum of the positive gaps
  double busyShare() const { return spanNs > 0 ? double(busyNs) / double(spanNs) : 0; }
};

// Every queue of `work` (loaded whole from `capture`, so IREE HAL submissions
// are joined to the device work they became) that work was submitted to, by
// id. Operations on no queue (synchronous copies, host-side IREE HAL calls)
// and the IREE HAL records of commands recorded into command buffers (`gtap
// command` shows those) belong to none.
std::vector<QueueView> queueViews(const Capture& capture, const DeviceWork& work);

}  // namespace gtap::readers
