// A timeline of many captures built a capture at a time on several threads
// (gtap -j): each capture's own timeline is built apart, then they are put
// together in the order given, so the result is the same whatever the number
// of threads.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <vector>

#include "gtap/readers/timeline.h"

namespace gtap::readers {

// `resolverForPart()` is called once per capture, on the thread that builds
// it, for the resolver of its stack frames (one that thread alone uses).
// Processes that share a pid (ranks on different hosts, a pid reused) are
// kept apart as buildTimeline keeps them. What reading found wrong goes to
// `notes`, in the captures' order.
Timeline buildTimelineInParallel(std::span<const Capture* const> captures, std::vector<std::string>& notes,
                                 const std::function<FrameResolver()>& resolverForPart);

// Appends `part` (one capture's timeline) to `whole`: its tracks, slices,
// flows, stacks and counters renumbered after those already there, its pid
// moved above Linux's pid_max when `whole` has it already (its process then
// named with its `host`). `whole` keeps `part`'s store alive.
void appendTimeline(Timeline& whole, Timeline&& part, const std::string& host);

}  // namespace gtap::readers
