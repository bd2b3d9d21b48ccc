// Which device work a capture keeps: GTAP_KERNEL_FILTER (a glob on kernel
// names) and GTAP_DISPATCH_RANGE (START:END, dispatch numbers counted as
// replay scopes count them, from 0, both included). Shared by the launcher
// (to refuse a bad range before the program starts), libgtap.so (to refuse
// one set by hand) and the readers (to say a capture was filtered).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gtap::format {

// "START:END" with decimal numbers, START <= END; false with `error` set
// (naming the value) otherwise. Signs, spaces and empty parts are refused.
inline bool parseDispatchRange(std::string_view text, uint64_t& first, uint64_t& last, std::string& error) {
  auto number = [](std::string_view digits, uint64_t& out) {
    if (digits.empty() || digits.size() > 20) return false;
    uint64_t v = 0;
    for (char c : digits) {
      if (c < '0' || c > '9') return false;
      uint64_t d = static_cast<uint64_t>(c - '0');
      if (v > (UINT64_MAX - d) / 10) return false;
      v = v * 10 + d;
    }
    out = v;
    return true;
  };
  size_t colon = text.find(':');
  if (colon == std::string_view::npos || !number(text.substr(0, colon), first) ||
      !number(text.substr(colon + 1), last)) {
    error = "'" + std::string(text) + "' is not START:END (dispatch numbers from 0, both included)";
    return false;
  }
  if (last < first) {
    error = "'" + std::string(text) + "': END comes before START";
    return false;
  }
  return true;
}

// What a capture's GTAP_* settings say about filtered device work, for
// people ("kernels matching 'sc*', dispatches 2 to 5"); empty when every
// dispatch was recorded. A range the capturing library refused is not named:
// it recorded everything.
inline std::string deviceWorkFilter(const std::vector<std::pair<std::string, std::string>>& settings) {
  std::string kernels, range;
  for (const auto& [name, value] : settings) {
    if (name == "GTAP_KERNEL_FILTER" && !value.empty()) kernels = "kernels matching '" + value + "'";
    uint64_t first = 0, last = 0;
    std::string error;
    if (name == "GTAP_DISPATCH_RANGE" && !value.empty() && parseDispatchRange(value, first, last, error))
      range = "dispatches " + std::to_string(first) + " to " + std::to_string(last);
  }
  if (kernels.empty()) return range;
  return range.empty() ? kernels : kernels + ", " + range;
}

}  // namespace gtap::format
