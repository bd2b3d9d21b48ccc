// The event stream inside an ApiEvents chunk (see capture.capnp): varints, so
// a call costs a few bytes before compression and encoding costs a few
// instructions per event. Two layouts: begin/end events (formats 1.0-1.2,
// ApiEventEncoder, decodeApiEvents) and one event per call (1.3 on, chunks
// with callEvents set: CallEventEncoder, decodeCallEvents).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "gtap/format/varint.h"

namespace gtap::format {

enum class ApiEventKind : uint8_t { callBegin = 0, callEnd = 1, call = 2 };

struct ApiEvent {
  ApiEventKind kind;
  uint32_t function;
  int64_t timeNs;  // absolute, after decoding; a call's begin
  int64_t result;  // callEnd and call only
  int64_t endNs = 0;    // call only
  uint32_t depth = 0;   // call and its callBegin (1.3 layout) only: calls open around it
};

// Encodes into a caller-provided buffer with room for kMaxEventBytes per event.
class ApiEventEncoder {
 public:
  static constexpr size_t kMaxEventBytes = 30;  // three varints of at most 10 bytes

  ApiEventEncoder(uint8_t* out, int64_t baseNs) : begin_(out), out_(out), lastNs_(baseNs) {}
  // `timeNs` must not be earlier than the previous event's.
  void add(ApiEventKind kind, uint32_t function, int64_t timeNs, int64_t result) {
    varint::put(out_, (static_cast<uint64_t>(function) << 1) | static_cast<uint64_t>(kind));
    varint::put(out_, static_cast<uint64_t>(timeNs - lastNs_));
    lastNs_ = timeNs;
    if (kind == ApiEventKind::callEnd) varint::put(out_, varint::zigzag(result));
    ++count_;
  }
  size_t size() const { return static_cast<size_t>(out_ - begin_); }
  const uint8_t* data() const { return begin_; }
  uint32_t count() const { return count_; }
  int64_t lastNs() const { return lastNs_; }

 private:
  uint8_t* begin_;
  uint8_t* out_;
  uint32_t count_ = 0;
  int64_t lastNs_;
};

// Decodes `count` events; calls visit(const ApiEvent&) for each. Returns an
// empty string on success, else what was wrong and at which event.
template <typename Visit>
std::string decodeApiEvents(const uint8_t* data, size_t size, uint32_t count, int64_t baseNs,
                            Visit&& visit) {
  const uint8_t* p = data;
  const uint8_t* const end = data + size;
  auto getVarint = [&](uint64_t& out) { return varint::get(p, end, out); };
  int64_t t = baseNs;
  for (uint32_t i = 0; i < count; ++i) {
    uint64_t head, delta, result = 0;
    if (!getVarint(head) || !getVarint(delta))
      return "event " + std::to_string(i) + " of " + std::to_string(count) + " is cut short";
    if (delta > (uint64_t{1} << 62)) return "event " + std::to_string(i) + " has an impossible time delta";
    ApiEvent e;
    e.kind = static_cast<ApiEventKind>(head & 1);
    e.function = static_cast<uint32_t>(head >> 1);
    t += static_cast<int64_t>(delta);
    e.timeNs = t;
    e.result = 0;
    if (e.kind == ApiEventKind::callEnd) {
      if (!getVarint(result)) return "event " + std::to_string(i) + " is cut short";
      e.result = varint::unzigzag(result);
    }
    visit(e);
  }
  if (p != end)
    return std::to_string(end - p) + " bytes left after " + std::to_string(count) + " events";
  return {};
}

// The 1.3 layout, one event per call, stored as four columns so the
// compressor meets long runs (the same function heads, small durations)
// instead of one short match per call:
//   varint size of column 1, varint size of column 2, varint size of column 3
//   column 1, per event: varint (function << 3 | flags)
//     flags: kCallReturned: the call returned (else it had not when the file
//            was closed: a begin alone); kCallResult: a result follows
//            (else it is 0, as most are); kCallDepth: a depth follows (else 0)
//   column 2, per event: varint begin time delta in ns from the previous
//     event's begin (>= 0)
//   column 3, per returned event: varint duration in ns
//   column 4 (the rest), per event in order: kCallDepth: varint depth (calls
//     of the thread open around this one); kCallResult: zigzag varint result
// Events are in the order the calls began.
inline constexpr uint32_t kCallReturned = 1, kCallResult = 2, kCallDepth = 4;

class CallEventEncoder {
 public:
  static constexpr size_t kMaxEventBytes = 50;  // five varints of at most 10 bytes

  // Room for `capacity` events in each column.
  CallEventEncoder(size_t capacity, int64_t baseNs) : lastNs_(baseNs) {
    for (auto& c : columns_) c.reset(new uint8_t[capacity * (&c == &columns_[3] ? 20 : 10)]);
    for (int i = 0; i < 4; ++i) out_[i] = columns_[i].get();
  }
  // `beginNs` must not be earlier than the previous event's; `durationNs` >= 0.
  void addCall(uint32_t function, int64_t beginNs, int64_t durationNs, int64_t result, uint32_t depth) {
    if (__builtin_expect((result | depth) == 0, 1)) {
      put(out_[0], (static_cast<uint64_t>(function) << 3) | kCallReturned);
    } else {
      put(out_[0], (static_cast<uint64_t>(function) << 3) | kCallReturned | (result != 0 ? kCallResult : 0) |
                       (depth != 0 ? kCallDepth : 0));
      if (depth != 0) put(out_[3], depth);
      if (result != 0) put(out_[3], varint::zigzag(result));
    }
    put(out_[1], static_cast<uint64_t>(beginNs - lastNs_));
    lastNs_ = beginNs;
    put(out_[2], static_cast<uint64_t>(durationNs));
    ++count_;
  }
  // A call that had not returned when the file was closed.
  void addBegin(uint32_t function, int64_t beginNs, uint32_t depth) {
    put(out_[0], (static_cast<uint64_t>(function) << 3) | (depth != 0 ? kCallDepth : 0));
    if (depth != 0) put(out_[3], depth);
    put(out_[1], static_cast<uint64_t>(beginNs - lastNs_));
    lastNs_ = beginNs;
    ++count_;
  }
  // Bytes of the encoded stream.
  size_t size() const {
    size_t n = 0;
    for (int i = 0; i < 4; ++i) n += used(i) + (i < 3 ? varintSize(used(i)) : 0);
    return n;
  }
  // Writes the stream (size() bytes) to `out`.
  void write(uint8_t* out) const {
    for (int i = 0; i < 3; ++i) put(out, used(i));
    for (int i = 0; i < 4; ++i) {
      std::memcpy(out, columns_[i].get(), used(i));
      out += used(i);
    }
  }
  uint32_t count() const { return count_; }
  int64_t lastNs() const { return lastNs_; }

 private:
  size_t used(int i) const { return static_cast<size_t>(out_[i] - columns_[i].get()); }
  static size_t varintSize(uint64_t v) {
    size_t n = 1;
    while (v >= 0x80) v >>= 7, ++n;
    return n;
  }
  static void put(uint8_t*& out, uint64_t v) { varint::put(out, v); }
  std::unique_ptr<uint8_t[]> columns_[4];
  uint8_t* out_[4];
  uint32_t count_ = 0;
  int64_t lastNs_;
};

// Decodes `count` events of the 1.3 layout as decodeApiEvents does: kind
// call for a call that returned, callBegin for one that had not.
template <typename Visit>
std::string decodeCallEvents(const uint8_t* data, size_t size, uint32_t count, int64_t baseNs, Visit&& visit) {
  const uint8_t* const end = data + size;
  auto get = [](const uint8_t*& p, const uint8_t* limit, uint64_t& out) { return varint::get(p, limit, out); };
  const uint8_t* p = data;
  uint64_t sizes[3];
  for (auto& n : sizes)
    if (!get(p, end, n)) return "the column sizes are cut short";
  const uint8_t* col[4];
  const uint8_t* colEnd[4];
  for (int i = 0; i < 3; ++i) {
    if (sizes[i] > static_cast<uint64_t>(end - p))
      return "column " + std::to_string(i + 1) + " (" + std::to_string(sizes[i]) + " bytes) runs past the " +
             std::to_string(size) + " encoded bytes";
    col[i] = p;
    p += sizes[i];
    colEnd[i] = p;
  }
  col[3] = p;
  colEnd[3] = end;
  auto cut = [&](uint32_t i) { return "event " + std::to_string(i) + " of " + std::to_string(count) + " is cut short"; };
  constexpr uint64_t kMaxSpan = uint64_t{1} << 62;
  int64_t t = baseNs;
  ApiEvent e;
  for (uint32_t i = 0; i < count; ++i) {
    uint64_t head, delta;
    if (!get(col[0], colEnd[0], head) || !get(col[1], colEnd[1], delta)) return cut(i);
    if (delta > kMaxSpan) return "event " + std::to_string(i) + " has an impossible time delta";
    t += static_cast<int64_t>(delta);
    e.function = static_cast<uint32_t>(head >> 3);
    e.timeNs = t;
    e.endNs = 0;
    e.result = 0;
    e.depth = 0;
    if (__builtin_expect(head & kCallReturned, 1)) {
      uint64_t duration;
      if (!get(col[2], colEnd[2], duration)) return cut(i);
      if (duration > kMaxSpan) return "event " + std::to_string(i) + " has an impossible duration";
      e.kind = ApiEventKind::call;
      e.endNs = t + static_cast<int64_t>(duration);
    } else {
      e.kind = ApiEventKind::callBegin;
    }
    if (__builtin_expect(head & (kCallDepth | kCallResult), 0)) {
      if (head & kCallDepth) {
        uint64_t depth;
        if (!get(col[3], colEnd[3], depth)) return cut(i);
        if (depth > 0xffffffffu) return "event " + std::to_string(i) + " has an impossible depth";
        e.depth = static_cast<uint32_t>(depth);
      }
      if (head & kCallResult) {
        uint64_t result;
        if (!get(col[3], colEnd[3], result)) return cut(i);
        e.result = varint::unzigzag(result);
      }
    }
    visit(e);
  }
  for (int i = 0; i < 4; ++i)
    if (col[i] != colEnd[i])
      return std::to_string(colEnd[i] - col[i]) + " bytes left in column " + std::to_string(i + 1) + " after " +
             std::to_string(count) + " events";
  return {};
}

}  // namespace gtap::format
