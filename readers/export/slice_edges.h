// A timeline's slices as begin and end edges, the form Perfetto's track events
// take. On each track the edges form a valid stack (every end closes the
// innermost open slice); across tracks they come in time order, so a reader
// sees the trace already sorted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <queue>
#include <utility>
#include <vector>

#include "gtap/readers/timeline.h"
#include "timeline_index.h"

namespace gtap::readers::timeline_export {

struct SliceEdge {
  bool begin = false;
  int64_t ns = 0;
  uint32_t track = 0;  // index into Timeline::tracks
  uint32_t slice = 0;  // index into Timeline::slices
  // The slice overlapped a later slice on its track without enclosing it, so
  // it ends early, at ns, where the later slice begins.
  bool cut = false;
  int64_t recordedEndNs = 0;  // when cut: the end the slice was recorded with
};

class SliceEdges {
 public:
  // Holds references to both; they must outlive this object.
  SliceEdges(const Timeline& timeline, const TimelineIndex& index);

  // The next edge in time order; false once every slice has begun and ended.
  bool next(SliceEdge& edge);

 private:
  struct TrackCursor {
    uint32_t next = 0;  // position in order_ of the next slice to begin
    uint32_t end = 0;   // position in order_ just past this track's slices
    std::vector<uint32_t> open;  // slices begun and not yet ended, innermost last
  };

  SliceEdge peek(uint32_t track) const;
  void advance(uint32_t track, const SliceEdge& edge);
  bool hasMore(uint32_t track) const;

  const Timeline& timeline_;
  // Slice indices grouped by track, each group by start, longer first.
  std::vector<uint32_t> order_;
  std::vector<TrackCursor> cursors_;
  // (time of the track's next edge, track): tracks with edges left.
  std::priority_queue<std::pair<int64_t, uint32_t>, std::vector<std::pair<int64_t, uint32_t>>,
                      std::greater<>>
      ready_;
};

}  // namespace gtap::readers::timeline_export
