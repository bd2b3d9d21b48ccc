#include "gtap/readers/timeline_builder.h"

#include "gtap/readers/counters.h"
#include "gtap/readers/phases.h"
#include "gtap/readers/ranges.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string_view>
#include <unordered_map>

namespace gtap::readers {

namespace {

std::string triple(const std::array<uint32_t, 3>& v) {
  return std::to_string(v[0]) + "," + std::to_string(v[1]) + "," + std::to_string(v[2]);
}

// (thread, call index) to the id of the flow starting at that call: open
// addressing in one array, no allocation per entry (a timeline of a million
// launches looks a call up twice per launch).
class CallFlows {
 public:
  bool empty() const { return used_ == 0; }
  // 0 when the call starts no flow.
  uint64_t find(uint32_t thread, uint64_t index) const {
    if (slots_.empty()) return 0;
    for (size_t i = hash(thread, index) & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.flow == 0) return 0;
      if (s.thread == thread && s.index == index) return s.flow;
    }
  }
  // The call's flow; a new one numbered `next` (and `next` advanced) when it
  // has none yet.
  uint64_t add(uint32_t thread, uint64_t index, uint64_t& next) {
    if ((used_ + 1) * 2 > slots_.size()) grow();
    for (size_t i = hash(thread, index) & mask_;; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.flow == 0) {
        s = {index, thread, next++};
        ++used_;
        return s.flow;
      }
      if (s.thread == thread && s.index == index) return s.flow;
    }
  }

 private:
  struct Slot {
    uint64_t index = 0;
    uint32_t thread = 0;
    uint64_t flow = 0;  // 0: empty
  };
  static size_t hash(uint32_t thread, uint64_t index) {
    uint64_t x = index * 0x9e3779b97f4a7c15ull ^ (uint64_t{thread} << 32 | thread);
    x ^= x >> 29;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 32;
    return static_cast<size_t>(x);
  }
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.empty() ? 1024 : old.size() * 2, Slot{});
    mask_ = slots_.size() - 1;
    for (const Slot& s : old) {
      if (s.flow == 0) continue;
      size_t i = hash(s.thread, s.index) & mask_;
      while (slots_[i].flow != 0) i = (i + 1) & mask_;
      slots_[i] = s;
    }
  }
  std::vector<Slot> slots_;
  size_t mask_ = 0;
  size_t used_ = 0;
};

// One capture's part of the timeline: its thread tracks first, then its
// device operations as they come (a batch at a time: queue tracks, slices and
// flow ends), then its API calls (slices and flow starts). The calls' slices
// are then moved before the operations', as tracks are ordered.
class CaptureTimeline {
 public:
  CaptureTimeline(Timeline& t, const Capture& c, uint32_t pid, std::string processName, uint64_t& nextTrack,
                  uint64_t& nextFlow, StackFrames& stacks)
      : t_(t), c_(c), pid_(pid), processName_(std::move(processName)), nextTrack_(nextTrack), nextFlow_(nextFlow),
        stacks_(stacks), opsFrom_(t.slices.size()) {
    stacks_.beginCapture();
    counters_.emplace(loadCounters(c));
    for (const auto& [id, th] : c.threads()) {
      TimelineTrack track;
      track.id = nextTrack_++;
      track.kind = TimelineTrack::Kind::hostThread;
      track.pid = pid_;
      track.processName = processName_;
      track.tid = th.osTid;
      track.name = th.name.empty() ? "thread " + std::to_string(th.osTid) : th.name;
      track.sortIndex = static_cast<int32_t>(id);
      threadTracks_[id] = track.id;
      t_.tracks.push_back(track);
    }
  }

  // Operations in file order, a batch at a time.
  void addOps(std::span<const DeviceOp> ops, const DeviceWork& work) {
    for (const DeviceOp& op : ops) {
      // The launch's stack goes to its call's slice too (made in finish()).
      opCallstack_ = op.stack ? callstackOf(work, op.stack) : 0;
      if (opCallstack_ && op.appendIndex != ~uint64_t{0})
        callCallstacks_.try_emplace(std::make_pair(op.thread, op.appendIndex), opCallstack_);
      if (!op.timed) continue;
      if (lastQueueTrack_ && op.queue == lastQueue_) {
        addSlice(op, lastQueueTrack_);
        continue;
      }
      auto [it, fresh] = queueTracks_.try_emplace(op.queue, 0);
      if (fresh) {
        TimelineTrack track;
        track.id = nextTrack_++;
        track.kind = TimelineTrack::Kind::deviceQueue;
        track.pid = pid_;
        track.processName = processName_;
        track.name = work.queueName(op.queue);
        track.sortIndex = 1000 + static_cast<int32_t>(queueTracks_.size());
        it->second = track.id;
        t_.tracks.push_back(track);
      }
      lastQueue_ = op.queue;
      lastQueueTrack_ = it->second;
      addSlice(op, it->second);
    }
  }

  void addSlice(const DeviceOp& op, uint64_t track) {
    TimelineSlice& s = t_.slices.emplace_back();
    s.track = track;
    s.startNs = op.startNs;
    s.endNs = op.endNs;
    if (op.name.data() != lastName_.data() || op.name.size() != lastName_.size()) {
      lastName_ = op.name;
      lastNameStored_ = t_.text(op.name);
    }
    s.name = lastNameStored_;
    s.category = opKindText(op.kind);
    s.args = argsOf(op, op.hal);
    if (op.counterSet) s.args = withCounters(s.args, op);
    s.callstack = opCallstack_;
    // Flows: an append call (thread, begin index) to the operations it
    // made; for a device dispatch an IREE HAL dispatch became, the
    // program's queue_execute that submitted it. Numbered in the order of
    // the operations; a flow has one end (a regular list executed again
    // gets no second arrow).
    uint32_t thread = op.hal ? op.hal->submissionThread : op.thread;
    uint64_t appendIndex = op.hal ? op.hal->submissionAppendIndex : op.appendIndex;
    if (appendIndex == ~uint64_t{0}) return;
    uint64_t before = nextFlow_;
    uint64_t flow = flows_.add(thread, appendIndex, nextFlow_);
    if (nextFlow_ != before) s.flowIn = flow;
  }

  // The device metrics as counter tracks of the process, named by device
  // (from `work`), cumulative metrics as their rate between samples.
  void addDeviceMetrics(const DeviceWork& work) {
    for (const auto& series : counters_->counters().metrics) {
      auto device = work.devices.find(series.device);
      std::string deviceName = device != work.devices.end() && !device->second.name.empty()
                                   ? device->second.name
                                   : "device " + std::to_string(series.device);
      for (size_t m = 0; m < series.metrics.size(); ++m) {
        const auto& metric = series.metrics[m];
        TimelineCounter counter;
        counter.pid = pid_;
        counter.processName = processName_;
        std::string units = metric.units;
        if (metric.cumulative) units = (units.empty() ? std::string("count") : units) + "/s";
        counter.name = deviceName + ": " + metric.name + (units.empty() ? "" : " (" + units + ")");
        bool havePrevious = false;
        int64_t previousNs = 0;
        double previous = 0;
        for (size_t i = 0; i < series.times.size(); ++i) {
          double v = series.at(i, m);
          if (std::isnan(v)) continue;
          if (!metric.cumulative) {
            counter.points.emplace_back(series.times[i], v);
            continue;
          }
          if (havePrevious && series.times[i] > previousNs)
            counter.points.emplace_back(series.times[i],
                                        (v - previous) / static_cast<double>(series.times[i] - previousNs) * 1e9);
          havePrevious = true;
          previousNs = series.times[i];
          previous = v;
        }
        if (!counter.points.empty()) t_.counters.push_back(std::move(counter));
      }
    }
  }

  // Capture thread id -> the id of its track.
  const std::map<uint32_t, uint64_t>& threadTracks() const { return threadTracks_; }

  // What was wrong with the capture's counters: chunks, and dispatches whose
  // values do not fit their set (their values are not shown).
  std::vector<std::string> counterProblems() const { return counters_->problems(c_.path()); }

  // The API calls, then the operations' slices moved after them (in place).
  void finish() {
    const size_t callsFrom = t_.slices.size();
    std::unordered_map<uint32_t, std::string_view> functionNames;
    std::unordered_map<int64_t, std::span<const TimelineArg>> resultArgs;
    std::string_view api = t_.text("api");
    c_.forEachCallBatch([&](std::span<const ApiCall> calls) {
      for (const ApiCall& call : calls) {
        if (!call.finished) continue;
        auto track = threadTracks_.find(call.thread);
        if (track == threadTracks_.end()) continue;
        TimelineSlice& s = t_.slices.emplace_back();
        s.track = track->second;
        s.startNs = call.beginNs;
        s.endNs = call.endNs;
        auto [name, newName] = functionNames.try_emplace(call.function);
        if (newName) name->second = t_.text(c_.functionName(call.function));
        s.name = name->second;
        s.category = api;
        auto [args, newResult] = resultArgs.try_emplace(call.result);
        if (newResult) args->second = t_.args({{"result", std::to_string(call.result)}});
        s.args = args->second;
        if (!flows_.empty()) s.flowOut = flows_.find(call.thread, call.beginIndex);
        if (!callCallstacks_.empty())
          if (auto cs = callCallstacks_.find({call.thread, call.beginIndex}); cs != callCallstacks_.end())
            s.callstack = cs->second;
      }
    });
    auto first = t_.slices.begin();
    std::rotate(first + static_cast<std::ptrdiff_t>(opsFrom_), first + static_cast<std::ptrdiff_t>(callsFrom),
                t_.slices.end());
  }

 private:
  // `base` and then each counter of the operation's set with its value.
  std::span<const TimelineArg> withCounters(std::span<const TimelineArg> base, const DeviceOp& op) {
    const CounterSetInfo* set = counters_->setOf(op);
    if (!set) return base;
    const auto& defs = set->counters;
    auto out = t_.store->allocate<TimelineArg>(base.size() + defs.size());
    std::copy(base.begin(), base.end(), out.begin());
    for (size_t i = 0; i < defs.size(); ++i)
      out[base.size() + i] = {t_.text(defs[i].name), t_.text(counterValueText(defs[i].value(op.counterValues[i])))};
    return out;
  }

  // The timeline's callstack id of the capture's stack `id` (0 when the
  // capture does not hold it).
  uint32_t callstackOf(const DeviceWork& work, uint32_t id) {
    if (lastCallstack_.first == id && id) return lastCallstack_.second;
    auto [it, added] = callstackIds_.try_emplace(id, 0);
    if (added) {
      bool found = false;
      const auto& frames = stacks_.of(work, id, &found);
      if (found) {
        t_.callstacks.push_back(frames);
        it->second = static_cast<uint32_t>(t_.callstacks.size());
      }
    }
    lastCallstack_ = {id, it->second};
    return it->second;
  }

  struct CallHash {
    size_t operator()(const std::pair<uint32_t, uint64_t>& k) const {
      return std::hash<uint64_t>()(k.second * 0x9E3779B97F4A7C15ull ^ k.first);
    }
  };

  // What an operation's arguments are made of; the text is made again only
  // when these differ from the last operation's.
  struct ArgsKey {
    schema::DeviceOpKind kind;
    std::array<uint32_t, 3> groupCount, groupSize;
    uint64_t bytes;
    schema::CopyDirection direction;
    bool hal;
    std::string_view halName;
    uint64_t halList;
    bool operator==(const ArgsKey& o) const {
      return kind == o.kind && groupCount == o.groupCount && groupSize == o.groupSize && bytes == o.bytes &&
             direction == o.direction && hal == o.hal && halName.data() == o.halName.data() &&
             halName.size() == o.halName.size() && halList == o.halList;
    }
  };

  std::span<const TimelineArg> argsOf(const DeviceOp& op, const HalOrigin* dispatch) {
    bool kernel = op.kind == schema::DeviceOpKind::KERNEL;
    ArgsKey key{op.kind,
                kernel ? op.groupCount : std::array<uint32_t, 3>{},
                kernel ? op.groupSize : std::array<uint32_t, 3>{},
                op.bytes,
                op.kind == schema::DeviceOpKind::COPY ? op.direction : schema::CopyDirection::UNKNOWN,
                dispatch != nullptr,
                dispatch ? dispatch->name : std::string_view(),
                dispatch ? dispatch->list : 0};
    if (haveLastArgs_ && key == lastKey_) return lastArgs_;
    // The arguments as text, interned whole when they differ from the last
    // op's text (operations of different kinds may still read alike).
    TimelineArg list[6];
    size_t n = 0;
    std::string groups, groupSize, bytes, buffer, direction;
    if (kernel) {
      groups = triple(op.groupCount);
      groupSize = triple(op.groupSize);
      list[n++] = {"groups", groups};
      list[n++] = {"group size", groupSize};
    }
    if (op.bytes) {
      bytes = std::to_string(op.bytes);
      list[n++] = {"bytes", bytes};
    }
    if (op.kind == schema::DeviceOpKind::COPY) {
      direction = directionName(op.direction);
      list[n++] = {"direction", direction};
    }
    if (dispatch) {
      buffer = std::to_string(dispatch->list);
      list[n++] = {"IREE HAL dispatch", dispatch->name};
      list[n++] = {"HAL command buffer", buffer};
    }
    argsKey_.clear();
    for (size_t a = 0; a < n; ++a) {
      argsKey_.append(list[a].first).push_back('\0');
      argsKey_.append(list[a].second).push_back('\0');
    }
    if (!haveLastArgs_ || argsKey_ != lastArgsText_ || lastArgs_.size() != n) {
      auto stored = t_.store->allocate<TimelineArg>(n);
      for (size_t a = 0; a < n; ++a) stored[a] = {t_.text(list[a].first), t_.text(list[a].second)};
      lastArgs_ = stored;
      std::swap(lastArgsText_, argsKey_);
    }
    lastKey_ = key;
    haveLastArgs_ = true;
    return lastArgs_;
  }

  Timeline& t_;
  const Capture& c_;
  uint32_t pid_;
  std::string processName_;
  uint64_t& nextTrack_;
  uint64_t& nextFlow_;
  std::map<uint32_t, uint64_t> threadTracks_;
  std::unordered_map<uint64_t, uint64_t> queueTracks_;
  uint64_t lastQueue_ = 0, lastQueueTrack_ = 0;  // the last operation's (0: none yet)
  CallFlows flows_;
  StackFrames& stacks_;
  std::unordered_map<uint32_t, uint32_t> callstackIds_;  // the capture's stack id -> the timeline's
  std::pair<uint32_t, uint32_t> lastCallstack_{0, 0};
  uint32_t opCallstack_ = 0;  // the operation being added's
  std::unordered_map<std::pair<uint32_t, uint64_t>, uint32_t, CallHash> callCallstacks_;  // (thread, call) -> id
  size_t opsFrom_;  // where this capture's slices begin in the timeline
  std::optional<DispatchCounters> counters_;
  std::string_view lastName_, lastNameStored_;
  bool haveLastArgs_ = false;
  ArgsKey lastKey_{};
  std::string lastArgsText_, argsKey_;
  std::span<const TimelineArg> lastArgs_;
};

// A track "gtap recording" with a slice "paused" for each time recording was
// paused (phases.h); one still paused at the end ends with the capture.
void addPausedTrack(Timeline& t, const Capture& c, uint32_t pid, const std::string& processName,
                    uint64_t& nextTrack, size_t slicesFrom, std::vector<std::string>* notes) {
  RecordingPhases phases = loadPhases(c);
  if (notes) notes->insert(notes->end(), phases.problems.begin(), phases.problems.end());
  if (phases.paused.empty()) return;
  int64_t lastNs = c.trailer().present ? c.trailer().endHostNs : 0;
  for (size_t s = slicesFrom; s < t.slices.size(); ++s) lastNs = std::max(lastNs, t.slices[s].endNs);
  TimelineTrack track;
  track.id = nextTrack++;
  track.kind = TimelineTrack::Kind::phases;
  track.pid = pid;
  track.processName = processName;
  track.name = "gtap recording";
  track.sortIndex = -1;
  t.tracks.push_back(track);
  for (const PausedSpan& p : phases.paused) {
    TimelineSlice slice;
    slice.track = track.id;
    slice.startNs = std::max<int64_t>(0, p.beginNs);
    slice.endNs = std::max(slice.startNs, std::min(p.endNs, std::max(lastNs, slice.startNs)));
    slice.name = "paused";
    slice.category = "gtap";
    t.slices.push_back(slice);
  }
}

// Whether a time in `bounds` falls strictly inside one of `calls` (by start):
// a range that begins or ends inside an API call cannot nest with it.
bool crossesCalls(std::vector<std::pair<int64_t, int64_t>>& calls, const std::vector<int64_t>& bounds) {
  if (calls.empty()) return false;
  std::sort(calls.begin(), calls.end());
  std::vector<int64_t> endsSoFar(calls.size());  // the latest end among calls[0..i]
  int64_t latest = calls[0].second;
  for (size_t i = 0; i < calls.size(); ++i) endsSoFar[i] = latest = std::max(latest, calls[i].second);
  for (int64_t b : bounds) {
    auto after = std::lower_bound(calls.begin(), calls.end(), std::make_pair(b, int64_t{0}),
                                  [](const auto& call, const auto& key) { return call.first < key.first; });
    if (after != calls.begin() && endsSoFar[static_cast<size_t>(after - calls.begin()) - 1] > b) return true;
  }
  return false;
}

// The program's named ranges (ranges.h) as slices of category "range" on their
// thread's track, nested with its API calls; a thread where a range begins or
// ends inside one of its calls (a push from a runtime's callback) gets them on
// a track of their own, "<thread> ranges", after the thread's.
void addRanges(Timeline& t, const Capture& c, uint32_t pid, const std::string& processName,
               const std::map<uint32_t, uint64_t>& threadTracks, uint64_t& nextTrack, size_t slicesFrom,
               std::vector<std::string>* notes) {
  ProgramRanges ranges = loadRanges(c);
  if (notes) notes->insert(notes->end(), ranges.problems.begin(), ranges.problems.end());
  if (ranges.ranges.empty()) return;
  std::string_view category = t.text("range");
  std::span<const TimelineArg> openArgs = t.args({{"open at end", "yes"}});
  std::vector<std::string_view> names;
  for (const std::string& n : ranges.names) names.push_back(t.text(n));
  std::unordered_map<uint64_t, size_t> trackAt;  // track id -> index in t.tracks
  for (size_t i = 0; i < t.tracks.size(); ++i) trackAt[t.tracks[i].id] = i;
  std::vector<TimelineSlice> added;
  for (size_t from = 0; from < ranges.ranges.size();) {
    uint32_t thread = ranges.ranges[from].thread;
    size_t to = from;
    while (to < ranges.ranges.size() && ranges.ranges[to].thread == thread) ++to;
    auto own = threadTracks.find(thread);
    uint64_t track = 0;
    if (own != threadTracks.end()) {
      std::vector<std::pair<int64_t, int64_t>> calls;
      for (size_t s = slicesFrom; s < t.slices.size(); ++s)
        if (t.slices[s].track == own->second && t.slices[s].category == "api")
          calls.emplace_back(t.slices[s].startNs, t.slices[s].endNs);
      std::vector<int64_t> bounds;
      for (size_t r = from; r < to; ++r) {
        bounds.push_back(ranges.ranges[r].beginNs);
        bounds.push_back(ranges.ranges[r].endNs);
      }
      if (!crossesCalls(calls, bounds)) track = own->second;
    }
    if (!track) {
      std::string threadName = "thread " + std::to_string(thread);
      if (own != threadTracks.end()) threadName = t.tracks[trackAt[own->second]].name;
      TimelineTrack rangesTrack;
      rangesTrack.id = nextTrack++;
      rangesTrack.kind = TimelineTrack::Kind::ranges;
      rangesTrack.pid = pid;
      rangesTrack.processName = processName;
      rangesTrack.name = threadName + " ranges";
      rangesTrack.sortIndex = static_cast<int32_t>(thread);
      track = rangesTrack.id;
      t.tracks.push_back(std::move(rangesTrack));
    }
    for (size_t r = from; r < to; ++r) {
      const NamedRange& range = ranges.ranges[r];
      TimelineSlice& s = added.emplace_back();
      s.track = track;
      s.startNs = std::max<int64_t>(0, range.beginNs);
      s.endNs = std::max(s.startNs, range.endNs);
      s.name = names[range.name];
      s.category = category;
      if (range.openAtEnd) s.args = openArgs;
    }
    from = to;
  }
  t.slices.insert(t.slices.end(), added.begin(), added.end());
}

// Builds the timeline of each capture in turn; `ops(i, builder)` feeds
// capture i's operations to the builder.
template <class Ops>
Timeline build(size_t count, const std::function<const Capture&(size_t)>& captureAt, const FrameResolver& resolve,
               std::vector<std::string>* notes, Ops&& ops) {
  Timeline t;
  StackFrames stacks(resolve);
  uint64_t nextTrack = 1;
  uint64_t nextFlow = 1;
  // Viewers group tracks by pid; ranks on different hosts (or a pid reused over
  // time) may share one, so each capture gets a pid of its own in the timeline
  // and its real one stays in the process name.
  std::set<uint32_t> pidsUsed;
  for (size_t i = 0; i < count; ++i) {
    const Capture& c = captureAt(i);
    std::string processName = c.label();
    if (!c.process().executable.empty()) processName += " " + c.process().executable;
    uint32_t pid = c.process().pid;
    if (pidsUsed.count(pid)) {
      processName += " @" + c.process().hostname;
      while (pidsUsed.count(pid)) pid += 1u << 22;  // above Linux's pid_max
    }
    pidsUsed.insert(pid);
    size_t slicesFrom = t.slices.size();
    CaptureTimeline b(t, c, pid, processName, nextTrack, nextFlow, stacks);
    ops(i, b);
    b.finish();
    addRanges(t, c, pid, processName, b.threadTracks(), nextTrack, slicesFrom, notes);
    addPausedTrack(t, c, pid, processName, nextTrack, slicesFrom, notes);
    auto problems = stacks.takeProblems();
    if (notes) notes->insert(notes->end(), problems.begin(), problems.end());
    if (notes)
      for (auto& p : b.counterProblems()) notes->push_back(std::move(p));
  }
  t.frames = stacks.frames();
  return t;
}

}  // namespace

Timeline buildTimeline(const std::vector<LoadedCapture>& captures, const FrameResolver& resolve) {
  return build(
      captures.size(), [&](size_t i) -> const Capture& { return *captures[i].capture; }, resolve, nullptr,
      [&](size_t i, CaptureTimeline& b) {
        b.addOps(captures[i].work.ops, captures[i].work);
        b.addDeviceMetrics(captures[i].work);
      });
}

Timeline buildTimeline(std::span<const Capture* const> captures, std::vector<std::string>& notes,
                       const FrameResolver& resolve) {
  return build(
      captures.size(), [&](size_t i) -> const Capture& { return *captures[i]; }, resolve, &notes,
      [&](size_t i, CaptureTimeline& b) {
        DeviceWork work;
        visitDeviceWork(*captures[i], work, false, [&](std::span<const DeviceOp> ops) { b.addOps(ops, work); });
        b.addDeviceMetrics(work);
        notes.insert(notes.end(), work.notes.begin(), work.notes.end());
      });
}

}  // namespace gtap::readers
