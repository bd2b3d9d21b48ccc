// What a wrapper does around the real call: a begin record before it, an end
// record with the result after it, and the front end's guard bit set in
// between so the runtime's own nested calls are neither recorded nor treated
// as the program's (e.g. the Level Zero loader calling its own exported table
// getters while it initialises).
#pragma once

#include "clock.h"
#include "internal_error.h"
#include "session.h"

namespace gtap::core {

class CallScope {
 public:
  CallScope(uint8_t guardBit, uint16_t function)
      : saved_(t_guard), guard_(guardBit), function_(function) {
    thread_ = (saved_ & (guardBit | kGuardGtap)) ? nullptr : enterCall(guardBit);
    if (thread_) {
      beginIndex_ = g_recordApi ? thread_->produced : ~uint64_t{0};
      if (g_recordApi) thread_->append({nowTicks(), 0, function, RecordKind::callBegin, 0});
    }
    t_guard = static_cast<uint8_t>(saved_ | guardBit);
  }
  void end(int32_t result) {
    t_guard = saved_;
    if (thread_ && g_recordApi) thread_->append({nowTicks(), result, function_, RecordKind::callEnd, 0});
  }
  // The calling thread's state when this call is the program's and a session
  // records; its id and the index of this call's begin record link other
  // records (device work, allocations) to the call.
  ThreadState* thread() const { return thread_; }
  uint64_t beginIndex() const { return beginIndex_; }
  uint16_t function() const { return function_; }
  // True when this call was made by the runtime (or gtap) from inside another
  // intercepted call, not by the program; and for every call once recording
  // stopped after an internal error, so hooks leave it to the runtime alone.
  bool nested() const {
    return (saved_ & (guard_ | kGuardGtap)) != 0 || (!thread_ && stoppedAfterInternalError());
  }

 private:
  ThreadState* thread_;
  uint64_t beginIndex_ = ~uint64_t{0};
  uint8_t saved_;
  uint8_t guard_;
  uint16_t function_;
};

}  // namespace gtap::core
