// Every allocation and free of a capture in the order they happened, each
// with the API call that made it (the innermost call recorded on its thread
// around its time, when mode api was recorded) and its stack; and the live
// set at a moment. `gtap memory --events` and `gtap export --format=jsonl`
// read them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gtap/readers/capture.h"
#include "gtap/readers/device_work.h"

namespace gtap::readers {

struct MemoryEvent {
  MemoryOp op;
  std::string function;      // the API call that made it; empty when none was recorded
  int64_t callBeginNs = 0;   // when that call began
  uint64_t callIndex = ~uint64_t{0};  // its per-thread event index (ApiCall::beginIndex)
};

// The memory operations of `work` (loaded from `capture`), by host time
// (equal times in recorded order), joined to the calls.
std::vector<MemoryEvent> memoryEvents(const Capture& capture, const DeviceWork& work);

// The allocations live at `atNs` (host clock): made at or before it and not
// freed at or before it, by address; an address allocated again after a free
// is the new allocation.
std::vector<MemoryEvent> liveAt(const std::vector<MemoryEvent>& events, int64_t atNs);

}  // namespace gtap::readers
