// The fixed-size record a wrapper keeps for each call in its thread's buffer.
// Everything else (names, encoding, compression) happens later on the writer
// thread.
//
// One record per call: the wrapper reserves it before the real call (begin
// ticks, function) and fills it when the call returns (end ticks, result).
// The writer sees a thread's records only once none of them is open (see
// ThreadState), except at the final drain, where a record still open is a
// call that never returned and is written as a begin alone.
#pragma once

#include <cstdint>

namespace gtap::core {

enum class RecordKind : uint8_t {
  open = 0,      // reserved at the call's start; the call has not returned
  returned = 1,  // end and result are valid
};

struct Record {
  uint64_t begin;     // Clock::now() (TSC or ns) before the real call
  uint64_t end;       // after it returned (RecordKind::returned)
  int32_t result;     // the call's result code
  uint16_t function;  // global function id (functions.h)
  RecordKind kind;
  uint8_t depth;      // calls of this thread open around this one (modulo 256)
};
static_assert(sizeof(Record) == 24);

}  // namespace gtap::core
