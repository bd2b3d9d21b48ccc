// What a wrapper does around the real call: a begin record before it, an end
// record with the result after it, and the front end's guard bit set in
// between so the runtime's own nested calls are neither recorded nor treated
// as the program's (e.g. the Level Zero loader calling its own exported table
// getters while it initialises).
#pragma once

#include "clock.h"
#include "session.h"

namespace gtap::core {

class CallScope {
 public:
  CallScope(uint8_t guardBit, uint16_t function)
      : saved_(t_guard), guard_(guardBit), function_(function) {
    thread_ = (saved_ & (guardBit | kGuardGtap)) ? nullptr : enterCall(guardBit);
    if (thread_) thread_->append({nowTicks(), 0, function, RecordKind::callBegin, 0});
    t_guard = static_cast<uint8_t>(saved_ | guardBit);
  }
  void end(int32_t result) {
    t_guard = saved_;
    if (thread_) thread_->append({nowTicks(), result, function_, RecordKind::callEnd, 0});
  }
  bool recording() const { return thread_ != nullptr; }
  // True when this call was made by the runtime (or gtap) from inside another
  // intercepted call, not by the program.
  bool nested() const { return (saved_ & (guard_ | kGuardGtap)) != 0; }

 private:
  ThreadState* thread_;
  uint8_t saved_;
  uint8_t guard_;
  uint16_t function_;
};

}  // namespace gtap::core
