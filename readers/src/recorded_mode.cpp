#include "gtap/readers/recorded_mode.h"

#include <algorithm>

namespace gtap::readers {

std::string recordedMode(const Capture& c) { return c.process().mode.empty() ? "api" : c.process().mode; }

bool recorded(const Capture& c, uint32_t needed) {
  uint32_t bits = 0;
  std::string error;
  return format::parseModeList(recordedMode(c), bits, error) && (bits & needed) == needed;
}

std::string nothingFoundHint(const std::vector<const Capture*>& captures, uint32_t needed, const std::string& what,
                             bool anyOf) {
  auto holds = [&](const Capture& c) {
    if (!anyOf) return recorded(c, needed);
    for (const auto& m : format::kModeWords)
      if ((m.bits & needed) && recorded(c, m.bits)) return true;
    return false;
  };
  for (const auto* c : captures) {
    if (holds(*c)) continue;
    std::string mode = recordedMode(*c);
    uint32_t bits = 0;
    std::string error;
    std::string suggestion = format::parseModeList(mode, bits, error) ? mode : "api";
    for (const auto& m : format::kModeWords) {
      // A word is suggested for what it is for, not for what it brings along
      // (samples brings kernels).
      if (!(m.bits & needed) || (bits & m.bits & needed)) continue;
      suggestion += "," + std::string(m.word);
      bits |= m.bits;
      if (anyOf) break;
    }
    std::string who = captures.size() == 1 ? "the capture" : c->path();
    return "no " + what + " recorded: " + who + " was recorded with mode " + mode + " (record them with --mode=" +
           suggestion + ")";
  }
  std::vector<std::string> modes;
  for (const auto* c : captures)
    if (std::find(modes.begin(), modes.end(), recordedMode(*c)) == modes.end()) modes.push_back(recordedMode(*c));
  std::string list;
  for (const auto& m : modes) list += (list.empty() ? "" : " / ") + m;
  return "no " + what + " found; the capture" + std::string(captures.size() == 1 ? " was" : "s were") +
         " recorded with mode " + list + ", which records them";
}

}  // namespace gtap::readers
