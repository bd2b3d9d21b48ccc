// Recording phases: gtap_start / gtap_stop, GTAP_START_PAUSED and
// GTAP_TOGGLE_SIGNAL pause and resume the profile records (API calls, device
// operations, memory events). Each change is one time stamp in a fixed table,
// so a signal handler may make it. Program threads ask paused() before
// opening an API call record; the writer drops device operations submitted,
// and memory events made, while paused (droppedAt), so work submitted while
// recording is written whenever it completes. The replay stream is not
// paused (README and docs/interception.md, "Recording phases").
#pragma once

#include <atomic>
#include <cstdint>

namespace gtap::core::phases {

inline constexpr uint32_t kMaxChanges = 4096;  // later changes are ignored (said in the log)

// Number of changes so far; odd: paused.
extern std::atomic<uint32_t> g_changes;

inline bool paused() { return g_changes.load(std::memory_order_relaxed) & 1; }

// Pause or resume now (no-op when already so). Async-signal-safe.
void setPaused(bool pause);

// Whether a record stamped at `ticks` (Clock::nowTicks) fell in a paused
// time. 0 ticks (not known) is never dropped.
bool droppedAt(uint64_t ticks);

}  // namespace gtap::core::phases
