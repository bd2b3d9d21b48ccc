#include "slice_edges.h"

#include <algorithm>

namespace gtap::readers::timeline_export {

SliceEdges::SliceEdges(const Timeline& timeline, const TimelineIndex& index)
    : timeline_(timeline), cursors_(timeline.tracks.size()) {
  // Counting sort by track, then each track's slices by start, the enclosing
  // (longer) slice before the slices it holds; the original order breaks ties.
  std::vector<uint32_t> perTrack(timeline.tracks.size() + 1, 0);
  for (size_t s = 0; s < timeline.slices.size(); ++s) ++perTrack[index.trackOf(s) + 1];
  for (size_t t = 0; t < timeline.tracks.size(); ++t) perTrack[t + 1] += perTrack[t];
  for (size_t t = 0; t < timeline.tracks.size(); ++t) {
    cursors_[t].next = perTrack[t];
    cursors_[t].end = perTrack[t + 1];
  }
  order_.resize(timeline.slices.size());
  for (size_t s = 0; s < timeline.slices.size(); ++s) {
    order_[perTrack[index.trackOf(s)]++] = static_cast<uint32_t>(s);
  }
  const auto& slices = timeline.slices;
  auto nesting = [&](uint32_t a, uint32_t b) {
    if (slices[a].startNs != slices[b].startNs) return slices[a].startNs < slices[b].startNs;
    if (slices[a].endNs != slices[b].endNs) return slices[a].endNs > slices[b].endNs;
    return a < b;
  };
  for (uint32_t t = 0; t < cursors_.size(); ++t) {
    // A track's slices usually come in this order already (one thread's
    // calls, one queue's work): checked before sorting.
    auto first = order_.begin() + cursors_[t].next, last = order_.begin() + cursors_[t].end;
    if (!std::is_sorted(first, last, nesting)) std::sort(first, last, nesting);
    if (hasMore(t)) ready_.emplace(peek(t).ns, t);
  }
}

bool SliceEdges::hasMore(uint32_t track) const {
  const TrackCursor& cursor = cursors_[track];
  return cursor.next < cursor.end || !cursor.open.empty();
}

SliceEdge SliceEdges::peek(uint32_t track) const {
  const TrackCursor& cursor = cursors_[track];
  const auto& slices = timeline_.slices;
  SliceEdge edge;
  edge.track = track;
  if (!cursor.open.empty()) {
    const uint32_t inner = cursor.open.back();
    const int64_t innerEnd = slices[inner].endNs;
    edge.slice = inner;
    if (cursor.next == cursor.end) {
      edge.ns = innerEnd;
      return edge;
    }
    const TimelineSlice& following = slices[order_[cursor.next]];
    // Ends first when the next slice starts where this one ends.
    if (innerEnd <= following.startNs) {
      edge.ns = innerEnd;
      return edge;
    }
    // Starts inside but outlasts it: not nested. The track can only hold a
    // stack, so the open slice is cut where the next one begins.
    if (innerEnd < following.endNs) {
      edge.ns = following.startNs;
      edge.cut = true;
      edge.recordedEndNs = innerEnd;
      return edge;
    }
  }
  edge.begin = true;
  edge.slice = order_[cursor.next];
  edge.ns = slices[edge.slice].startNs;
  return edge;
}

void SliceEdges::advance(uint32_t track, const SliceEdge& edge) {
  TrackCursor& cursor = cursors_[track];
  if (edge.begin) {
    cursor.open.push_back(edge.slice);
    ++cursor.next;
  } else {
    cursor.open.pop_back();
  }
}

bool SliceEdges::next(SliceEdge& edge) {
  if (ready_.empty()) return false;
  const uint32_t track = ready_.top().second;
  ready_.pop();
  edge = peek(track);
  advance(track, edge);
  if (hasMore(track)) ready_.emplace(peek(track).ns, track);
  return true;
}

}  // namespace gtap::readers::timeline_export
