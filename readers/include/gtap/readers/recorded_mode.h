// What a report says when it found nothing of something: what the captures
// recorded (the mode in their FileInfo) and, only when a capture did not
// record what is needed, the mode that would.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gtap/format/modes.h"  // the bits callers pass as `needed`
#include "gtap/readers/capture.h"

namespace gtap::readers {

// The mode a capture was recorded with ("api", the default, when its file
// names none).
std::string recordedMode(const Capture& c);

// Whether the capture's mode holds every bit of `needed`; a mode that does
// not parse counts as not holding it.
bool recorded(const Capture& c, uint32_t needed);

// What to say when a report found no `what`, which mode `needed` records
// (with `anyOf`, any one of its words does): "no WHAT found; the capture was
// recorded with mode api,kernels, which records them", or, when a capture
// lacked it, "no WHAT recorded: the capture was recorded with mode api (record
// them with --mode=api,kernels)".
std::string nothingFoundHint(const std::vector<const Capture*>& captures, uint32_t needed, const std::string& what,
                             bool anyOf = false);

// The same, for readers that close each capture once read: add() keeps of
// each only its path and mode.
class NothingFoundHint {
 public:
  NothingFoundHint(uint32_t needed, std::string what, bool anyOf = false)
      : needed_(needed), what_(std::move(what)), anyOf_(anyOf) {}
  void add(const Capture& c);
  std::string text() const;

 private:
  uint32_t needed_;
  std::string what_;
  bool anyOf_;
  size_t captures_ = 0;
  std::string lackingPath_, lackingMode_;  // the first capture that did not record it
  std::vector<std::string> modes_;         // distinct, in order
};

}  // namespace gtap::readers
