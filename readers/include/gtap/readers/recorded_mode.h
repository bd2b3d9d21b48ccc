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

}  // namespace gtap::readers
