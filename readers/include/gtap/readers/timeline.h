// A timeline in neutral form: tracks (host threads, device queues) holding
// slices, with flows from one slice to another (an API call to the kernel it
// launched). Reports build one from captures; exporters write it out.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gtap/readers/op_store.h"
#include "gtap/readers/stack_frames.h"

namespace gtap::readers {

struct TimelineTrack {
  // phases: gtap's own "gtap recording" track (paused times); ranges: a
  // thread's named ranges, when they cannot nest with its API calls on the
  // thread's own track
  enum class Kind { hostThread, deviceQueue, phases, ranges };
  uint64_t id = 0;          // unique in the timeline
  Kind kind = Kind::hostThread;
  uint32_t pid = 0;         // the process the track belongs to
  std::string processName;  // e.g. "rank 3 (pid 123) ./app"
  uint32_t tid = 0;         // host threads: OS thread id
  std::string name;         // thread name, or e.g. "gtap simulated GPU queue 0"
  int32_t sortIndex = 0;    // order among the process's tracks
};

// A slice's argument, shown in the viewer: a name and its value.
struct TimelineArg {
  std::string_view first, second;
};

// A slice's text points into its Timeline's store (Timeline::text, ::args) or
// at literals: a timeline of millions of slices holds each distinct string
// once and makes no heap allocation per slice.
struct TimelineSlice {
  uint64_t track = 0;       // TimelineTrack::id
  int64_t startNs = 0;      // host clock domain (CLOCK_MONOTONIC ns)
  int64_t endNs = 0;        // >= startNs
  std::string_view name;    // function or kernel name
  std::string_view category;  // "api", "kernel", "copy", "fill", "barrier", ...
  std::span<const TimelineArg> args;  // shown in the viewer
  uint64_t flowOut = 0;     // non-zero: a flow starts at this slice
  uint64_t flowIn = 0;      // non-zero: the flow with this id ends here
  uint32_t callstack = 0;   // non-zero: the CPU stack it was launched from (Timeline::callstacks)
};

// A value over time, shown as a counter track of its process: a device
// metric sampled while the program ran (a cumulative one as its rate).
struct TimelineCounter {
  uint32_t pid = 0;  // the process the track belongs to (as its TimelineTracks give it)
  std::string processName;  // for a process that has no other track
  std::string name;  // e.g. "counting GPU: frequency actual (MHz)"
  std::vector<std::pair<int64_t, double>> points;  // host ns, value; in time order
};

struct Timeline {
  std::vector<TimelineTrack> tracks;
  std::vector<TimelineSlice> slices;
  std::vector<TimelineCounter> counters;
  std::shared_ptr<OpStore> store = std::make_shared<OpStore>();
  // CPU stacks of launches: callstack id N is callstacks[N - 1], indices
  // into frames, root first.
  std::vector<NamedFrame> frames;
  std::vector<std::vector<uint32_t>> callstacks;

  // `s` kept in the store, once however often it is asked for.
  std::string_view text(std::string_view s) { return store->intern(s); }
  // Arguments kept in the store, their text interned.
  std::span<const TimelineArg> args(std::initializer_list<TimelineArg> list) {
    auto out = store->allocate<TimelineArg>(list.size());
    size_t i = 0;
    for (const TimelineArg& a : list) out[i++] = {text(a.first), text(a.second)};
    return out;
  }
};

// Chrome Trace Event format (JSON object form, "traceEvents"), loadable in
// Perfetto UI, chrome://tracing and speedscope.
void writeChromeTrace(const Timeline& timeline, std::ostream& out);
// Perfetto's native protobuf trace.
void writePerfettoTrace(const Timeline& timeline, std::ostream& out);

}  // namespace gtap::readers
