// The event stream inside an ApiEvents chunk (see capture.capnp): varints, so
// a call costs a few bytes before compression and encoding costs a few
// instructions per event.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace gtap::format {

enum class ApiEventKind : uint8_t { callBegin = 0, callEnd = 1 };

struct ApiEvent {
  ApiEventKind kind;
  uint32_t function;
  int64_t timeNs;  // absolute, after decoding
  int64_t result;  // callEnd only
};

// Encodes into a caller-provided buffer with room for kMaxEventBytes per event.
class ApiEventEncoder {
 public:
  static constexpr size_t kMaxEventBytes = 30;  // three varints of at most 10 bytes

  ApiEventEncoder(uint8_t* out, int64_t baseNs) : begin_(out), out_(out), lastNs_(baseNs) {}
  // `timeNs` must not be earlier than the previous event's.
  void add(ApiEventKind kind, uint32_t function, int64_t timeNs, int64_t result) {
    putVarint((static_cast<uint64_t>(function) << 1) | static_cast<uint64_t>(kind));
    putVarint(static_cast<uint64_t>(timeNs - lastNs_));
    lastNs_ = timeNs;
    if (kind == ApiEventKind::callEnd)
      putVarint((static_cast<uint64_t>(result) << 1) ^ static_cast<uint64_t>(result >> 63));
    ++count_;
  }
  size_t size() const { return static_cast<size_t>(out_ - begin_); }
  const uint8_t* data() const { return begin_; }
  uint32_t count() const { return count_; }
  int64_t lastNs() const { return lastNs_; }

 private:
  void putVarint(uint64_t v) {
    while (v >= 0x80) {
      *out_++ = static_cast<uint8_t>(v | 0x80);
      v >>= 7;
    }
    *out_++ = static_cast<uint8_t>(v);
  }
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
  size_t pos = 0;
  auto getVarint = [&](uint64_t& out) {
    out = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos >= size) return false;
      uint8_t b = data[pos++];
      out |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return true;
    }
    return false;
  };
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
      e.result = static_cast<int64_t>((result >> 1) ^ (~(result & 1) + 1));
    }
    visit(e);
  }
  if (pos != size)
    return std::to_string(size - pos) + " bytes left after " + std::to_string(count) + " events";
  return {};
}

}  // namespace gtap::format
