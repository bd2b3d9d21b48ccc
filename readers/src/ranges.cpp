#include "gtap/readers/ranges.h"

#include <algorithm>
#include <unordered_map>

#include "gtap/readers/capture.h"

namespace gtap::readers {

ProgramRanges loadRanges(const Capture& capture) {
  ProgramRanges out;
  std::unordered_map<std::string, uint32_t> nameIds;
  const auto& reader = capture.reader();
  for (const auto& c : reader.chunks()) {
    if (c.kind != static_cast<uint16_t>(schema::ChunkKind::RANGES)) continue;
    std::string where = capture.path() + ": chunk at offset " + std::to_string(c.offset);
    try {
      auto d = reader.decode(c);
      auto root = d.root<schema::Ranges>();
      auto names = root.getNames();
      std::vector<uint32_t> ids;
      ids.reserve(names.size());
      for (auto n : names) {
        std::string name(n.cStr(), n.size());
        auto [it, fresh] = nameIds.try_emplace(name, static_cast<uint32_t>(out.names.size()));
        if (fresh) out.names.push_back(std::move(name));
        ids.push_back(it->second);
      }
      size_t row = 0;
      for (auto r : root.getRanges()) {
        if (r.getName() >= ids.size() || r.getEndNs() < r.getBeginNs()) {
          out.problems.push_back(where + ": ranges row " + std::to_string(row) +
                                 (r.getName() >= ids.size()
                                      ? ": name " + std::to_string(r.getName()) + " past the chunk's " +
                                            std::to_string(ids.size()) + " names"
                                      : ": ends before it begins") +
                                 "; skipped");
        } else {
          out.ranges.push_back(
              {r.getThread(), ids[r.getName()], r.getBeginNs(), r.getEndNs(), r.getDepth(), r.getOpenAtEnd()});
        }
        ++row;
      }
      // Each chunk says how many so far: the largest is the total.
      out.unmatchedPops = std::max(out.unmatchedPops, root.getUnmatchedPops());
    } catch (const kj::Exception& e) {
      out.problems.push_back(where + ": malformed " + kindName(c.kind) + ": " + e.getDescription().cStr());
    }
  }
  std::sort(out.ranges.begin(), out.ranges.end(), [](const NamedRange& a, const NamedRange& b) {
    if (a.thread != b.thread) return a.thread < b.thread;
    if (a.beginNs != b.beginNs) return a.beginNs < b.beginNs;
    if (a.endNs != b.endNs) return a.endNs > b.endNs;
    return a.depth < b.depth;
  });
  return out;
}

size_t ProgramRanges::openAtEnd() const {
  return static_cast<size_t>(std::count_if(ranges.begin(), ranges.end(), [](const NamedRange& r) { return r.openAtEnd; }));
}

RangeLookup::RangeLookup(const ProgramRanges& ranges) : ranges_(ranges), parent_(ranges.ranges.size(), ~0u) {
  // A thread's ranges nest (it pushes and pops them), so the ranges still
  // open when one begins are the ones around it.
  std::vector<uint32_t> open;
  const auto& rs = ranges.ranges;
  for (uint32_t i = 0; i < rs.size(); ++i) {
    if (i && rs[i].thread != rs[i - 1].thread) open.clear();
    while (!open.empty() && rs[open.back()].endNs <= rs[i].beginNs) open.pop_back();
    if (!open.empty()) parent_[i] = open.back();
    open.push_back(i);
  }
}

const NamedRange* RangeLookup::innermostAt(uint32_t thread, int64_t ns) const {
  const auto& rs = ranges_.ranges;
  // The last range of the thread begun at or before ns.
  auto after = std::upper_bound(rs.begin(), rs.end(), std::make_pair(thread, ns),
                                [](const std::pair<uint32_t, int64_t>& k, const NamedRange& r) {
                                  return k.first != r.thread ? k.first < r.thread : k.second < r.beginNs;
                                });
  if (after == rs.begin()) return nullptr;
  uint32_t i = static_cast<uint32_t>(after - rs.begin() - 1);
  if (rs[i].thread != thread) return nullptr;
  while (i != ~0u && rs[i].endNs <= ns) i = parent_[i];
  return i == ~0u ? nullptr : &rs[i];
}

std::string describeRanges(const ProgramRanges& ranges) {
  if (ranges.ranges.empty() && !ranges.unmatchedPops) return {};
  std::string s = std::to_string(ranges.ranges.size()) + " (" + std::to_string(ranges.names.size()) +
                  (ranges.names.size() == 1 ? " name" : " names");
  if (size_t open = ranges.openAtEnd()) s += "; " + std::to_string(open) + " open at the end";
  if (ranges.unmatchedPops)
    s += "; " + std::to_string(ranges.unmatchedPops) + (ranges.unmatchedPops == 1 ? " pop" : " pops") +
         " without a push";
  return s + ")";
}

}  // namespace gtap::readers
