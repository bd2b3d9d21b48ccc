// Well-formed UTF-8. Names and arguments come from the traced program (kernel
// names, paths) and may hold any bytes, but JSON parsers and protobuf string
// fields expect UTF-8; both exporters replace what is not with U+FFFD.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace gtap::readers {

// Length (1 to 4) of the well-formed sequence that starts `s`, or 0 when the
// bytes there are not one: a stray continuation byte, an overlong form, a
// surrogate, a code point above U+10FFFF, or a sequence cut short.
inline size_t utf8SequenceLength(std::string_view s) {
  if (s.empty()) return 0;
  auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char lead = byte(0);
  if (lead < 0x80) return 1;
  size_t length = 0;
  unsigned char secondMin = 0x80, secondMax = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) secondMin = 0xA0;  // overlong
    if (lead == 0xED) secondMax = 0x9F;  // surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) secondMin = 0x90;  // overlong
    if (lead == 0xF4) secondMax = 0x8F;  // above U+10FFFF
  } else {
    return 0;
  }
  if (s.size() < length) return 0;
  if (byte(1) < secondMin || byte(1) > secondMax) return 0;
  for (size_t i = 2; i < length; ++i) {
    if (byte(i) < 0x80 || byte(i) > 0xBF) return 0;
  }
  return length;
}

inline constexpr std::string_view kReplacementCharacter = "\xEF\xBF\xBD";  // U+FFFD

// `s` with each byte that does not start a well-formed sequence replaced by
// U+FFFD; valid text comes back unchanged.
inline std::string validUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    const size_t n = utf8SequenceLength(s.substr(i));
    if (n == 0) {
      out += kReplacementCharacter;
      ++i;
    } else {
      out.append(s.data() + i, n);
      i += n;
    }
  }
  return out;
}

}  // namespace gtap::readers
