// What both exporters look up while writing a timeline: the track of each
// slice and the process of each track. Built, and the timeline checked, before
// anything is written, so a bad timeline fails with a message instead of
// leaving half a file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "gtap/readers/timeline.h"

namespace gtap::readers::timeline_export {

struct TimelineProcess {
  uint32_t pid = 0;
  std::string_view name;  // the first non-empty processName among its tracks
};

class TimelineIndex {
 public:
  // Throws std::invalid_argument naming the first track or slice that breaks
  // timeline.h's contract: a repeated track id, a slice on a track that is not
  // there, a negative start, or an end before the start.
  explicit TimelineIndex(const Timeline& timeline);

  // In order of first appearance in Timeline::tracks, which is also the order
  // viewers are asked to show them in.
  const std::vector<TimelineProcess>& processes() const { return processes_; }
  // Index into processes() of Timeline::tracks[track].
  uint32_t processOf(size_t track) const { return trackProcess_[track]; }
  // Index into Timeline::tracks of Timeline::slices[slice].track.
  uint32_t trackOf(size_t slice) const { return sliceTrack_[slice]; }
  // The earliest slice start; 0 for a timeline without slices.
  int64_t earliestNs() const { return earliestNs_; }

 private:
  std::vector<TimelineProcess> processes_;
  std::vector<uint32_t> trackProcess_;
  std::vector<uint32_t> sliceTrack_;
  int64_t earliestNs_ = 0;
};

}  // namespace gtap::readers::timeline_export
