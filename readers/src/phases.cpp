#include "gtap/readers/phases.h"

#include <algorithm>

#include "gtap/readers/capture.h"
#include "gtap/readers/table.h"

namespace gtap::readers {

RecordingPhases loadPhases(const Capture& capture) {
  RecordingPhases out;
  struct Change {
    int64_t ns;
    bool paused;
  };
  // Each chunk repeats the changes before it: the longest list is all of them.
  std::vector<Change> changes;
  const auto& reader = capture.reader();
  for (const auto& c : reader.chunks()) {
    if (c.kind != static_cast<uint16_t>(schema::ChunkKind::PHASES)) continue;
    try {
      auto d = reader.decode(c);
      auto list = d.root<schema::Phases>().getChanges();
      if (list.size() <= changes.size()) continue;
      changes.clear();
      for (auto ch : list) changes.push_back({ch.getHostNs(), ch.getPaused()});
    } catch (const kj::Exception& e) {
      out.problems.push_back(capture.path() + ": chunk at offset " + std::to_string(c.offset) + ": malformed " +
                             kindName(c.kind) + ": " + e.getDescription().cStr());
    }
  }
  for (const Change& ch : changes) {
    if (ch.paused) {
      if (!out.paused.empty() && out.paused.back().endNs == std::numeric_limits<int64_t>::max()) continue;
      out.paused.push_back({ch.ns ? ch.ns : capture.process().startHostNs, std::numeric_limits<int64_t>::max()});
    } else if (!out.paused.empty() && out.paused.back().endNs == std::numeric_limits<int64_t>::max()) {
      out.paused.back().endNs = std::max(ch.ns, out.paused.back().beginNs);
    }
  }
  return out;
}

std::string describePhases(const Capture& capture, int64_t lastNs) {
  RecordingPhases phases = loadPhases(capture);
  if (phases.paused.empty()) return {};
  int64_t from = capture.process().startHostNs;
  int64_t to = std::max(lastNs, capture.trailer().present ? capture.trailer().endHostNs : 0);
  for (const PausedSpan& s : phases.paused)
    if (s.endNs != std::numeric_limits<int64_t>::max()) to = std::max(to, s.endNs);
  to = std::max(to, from);
  int64_t paused = pausedNsWithin(phases, from, to);
  size_t n = phases.paused.size();
  return "recorded " + formatNanoseconds(to - from - paused) + ", paused " + formatNanoseconds(paused) + " (" +
         std::to_string(n) + (n == 1 ? " pause)" : " pauses)");
}

int64_t pausedNsWithin(const RecordingPhases& phases, int64_t fromNs, int64_t toNs) {
  int64_t total = 0;
  for (const PausedSpan& s : phases.paused) {
    int64_t b = std::max(s.beginNs, fromNs), e = std::min(s.endNs, toNs);
    if (e > b) total += e - b;
  }
  return total;
}

}  // namespace gtap::readers
