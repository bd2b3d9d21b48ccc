#include "gtap/readers/timeline_merge.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "gtap/readers/parallel.h"
#include "gtap/readers/timeline_builder.h"

namespace gtap::readers {

void appendTimeline(Timeline& whole, Timeline&& part, const std::string& host) {
  uint64_t nextTrack = 1, flowBase = 0;
  for (const auto& t : whole.tracks) nextTrack = std::max(nextTrack, t.id + 1);
  for (const auto& s : whole.slices) flowBase = std::max({flowBase, s.flowOut, s.flowIn});
  std::set<uint32_t> pids;
  for (const auto& t : whole.tracks) pids.insert(t.pid);
  for (const auto& c : whole.counters) pids.insert(c.pid);
  // The part's processes: a pid already used is moved (and its host named).
  std::map<uint32_t, uint32_t> pidOf;
  auto newPid = [&](uint32_t pid) {
    auto [it, added] = pidOf.try_emplace(pid, pid);
    if (added)
      while (pids.count(it->second)) it->second += 1u << 22;  // above Linux's pid_max
    return it->second;
  };
  std::map<uint64_t, uint64_t> trackIds;
  for (auto& t : part.tracks) {
    uint32_t pid = newPid(t.pid);
    if (pid != t.pid) t.processName += " @" + host;
    t.pid = pid;
    trackIds[t.id] = nextTrack;
    t.id = nextTrack++;
    whole.tracks.push_back(std::move(t));
  }
  uint32_t stackBase = static_cast<uint32_t>(whole.callstacks.size());
  auto frameBase = static_cast<uint32_t>(whole.frames.size());
  for (auto& s : part.slices) {
    s.track = trackIds.at(s.track);
    if (s.flowOut) s.flowOut += flowBase;
    if (s.flowIn) s.flowIn += flowBase;
    if (s.callstack) s.callstack += stackBase;
  }
  whole.slices.insert(whole.slices.end(), part.slices.begin(), part.slices.end());
  whole.frames.insert(whole.frames.end(), std::make_move_iterator(part.frames.begin()),
                      std::make_move_iterator(part.frames.end()));
  for (auto& stack : part.callstacks) {
    for (uint32_t& f : stack) f += frameBase;
    whole.callstacks.push_back(std::move(stack));
  }
  for (auto& c : part.counters) {
    uint32_t pid = newPid(c.pid);
    if (pid != c.pid && !c.processName.empty()) c.processName += " @" + host;
    c.pid = pid;
    whole.counters.push_back(std::move(c));
  }
  whole.store->keep(part.store);
}

Timeline buildTimelineInParallel(std::span<const Capture* const> captures, std::vector<std::string>& notes,
                                 const std::function<FrameResolver()>& resolverForPart) {
  Timeline whole;
  std::vector<std::optional<Timeline>> parts(captures.size());
  std::vector<std::vector<std::string>> partNotes(captures.size());
  PartNotes joined(notes);
  forEachInParallel(
      captures.size(),
      [&](size_t i) { parts[i] = buildTimeline(captures.subspan(i, 1), partNotes[i], resolverForPart()); },
      [&](size_t i) {
        appendTimeline(whole, std::move(*parts[i]), captures[i]->process().hostname);
        parts[i].reset();
        joined.add(std::move(partNotes[i]));
        captures[i]->reader().releasePages();
      });
  return whole;
}

}  // namespace gtap::readers
