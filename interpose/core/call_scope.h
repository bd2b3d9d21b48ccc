// What a wrapper does around the real call: a begin record before it, an end
// record with the result after it, and the front end's guard bit set in
// between so the runtime's own nested calls are not recorded.
#pragma once

#include "clock.h"
#include "session.h"

namespace gtap::core {

class CallScope {
 public:
  CallScope(uint8_t guardBit, uint16_t function) : guard_(guardBit), function_(function) {
    thread_ = enterCall(guardBit);
    if (thread_) {
      thread_->append({nowTicks(), 0, function, RecordKind::callBegin, 0});
      t_guard |= guardBit;
    }
  }
  void end(int32_t result) {
    if (!thread_) return;
    t_guard &= static_cast<uint8_t>(~guard_);
    thread_->append({nowTicks(), result, function_, RecordKind::callEnd, 0});
  }
  bool recording() const { return thread_ != nullptr; }

 private:
  ThreadState* thread_;
  uint8_t guard_;
  uint16_t function_;
};

}  // namespace gtap::core
