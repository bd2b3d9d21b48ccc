// Text placed in the pages the readers write (SVG, HTML): escaped markup, and
// JSON strings for their scripts.
#pragma once

#include <string>
#include <string_view>

#include "gtap/readers/json.h"

namespace gtap::readers {

// `s` as XML and HTML text or attribute value; control characters (not
// allowed in XML 1.0) become spaces.
inline std::string markupEscaped(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default:
        if (c < 0x20 && c != '\t') out += ' ';
        else out += static_cast<char>(c);
    }
  }
  return out;
}

// Appends `s` as a JSON string that can sit in a <script> element or an SVG
// CDATA section: '<' and '>' escaped, so neither "</script>" nor "]]>" can
// appear.
inline void appendScriptString(std::string& out, std::string_view s) {
  std::string json;
  appendJsonString(json, s);
  for (char c : json) {
    if (c == '<') out += "\\u003c";
    else if (c == '>') out += "\\u003e";
    else out += c;
  }
}

}  // namespace gtap::readers
