// gtap bench --counters: hardware counters collected while replaying a
// capture, one replay per pass when the list needs several, joined per
// dispatch: a dispatch's place among the measured dispatches of its timed
// window (its iteration or scope window) names it in every pass, as the
// replays run the same stream.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "bench.h"

namespace gtap::cli {

struct JoinedDispatch {
  size_t window = 0;    // the timed window (iteration) it ran in
  size_t position = 0;  // its place among the measured dispatches of that window
  std::string kernel;
  std::vector<double> values;  // one per JoinedCounters::names; NaN: not collected
};

struct JoinedCounters {
  uint32_t passes = 0;
  std::vector<std::string> names;  // the counters, in the order the passes gave them
  std::vector<std::string> units;
  std::vector<JoinedDispatch> dispatches;
  std::vector<std::string> notes;  // counters asked for and not collected, with why
};

// Adds one pass's profile (its measured dispatches inside `timings`' windows)
// to `joined`. False with `error` when the profile cannot be read or its
// dispatches do not line up with the earlier passes' (the replays diverged).
bool joinCounterPass(const std::string& profile, const BenchTimings& timings, uint32_t pass,
                     JoinedCounters& joined, uint32_t& passesNeeded, std::string& error);

void printCountersText(const JoinedCounters& joined);
std::string countersJson(const JoinedCounters& joined);

}  // namespace gtap::cli
