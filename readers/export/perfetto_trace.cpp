// Perfetto's native trace: a Trace message written as a stream of its
// `packet` fields, one TracePacket at a time. Track descriptors come first
// (the root, then each process, then each host thread and device queue under
// its process), then slice begin and end events in time order.
#include <algorithm>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <unordered_map>

#include "gtap/readers/timeline.h"
#include "output_buffer.h"
#include "perfetto_trace.pb.h"
#include "slice_edges.h"
#include "timeline_index.h"
#include "gtap/readers/utf8.h"

namespace gtap::readers {

namespace {

namespace protos = perfetto::protos;
using timeline_export::OutputBuffer;
using timeline_export::SliceEdge;
using timeline_export::SliceEdges;
using timeline_export::TimelineIndex;
using readers::validUtf8;

// Perfetto's BUILTIN_CLOCK_MONOTONIC: the timeline's clock, so Perfetto can
// line these events up with other traces of the same machine.
constexpr uint32_t kClockMonotonic = 3;
// Any non-zero id: everything is written by one writer, as one sequence.
constexpr uint32_t kSequenceId = 1;
// Track uuids are shared by every trace loaded together; a fixed high half
// ("gtap") keeps ours apart from other producers' small numbers.
constexpr uint64_t kUuidBase = 0x6774617000000000;
constexpr uint8_t kTracePacketTag = (1 << 3) | 2;  // Trace.packet: field 1, length-delimited

class PerfettoTraceWriter {
 public:
  PerfettoTraceWriter(const Timeline& timeline, std::ostream& out)
      : timeline_(timeline), index_(timeline), out_(out) {}

  void write() {
    writeDescriptors();
    writeCallstacks();
    writeSliceEvents();
    writeCounterEvents();
    out_.flush();
  }

 private:
  uint64_t processUuid(size_t process) const { return kUuidBase + 1 + process; }
  uint64_t trackUuid(size_t track) const {
    return kUuidBase + 1 + index_.processes().size() + track;
  }
  uint64_t counterUuid(size_t counter) const { return trackUuid(timeline_.tracks.size() + counter); }

  // Fields every packet carries. The first packet on the sequence says it
  // starts clean; the events after it rely on the descriptors before them.
  protos::TracePacket& startPacket(bool timed, int64_t ns) {
    packet_.Clear();
    packet_.set_trusted_packet_sequence_id(kSequenceId);
    if (firstPacket_) {
      packet_.set_sequence_flags(protos::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED);
      packet_.set_first_packet_on_sequence(true);
      firstPacket_ = false;
    } else {
      packet_.set_sequence_flags(protos::TracePacket::SEQ_NEEDS_INCREMENTAL_STATE);
    }
    if (timed) {
      packet_.set_timestamp(static_cast<uint64_t>(ns));
      packet_.set_timestamp_clock_id(kClockMonotonic);
    }
    return packet_;
  }

  void finishPacket() {
    serialized_.clear();
    packet_.AppendToString(&serialized_);
    std::string& text = out_.text();
    text += static_cast<char>(kTracePacketTag);
    for (uint64_t size = serialized_.size();; size >>= 7) {  // varint length
      if (size < 0x80) {
        text += static_cast<char>(size);
        break;
      }
      text += static_cast<char>((size & 0x7F) | 0x80);
    }
    text += serialized_;
    out_.maybeFlush();
  }

  void writeDescriptors() {
    // Descriptors are stamped no later than the first event, as Perfetto asks,
    // so they sort ahead of it when merged with other traces.
    const bool timed = !timeline_.slices.empty();
    const int64_t ns = index_.earliestNs();

    // The root track (uuid 0) turns on the explicit orders given below.
    protos::TrackDescriptor* root = startPacket(timed, ns).mutable_track_descriptor();
    root->set_uuid(0);
    root->set_process_ordering(protos::TrackDescriptor::PROCESS_ORDERING_EXPLICIT);
    root->set_thread_ordering(protos::TrackDescriptor::THREAD_ORDERING_EXPLICIT);
    finishPacket();

    const auto& processes = index_.processes();
    for (size_t p = 0; p < processes.size(); ++p) {
      protos::TrackDescriptor* track = startPacket(timed, ns).mutable_track_descriptor();
      track->set_uuid(processUuid(p));
      track->set_sibling_order_rank(static_cast<int32_t>(p));
      track->set_child_ordering(protos::TrackDescriptor::EXPLICIT);
      protos::ProcessDescriptor* process = track->mutable_process();
      process->set_pid(static_cast<int32_t>(processes[p].pid));
      if (!processes[p].name.empty()) process->set_process_name(validUtf8(processes[p].name));
      finishPacket();
    }

    for (size_t t = 0; t < timeline_.tracks.size(); ++t) {
      const TimelineTrack& source = timeline_.tracks[t];
      protos::TrackDescriptor* track = startPacket(timed, ns).mutable_track_descriptor();
      track->set_uuid(trackUuid(t));
      track->set_parent_uuid(processUuid(index_.processOf(t)));
      track->set_sibling_order_rank(source.sortIndex);
      if (source.kind == TimelineTrack::Kind::hostThread) {
        protos::ThreadDescriptor* thread = track->mutable_thread();
        thread->set_pid(static_cast<int32_t>(source.pid));
        thread->set_tid(source.tid);
        if (!source.name.empty()) thread->set_thread_name(validUtf8(source.name));
      } else {
        track->set_name(source.name.empty() ? "device queue " + std::to_string(source.id)
                                            : validUtf8(source.name));
        // Two queues of one process may share a name; each stays its own track.
        track->set_sibling_merge_behavior(protos::TrackDescriptor::SIBLING_MERGE_BEHAVIOR_NONE);
      }
      finishPacket();
    }

    // Device metrics: a counter track under its process (described here when
    // the process has no other track).
    std::unordered_map<uint32_t, uint64_t> processOfPid;
    for (size_t p = 0; p < processes.size(); ++p) processOfPid.try_emplace(processes[p].pid, processUuid(p));
    for (size_t c = 0; c < timeline_.counters.size(); ++c) {
      const TimelineCounter& source = timeline_.counters[c];
      auto [parent, added] = processOfPid.try_emplace(source.pid, counterUuid(timeline_.counters.size() + c));
      if (added) {
        protos::TrackDescriptor* track = startPacket(timed, ns).mutable_track_descriptor();
        track->set_uuid(parent->second);
        track->set_sibling_order_rank(static_cast<int32_t>(processes.size() + c));
        protos::ProcessDescriptor* process = track->mutable_process();
        process->set_pid(static_cast<int32_t>(source.pid));
        if (!source.processName.empty()) process->set_process_name(validUtf8(source.processName));
        finishPacket();
      }
      protos::TrackDescriptor* track = startPacket(timed, ns).mutable_track_descriptor();
      track->set_uuid(counterUuid(c));
      track->set_parent_uuid(parent->second);
      track->set_name(validUtf8(source.name));
      track->set_sibling_order_rank(2000 + static_cast<int32_t>(c));
      track->mutable_counter();
      finishPacket();
    }
  }

  // Each device metric's values, a TYPE_COUNTER event a sample.
  void writeCounterEvents() {
    for (size_t c = 0; c < timeline_.counters.size(); ++c) {
      for (const auto& [ns, value] : timeline_.counters[c].points) {
        protos::TrackEvent* event = startPacket(true, ns).mutable_track_event();
        event->set_type(protos::TrackEvent::TYPE_COUNTER);
        event->set_track_uuid(counterUuid(c));
        event->set_double_counter_value(value);
        finishPacket();
      }
    }
  }

  // The launches' CPU stacks as Perfetto interns them: function names,
  // source paths and module paths as strings, a mapping per module, a frame
  // per distinct frame, a callstack per stack (iids are the timeline's
  // indices plus one). Events then name their callstack by iid.
  void writeCallstacks() {
    if (timeline_.callstacks.empty()) return;
    protos::InternedData* data = startPacket(false, 0).mutable_interned_data();
    std::unordered_map<std::string, uint64_t> functions, sources, modules;
    auto intern = [](std::unordered_map<std::string, uint64_t>& ids, const std::string& s, auto* list) {
      auto [it, added] = ids.try_emplace(s, ids.size() + 1);
      if (added) {
        protos::InternedString* str = list->Add();
        str->set_iid(it->second);
        str->set_str(validUtf8(s));
      }
      return it->second;
    };
    for (size_t i = 0; i < timeline_.frames.size(); ++i) {
      const NamedFrame& f = timeline_.frames[i];
      protos::Frame* frame = data->add_frames();
      frame->set_iid(i + 1);
      frame->set_function_name_id(intern(functions, f.text(), data->mutable_function_names()));
      if (!f.module.empty()) {
        uint64_t path = intern(modules, f.module, data->mutable_mapping_paths());
        if (path > static_cast<uint64_t>(data->mappings_size())) {
          protos::Mapping* mapping = data->add_mappings();
          mapping->set_iid(path);
          mapping->add_path_string_ids(path);
        }
        frame->set_mapping_id(path);
      }
      frame->set_rel_pc(f.offset);
      if (!f.file.empty()) {
        frame->set_source_path_iid(intern(sources, f.file, data->mutable_source_paths()));
        frame->set_line_number(static_cast<uint32_t>(f.line));
      }
    }
    for (size_t i = 0; i < timeline_.callstacks.size(); ++i) {
      protos::Callstack* stack = data->add_callstacks();
      stack->set_iid(i + 1);
      for (uint32_t frame : timeline_.callstacks[i]) stack->add_frame_ids(frame + 1);  // root first, as Perfetto's
    }
    finishPacket();
  }

  void writeSliceEvents() {
    SliceEdges edges(timeline_, index_);
    SliceEdge edge;
    while (edges.next(edge)) {
      // The packet borrows one event for each edge (a packet's Clear frees
      // the event it owns; this one keeps its allocations from edge to edge).
      startPacket(true, edge.ns);
      protos::TrackEvent* event = &event_;
      event->Clear();
      packet_.unsafe_arena_set_allocated_track_event(event);
      // Taken back however the packet is left (a failed write throws): the
      // packet must never free or keep a member.
      struct Return {
        protos::TracePacket& packet;
        ~Return() { packet.unsafe_arena_release_track_event(); }
      } giveBack{packet_};
      event->set_track_uuid(trackUuid(edge.track));
      if (edge.begin) {
        describeBegin(*event, timeline_.slices[edge.slice]);
      } else {
        event->set_type(protos::TrackEvent::TYPE_SLICE_END);
        if (edge.cut) {
          protos::DebugAnnotation* note = event->add_debug_annotations();
          note->set_name("recorded_end_ns");
          note->set_int_value(edge.recordedEndNs);
        }
      }
      finishPacket();
    }
  }

  // Text as Perfetto requires it (UTF-8): ASCII, most of it, as it is;
  // anything else checked and repaired.
  template <class Set>
  static void setText(std::string_view text, Set&& set) {
    bool ascii = std::all_of(text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
    if (ascii) set(text.data(), text.size());
    else set(validUtf8(text));
  }

  static void describeBegin(protos::TrackEvent& event, const TimelineSlice& slice) {
    event.set_type(protos::TrackEvent::TYPE_SLICE_BEGIN);
    setText(slice.name, [&](auto&&... v) { event.set_name(v...); });
    if (!slice.category.empty()) setText(slice.category, [&](auto&&... v) { event.add_categories(v...); });
    for (const auto& [name, value] : slice.args) {
      protos::DebugAnnotation* annotation = event.add_debug_annotations();
      setText(name, [&](auto&&... v) { annotation->set_name(v...); });
      setText(value, [&](auto&&... v) { annotation->set_string_value(v...); });
    }
    // Perfetto wants an id in one of the two lists of an event, not both.
    if (slice.flowOut && slice.flowOut != slice.flowIn) event.add_flow_ids(slice.flowOut);
    if (slice.flowIn) event.add_terminating_flow_ids(slice.flowIn);
    if (slice.callstack) event.set_callstack_iid(slice.callstack);
  }

  const Timeline& timeline_;
  const TimelineIndex index_;
  OutputBuffer out_;
  protos::TracePacket packet_;  // reused: Clear() keeps its allocations
  protos::TrackEvent event_;    // lent to packet_ for each slice edge
  std::string serialized_;
  bool firstPacket_ = true;
};

}  // namespace

void writePerfettoTrace(const Timeline& timeline, std::ostream& out) {
  PerfettoTraceWriter(timeline, out).write();
}

}  // namespace gtap::readers
