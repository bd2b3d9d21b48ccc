#include "timeline_index.h"

#include <limits>
#include <stdexcept>
#include <string>
#include <unordered_map>

namespace gtap::readers::timeline_export {

TimelineIndex::TimelineIndex(const Timeline& timeline) {
  constexpr size_t kMaxCount = std::numeric_limits<uint32_t>::max();
  if (timeline.tracks.size() > kMaxCount || timeline.slices.size() > kMaxCount) {
    throw std::invalid_argument("timeline: " + std::to_string(timeline.tracks.size()) +
                                " tracks and " + std::to_string(timeline.slices.size()) +
                                " slices; at most " + std::to_string(kMaxCount) + " of each");
  }

  std::unordered_map<uint64_t, uint32_t> trackById;
  std::unordered_map<uint32_t, uint32_t> processByPid;
  trackById.reserve(timeline.tracks.size());
  trackProcess_.reserve(timeline.tracks.size());
  for (size_t i = 0; i < timeline.tracks.size(); ++i) {
    const TimelineTrack& track = timeline.tracks[i];
    auto [at, added] = trackById.emplace(track.id, static_cast<uint32_t>(i));
    if (!added) {
      throw std::invalid_argument("timeline track " + std::to_string(i) + ": id " +
                                  std::to_string(track.id) + " is already used by track " +
                                  std::to_string(at->second) + "; ids must be unique");
    }
    auto [process, isNew] =
        processByPid.emplace(track.pid, static_cast<uint32_t>(processes_.size()));
    if (isNew) processes_.push_back({track.pid, track.processName});
    TimelineProcess& entry = processes_[process->second];
    if (entry.name.empty()) entry.name = track.processName;
    trackProcess_.push_back(process->second);
  }

  sliceTrack_.reserve(timeline.slices.size());
  earliestNs_ = timeline.slices.empty() ? 0 : std::numeric_limits<int64_t>::max();
  for (size_t i = 0; i < timeline.slices.size(); ++i) {
    const TimelineSlice& slice = timeline.slices[i];
    auto track = trackById.find(slice.track);
    if (track == trackById.end()) {
      throw std::invalid_argument("timeline slice " + std::to_string(i) + " (" + std::string(slice.name) +
                                  "): track " + std::to_string(slice.track) +
                                  " is not in the timeline's tracks");
    }
    if (slice.startNs < 0 || slice.endNs < slice.startNs) {
      throw std::invalid_argument("timeline slice " + std::to_string(i) + " (" + std::string(slice.name) +
                                  "): start " + std::to_string(slice.startNs) + " ns, end " +
                                  std::to_string(slice.endNs) +
                                  " ns; expected 0 <= start <= end (CLOCK_MONOTONIC ns)");
    }
    sliceTrack_.push_back(track->second);
    if (slice.startNs < earliestNs_) earliestNs_ = slice.startNs;
  }
}

}  // namespace gtap::readers::timeline_export
