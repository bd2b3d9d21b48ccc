// Builds the neutral timeline of one or more captures: per process, a track
// per host thread with its API calls, a track per device queue (or immediate
// list) with its kernels, copies, fills and barriers, and a flow from each
// append call to the device work it created. A launch recorded with a CPU
// stack (mode stacks) gives it to both its call's slice and its device
// slices, the frames named by `resolve` (module+0xoffset without one).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "gtap/readers/kernel_stats.h"
#include "gtap/readers/timeline.h"

namespace gtap::readers {

Timeline buildTimeline(const std::vector<LoadedCapture>& captures, const FrameResolver& resolve = {});
// The same from the captures themselves: each one's device operations read a
// batch at a time (visitDeviceWork), so only the timeline is held; what
// reading found wrong goes to `notes`.
Timeline buildTimeline(std::span<const Capture* const> captures, std::vector<std::string>& notes,
                       const FrameResolver& resolve = {});

}  // namespace gtap::readers
