// Device-work records (HSA packets, IREE HAL operations, Level Zero launches
// with stacks) in the thread's buffer of the device-work channel
// (thread_records.h), so that recording one on the program's thread takes no
// lock and allocates nothing: a compact record (OpRecord's fixed fields, its
// variable parts after them) that the writer thread encodes from where it
// lies into the file's device-ops chunk at each flush.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "profile_records.h"

namespace gtap::core::devicework {

// OpRecord's fixed fields; the counts say how many of each part follow the
// header in the buffer, in this order: stack frames (uint64_t), bindings,
// waits, signals (OpRecord::SemaphoreValue), counter values (uint64_t),
// argument bytes, note bytes, counter raw bytes.
struct Header {
  uint32_t size = 0;  // the header and its parts, rounded up to a multiple of 8 (set by begin)
  uint32_t argumentBytes = 0;
  uint32_t bindingCount = 0, waitCount = 0, signalCount = 0;
  uint16_t stackCount = 0, noteBytes = 0;
  uint32_t counterSet = 0;  // OpRecord::counterSet
  uint32_t counterCount = 0, counterRawBytes = 0;
  uint8_t gridDims = 0;  // HSA dispatches: how many of grid[] are the packet's
  bool timed = false;
  schema::DeviceOpKind kind = schema::DeviceOpKind::KERNEL;
  schema::CopyDirection direction = schema::CopyDirection::UNKNOWN;
  schema::Api recordedBy = schema::Api::UNKNOWN;
  uint16_t packetHeader = 0;
  uint32_t device = profile::kNoDevice;
  uint32_t thread = ~0u, submitThread = ~0u;
  std::array<uint32_t, 3> groupCount{}, groupSize{}, grid{};
  uint64_t queue = 0, list = 0, kernel = 0, bytes = 0;
  uint64_t appendIndex = ~uint64_t{0};
  uint64_t appendTicks = 0, submitTicks = 0;
  uint64_t start = 0, end = 0;
  uint64_t queueIndex = 0;
  int64_t completedNs = 0;
  const char* fixedNote = nullptr;  // string literals
  const char* operation = nullptr;

  uint64_t* stack() { return reinterpret_cast<uint64_t*>(this + 1); }
  profile::OpRecord::Binding* bindings() {
    return reinterpret_cast<profile::OpRecord::Binding*>(stack() + stackCount);
  }
  profile::OpRecord::SemaphoreValue* waits() {
    return reinterpret_cast<profile::OpRecord::SemaphoreValue*>(bindings() + bindingCount);
  }
  profile::OpRecord::SemaphoreValue* signals() { return waits() + waitCount; }
  uint64_t* counterValues() { return reinterpret_cast<uint64_t*>(signals() + signalCount); }
  uint8_t* arguments() { return reinterpret_cast<uint8_t*>(counterValues() + counterCount); }
  char* note() { return reinterpret_cast<char*>(arguments() + argumentBytes); }
  uint8_t* counterRaw() { return reinterpret_cast<uint8_t*>(note() + noteBytes); }
};
static_assert(sizeof(Header) % 8 == 0);

// Space for a record with these many parts in the calling thread's buffer,
// its counts set and the rest default; the caller fills it in and calls
// commit. Null when no buffer can be had (recording stopped).
Header* begin(uint32_t stackCount, uint32_t bindingCount, uint32_t waitCount, uint32_t signalCount,
              uint32_t argumentBytes, uint32_t noteBytes, uint32_t counterCount = 0, uint32_t counterRawBytes = 0);
// Publishes the record begin returned (the last one on this thread).
void commit(Header* record);
// For a record whose call has not returned yet (other records may come on
// the thread before it does): holds its place, and the writer reads no
// further on this thread until settle() says whether it stands.
void commitPending(Header* record);
void settle(Header* record, bool keep);

}  // namespace gtap::core::devicework
