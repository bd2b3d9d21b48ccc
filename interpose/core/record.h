// The fixed-size record a wrapper appends to its thread's buffer. Everything
// else (names, encoding, compression) happens later on the writer thread.
#pragma once

#include <cstdint>

namespace gtap::core {

enum class RecordKind : uint8_t {
  callBegin = 0,  // same ordinals as schema EventKind
  callEnd = 1,
};

struct Record {
  uint64_t ticks;     // Clock::now() (TSC or ns); converted to host ns by the writer
  int32_t value;      // callEnd: result code
  uint16_t function;  // global function id (functions.h)
  RecordKind kind;
  uint8_t flags;
};
static_assert(sizeof(Record) == 16);

}  // namespace gtap::core
