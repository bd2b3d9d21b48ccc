// When recording was paused (gtap_stop / gtap_start, GTAP_START_PAUSED, the
// toggle signal): the capture's phases chunks (format 1.8).
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace gtap::readers {

class Capture;

struct PausedSpan {
  int64_t beginNs = 0;  // host ns; the capture's start when it started paused
  int64_t endNs = std::numeric_limits<int64_t>::max();  // max: paused until the end
};

struct RecordingPhases {
  std::vector<PausedSpan> paused;  // in order, not overlapping
  std::vector<std::string> problems;
};

RecordingPhases loadPhases(const Capture& capture);

// Paused time inside [fromNs, toNs].
int64_t pausedNsWithin(const RecordingPhases& phases, int64_t fromNs, int64_t toNs);

// "recorded 1.20 ms, paused 3.40 ms (2 pauses)" over the capture's whole
// time (its start to its trailer or last record at `lastNs`); empty when it
// was never paused.
std::string describePhases(const Capture& capture, int64_t lastNs);

}  // namespace gtap::readers
