// Chrome Trace Event format, JSON object form:
//   {"traceEvents":[...],"displayTimeUnit":"ns"}
// Metadata events name and order processes and threads, each slice is a
// complete ("X") event, and a flow is a start ("s") event bound to its source
// slice plus an end ("f", "bp":"e") event bound to the slice enclosing it at
// the destination. Events are written one per line as they are formatted.
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <map>
#include <set>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "gtap/readers/timeline.h"
#include "output_buffer.h"
#include "timeline_index.h"
#include "gtap/readers/json.h"

namespace gtap::readers {

namespace {

using timeline_export::OutputBuffer;
using timeline_export::TimelineIndex;
using timeline_export::TimelineProcess;

// Linux thread ids stay below 2^22 (PID_MAX_LIMIT), so device queues numbered
// from 2^30 never meet a real thread, and still fit the 32-bit ids viewers use.
constexpr uint32_t kDeviceQueueTidBase = 1u << 30;

// Flow ids above 2^53 would lose bits in viewers that hold numbers as doubles;
// such ids are written as hexadecimal strings, which viewers compare as text.
constexpr uint64_t kLargestExactDouble = (uint64_t{1} << 53) - 1;

constexpr std::string_view kFlowCategory = "flow";
constexpr std::string_view kFlowName = "flow";

template <typename Integer>
void appendInteger(std::string& out, Integer value, int base = 10) {
  char digits[24];
  auto result = std::to_chars(digits, digits + sizeof digits, value, base);
  out.append(digits, result.ptr);
}

// Microseconds with three decimals: every nanosecond survives the unit change.
void appendMicros(std::string& out, int64_t ns) {
  appendInteger(out, ns / 1000);
  const auto fraction = static_cast<int>(ns % 1000);
  out += '.';
  out += static_cast<char>('0' + fraction / 100);
  out += static_cast<char>('0' + fraction / 10 % 10);
  out += static_cast<char>('0' + fraction % 10);
}


void appendFlowId(std::string& out, uint64_t id) {
  if (id <= kLargestExactDouble) {
    appendInteger(out, id);
  } else {
    out += "\"0x";
    appendInteger(out, id, 16);
    out += '"';
  }
}

class ChromeTraceWriter {
 public:
  ChromeTraceWriter(const Timeline& timeline, std::ostream& out)
      : timeline_(timeline), index_(timeline), out_(out) {
    // Host threads keep their OS tid; device queues get one of their own.
    uint32_t nextQueueTid = kDeviceQueueTidBase;
    tids_.reserve(timeline.tracks.size());
    for (const TimelineTrack& track : timeline.tracks) {
      tids_.push_back(track.kind != TimelineTrack::Kind::hostThread ? nextQueueTid++ : track.tid);
    }
    numberStackFrames();
  }

  void write() {
    out_.text() += "{\"traceEvents\":[\n";
    writeMetadata();
    for (size_t i = 0; i < timeline_.slices.size(); ++i) writeSlice(i);
    for (const TimelineCounter& counter : timeline_.counters) writeCounter(counter);
    out_.text() += "],\"displayTimeUnit\":\"ns\"";
    writeStackFrames();
    out_.text() += "}\n";
    out_.flush();
  }

 private:
  // The launches' callstacks as the format's "stackFrames": one entry per
  // node of the tree the callstacks make (a frame under its parent), which
  // a slice names by its innermost frame ("sf").
  void numberStackFrames() {
    std::map<std::pair<uint64_t, uint32_t>, uint64_t> nodes;  // (parent node, frame) -> node
    for (const auto& stack : timeline_.callstacks) {
      uint64_t node = 0;
      for (uint32_t frame : stack) {
        auto [it, added] = nodes.try_emplace({node, frame}, frameNodes_.size() + 1);
        if (added) frameNodes_.push_back({node, frame});
        node = it->second;
      }
      leafOf_.push_back(node);
    }
  }

  void writeStackFrames() {
    if (frameNodes_.empty()) return;
    std::string& text = out_.text();
    text += ",\"stackFrames\":{";
    for (size_t i = 0; i < frameNodes_.size(); ++i) {
      const auto& [parent, frame] = frameNodes_[i];
      const NamedFrame& f = timeline_.frames[frame];
      text += i ? ",\n\"" : "\n\"";
      appendInteger(text, i + 1);
      text += "\":{\"name\":";
      appendJsonString(text, f.text());
      text += ",\"category\":";
      appendJsonString(text, f.module.empty() ? std::string_view("unknown") : std::string_view(f.module));
      if (parent) {
        text += ",\"parent\":\"";
        appendInteger(text, parent);
        text += '"';
      }
      text += '}';
      out_.maybeFlush();
    }
    text += '}';
  }

  // Starts an event object with its phase, pid and (when given) tid.
  std::string& beginEvent(char phase, uint32_t pid, const uint32_t* tid = nullptr) {
    std::string& text = out_.text();
    text += first_ ? "{\"ph\":\"" : ",\n{\"ph\":\"";
    first_ = false;
    text += phase;
    text += "\",\"pid\":";
    appendInteger(text, pid);
    if (tid) {
      text += ",\"tid\":";
      appendInteger(text, *tid);
    }
    return text;
  }

  void endEvent() {
    out_.text() += '}';
    out_.maybeFlush();
  }

  void writeNameMetadata(std::string_view kind, uint32_t pid, const uint32_t* tid,
                         std::string_view name) {
    std::string& text = beginEvent('M', pid, tid);
    text += ",\"name\":\"";
    text += kind;
    text += "\",\"args\":{\"name\":";
    appendJsonString(text, name);
    text += '}';
    endEvent();
  }

  void writeSortMetadata(std::string_view kind, uint32_t pid, const uint32_t* tid,
                         int64_t sortIndex) {
    std::string& text = beginEvent('M', pid, tid);
    text += ",\"name\":\"";
    text += kind;
    text += "\",\"args\":{\"sort_index\":";
    appendInteger(text, sortIndex);
    text += '}';
    endEvent();
  }

  void writeMetadata() {
    const std::vector<TimelineProcess>& processes = index_.processes();
    for (size_t i = 0; i < processes.size(); ++i) {
      const TimelineProcess& process = processes[i];
      if (!process.name.empty()) {
        writeNameMetadata("process_name", process.pid, nullptr, process.name);
      }
      writeSortMetadata("process_sort_index", process.pid, nullptr, static_cast<int64_t>(i));
    }
    // A process whose only tracks are counters is named by them.
    std::set<uint32_t> named;
    for (const TimelineProcess& p : processes) named.insert(p.pid);
    for (const TimelineCounter& counter : timeline_.counters)
      if (named.insert(counter.pid).second && !counter.processName.empty())
        writeNameMetadata("process_name", counter.pid, nullptr, counter.processName);
    for (size_t i = 0; i < timeline_.tracks.size(); ++i) {
      const TimelineTrack& track = timeline_.tracks[i];
      const uint32_t tid = tids_[i];
      std::string name = track.name;
      // A viewer labels an unnamed thread by its tid, which for a queue is made up.
      if (name.empty() && track.kind == TimelineTrack::Kind::deviceQueue) {
        name = "device queue " + std::to_string(track.id);
      }
      if (!name.empty()) writeNameMetadata("thread_name", track.pid, &tid, name);
      writeSortMetadata("thread_sort_index", track.pid, &tid, track.sortIndex);
    }
  }

  // A counter event ("C") per point: viewers draw one track per process and name.
  void writeCounter(const TimelineCounter& counter) {
    for (const auto& [ns, value] : counter.points) {
      if (!std::isfinite(value)) continue;
      std::string& text = beginEvent('C', counter.pid);
      text += ",\"ts\":";
      appendMicros(text, ns);
      text += ",\"name\":";
      appendJsonString(text, counter.name);
      text += ",\"args\":{\"value\":";
      char digits[40];
      std::snprintf(digits, sizeof digits, "%.17g", value);
      text += digits;
      text += '}';
      endEvent();
    }
  }

  void writeSlice(size_t sliceIndex) {
    const TimelineSlice& slice = timeline_.slices[sliceIndex];
    const size_t trackIndex = index_.trackOf(sliceIndex);
    const uint32_t pid = timeline_.tracks[trackIndex].pid;
    const uint32_t tid = tids_[trackIndex];

    std::string& text = beginEvent('X', pid, &tid);
    text += ",\"ts\":";
    appendMicros(text, slice.startNs);
    text += ",\"dur\":";
    appendMicros(text, slice.endNs - slice.startNs);
    text += ",\"cat\":";
    appendJsonString(text, slice.category);
    text += ",\"name\":";
    appendJsonString(text, slice.name);
    text += ",\"args\":{";
    for (size_t a = 0; a < slice.args.size(); ++a) {
      if (a) text += ',';
      appendJsonString(text, slice.args[a].first);
      text += ':';
      appendJsonString(text, slice.args[a].second);
    }
    text += '}';
    if (slice.callstack && slice.callstack <= leafOf_.size() && leafOf_[slice.callstack - 1]) {
      text += ",\"sf\":\"";
      appendInteger(text, leafOf_[slice.callstack - 1]);
      text += '"';
    }
    endEvent();

    // Written after the slice, at its start time: viewers bind a flow event
    // to the innermost slice open on its thread at that time, which is this
    // one unless a slice nested in it starts in the same nanosecond.
    if (slice.flowOut) writeFlow('s', slice.flowOut, pid, tid, slice.startNs);
    if (slice.flowIn) writeFlow('f', slice.flowIn, pid, tid, slice.startNs);
  }

  void writeFlow(char phase, uint64_t id, uint32_t pid, uint32_t tid, int64_t ns) {
    std::string& text = beginEvent(phase, pid, &tid);
    text += ",\"ts\":";
    appendMicros(text, ns);
    text += ",\"id\":";
    appendFlowId(text, id);
    text += ",\"cat\":\"";
    text += kFlowCategory;
    text += "\",\"name\":\"";
    text += kFlowName;
    text += '"';
    // Without "bp":"e" a flow end binds to the next slice that begins.
    if (phase == 'f') text += ",\"bp\":\"e\"";
    endEvent();
  }

  const Timeline& timeline_;
  const TimelineIndex index_;
  OutputBuffer out_;
  std::vector<uint32_t> tids_;
  std::vector<std::pair<uint64_t, uint32_t>> frameNodes_;  // node N + 1: (parent node, frame)
  std::vector<uint64_t> leafOf_;  // per callstack, its innermost node (0: none)
  bool first_ = true;
};

}  // namespace

void writeChromeTrace(const Timeline& timeline, std::ostream& out) {
  ChromeTraceWriter(timeline, out).write();
}

}  // namespace gtap::readers
