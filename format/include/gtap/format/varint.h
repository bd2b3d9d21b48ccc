// The variable-length integers of the varint streams (api_events.h,
// device_ops.h): seven bits a byte, low bits first, the high bit set on every
// byte but the last; signed values zigzag-mapped first.
#pragma once

#include <cstdint>

namespace gtap::format::varint {

inline void put(uint8_t*& out, uint64_t v) {
  while (v >= 0x80) {
    *out++ = static_cast<uint8_t>(v | 0x80);
    v >>= 7;
  }
  *out++ = static_cast<uint8_t>(v);
}

// False when the bytes end before the value does, or it runs past 64 bits;
// `p` never moves past `end`.
inline bool get(const uint8_t*& p, const uint8_t* end, uint64_t& out) {
  if (__builtin_expect(p < end && !(*p & 0x80), 1)) {  // the common one-byte value, without a loop
    out = *p++;
    return true;
  }
  if (__builtin_expect(end - p >= 10, 1)) {  // room for the longest value: no bound checks
    uint64_t value = 0;
#pragma GCC unroll 10
    for (int i = 0; i < 10; ++i) {
      uint8_t b = p[i];
      value |= static_cast<uint64_t>(b & 0x7f) << (7 * i);
      if (!(b & 0x80)) {
        out = value;
        p += i + 1;
        return true;
      }
    }
    out = value;
    p += 10;
    return false;
  }
  out = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (p >= end) return false;
    uint8_t b = *p++;
    out |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) return true;
  }
  return false;
}

inline uint64_t zigzag(int64_t v) { return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63); }
inline int64_t unzigzag(uint64_t v) { return static_cast<int64_t>((v >> 1) ^ (~(v & 1) + 1)); }

}  // namespace gtap::format::varint
