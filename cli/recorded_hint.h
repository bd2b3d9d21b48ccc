// What a report says when it found nothing of something: what the captures
// recorded (the mode in their FileInfo) and, only when a capture did not
// record what is needed, the mode that would.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "gtap/format/modes.h"
#include "gtap/readers/capture.h"

namespace gtap::cli {

// The mode a capture was recorded with ("api", the default, when its file
// names none).
inline std::string recordedMode(const readers::Capture& c) { return c.process().mode.empty() ? "api" : c.process().mode; }

// Whether the capture's mode holds every bit of `needed`; a mode that does
// not parse counts as not holding it.
inline bool recorded(const readers::Capture& c, uint32_t needed) {
  uint32_t bits = 0;
  std::string error;
  return format::parseModeList(recordedMode(c), bits, error) && (bits & needed) == needed;
}

// What to say when a report found no `what`, which mode `needed` records
// (with `anyOf`, any one of its words does): "no WHAT found; the capture was
// recorded with mode api,kernels, which records them", or, when a capture
// lacked it, "no WHAT recorded: the capture was recorded with mode api (record
// them with --mode=api,kernels)".
inline std::string nothingFoundHint(const std::vector<const readers::Capture*>& captures, uint32_t needed,
                                    const std::string& what, bool anyOf = false) {
  auto holds = [&](const readers::Capture& c) {
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
      if (!(m.bits & needed) || (bits & m.bits)) continue;
      suggestion += "," + std::string(m.word);
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

}  // namespace gtap::cli
