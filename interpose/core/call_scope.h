// What a wrapper does around the real call: it reserves the call's record
// before it (begin ticks), fills the record with the end ticks and the result
// after it, and sets the front end's guard bit in between so the runtime's own
// nested calls are neither recorded nor treated as the program's (e.g. the
// Level Zero loader calling its own exported table getters while it
// initialises).
//
// Everything here is inline: the common case (a thread already registered
// with the running session) is a few loads and compares, two time-stamp reads
// and a handful of stores, with no call out of line.
#pragma once

#include "clock.h"
#include "internal_error.h"
#include "phases.h"
#include "session.h"

#pragma GCC visibility push(hidden)
namespace gtap::core {

class CallScope {
 public:
  __attribute__((always_inline)) CallScope(uint8_t guardBit, uint16_t function)
      : saved_(t_guard), guard_(guardBit), function_(function) {
    if (__builtin_expect(!(saved_ & (guardBit | kGuardGtap)), 1)) {
      thread_ = enterUnguarded();
      if (thread_ && g_recordApi && !phases::paused()) {
        record_ = thread_->openCall(function, nowTicks(), beginIndex_);
      }
    }
    t_guard = static_cast<uint8_t>(saved_ | guardBit);
  }
  __attribute__((always_inline)) void end(int32_t result) {
    t_guard = saved_;
    if (record_) thread_->closeCall(record_, nowTicks(), result);
  }
  // The calling thread's state when this call is the program's and a session
  // records; its id and the index of this call's record link other records
  // (device work, allocations) to the call.
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
  ThreadState* thread_ = nullptr;
  Record* record_ = nullptr;
  uint64_t beginIndex_ = ~uint64_t{0};
  uint8_t saved_;
  uint8_t guard_;
  uint16_t function_;
};

}  // namespace gtap::core
#pragma GCC visibility pop
