// The OTF2 export (the trace format of Score-P, read by Vampir, Scalasca and
// otf2-print): a location per host thread and per device queue, API calls and
// device work as regions entered and left, a launch linked to its device work
// by attributes, one location group per process (rank) under its host. The
// captures are written one at a time, each one's timeline dropped once
// written, so memory does not grow with the number of files. docs/export.md
// has the mapping.
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "gtap/readers/capture.h"

namespace gtap::readers {

// What OTF2 refused, in its own words.
struct Otf2Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Otf2Written {
  uint64_t locationGroups = 0, locations = 0, regions = 0, events = 0;
};

// The archive `directory`/traces.otf2 (with traces.def and traces/) of the
// captures; `directory` exists and is empty. Up to readJobs() captures'
// timelines are built at once and written in the order given. What reading
// found wrong is added to `notes`. Throws Otf2Error.
Otf2Written writeOtf2(std::span<const Capture* const> captures, const std::string& directory,
                      std::vector<std::string>& notes);

}  // namespace gtap::readers
