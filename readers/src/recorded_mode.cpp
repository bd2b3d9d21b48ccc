#include "gtap/readers/recorded_mode.h"

#include <algorithm>

namespace gtap::readers {

std::string recordedMode(const Capture& c) { return c.process().mode.empty() ? "api" : c.process().mode; }

bool recorded(const Capture& c, uint32_t needed) {
  uint32_t bits = 0;
  std::string error;
  return format::parseModeList(recordedMode(c), bits, error) && (bits & needed) == needed;
}

void NothingFoundHint::add(const Capture& c) {
  ++captures_;
  std::string mode = recordedMode(c);
  if (std::find(modes_.begin(), modes_.end(), mode) == modes_.end()) modes_.push_back(mode);
  if (!lackingPath_.empty()) return;
  bool holds = false;
  if (!anyOf_) {
    holds = recorded(c, needed_);
  } else {
    for (const auto& m : format::kModeWords)
      if ((m.bits & needed_) && recorded(c, m.bits)) holds = true;
  }
  if (!holds) {
    lackingPath_ = c.path();
    lackingMode_ = mode;
  }
}

std::string NothingFoundHint::text() const {
  if (!lackingPath_.empty()) {
    uint32_t bits = 0;
    std::string error;
    std::string suggestion = format::parseModeList(lackingMode_, bits, error) ? lackingMode_ : "api";
    for (const auto& m : format::kModeWords) {
      // A word is suggested for what it is for, not for what it brings along
      // (samples brings kernels).
      if (!(m.bits & needed_) || (bits & m.bits & needed_)) continue;
      suggestion += "," + std::string(m.word);
      bits |= m.bits;
      if (anyOf_) break;
    }
    std::string who = captures_ == 1 ? "the capture" : lackingPath_;
    return "no " + what_ + " recorded: " + who + " was recorded with mode " + lackingMode_ +
           " (record them with --mode=" + suggestion + ")";
  }
  std::string list;
  for (const auto& m : modes_) list += (list.empty() ? "" : " / ") + m;
  return "no " + what_ + " found; the capture" + std::string(captures_ == 1 ? " was" : "s were") +
         " recorded with mode " + list + ", which records them";
}

std::string nothingFoundHint(const std::vector<const Capture*>& captures, uint32_t needed, const std::string& what,
                             bool anyOf) {
  NothingFoundHint hint(needed, what, anyOf);
  for (const Capture* c : captures) hint.add(*c);
  return hint.text();
}

}  // namespace gtap::readers
