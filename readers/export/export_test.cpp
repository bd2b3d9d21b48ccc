// Timeline exporters: a two-process timeline written as Chrome JSON and as a
// Perfetto trace, then read back (nlohmann-json; the generated protobuf
// classes; protoc --decode) and compared with what went in.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <streambuf>
#include <string>
#include <vector>

#include "gtap/readers/timeline.h"
#include "perfetto_trace.pb.h"

namespace {

using gtap::readers::Timeline;
using gtap::readers::TimelineArg;
using gtap::readers::TimelineSlice;
using gtap::readers::TimelineTrack;
using nlohmann::json;
namespace protos = perfetto::protos;

constexpr int64_t T = 1'000'000'000'123'456;  // about 11.6 days of uptime, odd digits
constexpr uint64_t kBigFlow = (uint64_t{1} << 60) + 5;

// Text that needs escaping in JSON, and bytes that are not UTF-8 (a stray
// 0xFF, an overlong '/', a sequence cut short) with what each must become.
const std::string kProcessNameA = "rank 0 (pid 4100) ./app \"quoted\" \\ path";
const std::string kWorkerName = "worker\t\"7\"";
const std::string kRawNote = "tab\there\nline \x01 ctl \xC2\xB5s \xFF bad \xC0\xAF end \xE2\x82";
const std::string kCleanNote =
    "tab\there\nline \x01 ctl \xC2\xB5s \xEF\xBF\xBD bad \xEF\xBF\xBD\xEF\xBF\xBD end "
    "\xEF\xBF\xBD\xEF\xBF\xBD";
const std::string kRawKernel = "vec\"add\"\\n";

std::string tempPath(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("gtap-export-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

std::string readAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TimelineTrack hostTrack(uint64_t id, uint32_t pid, std::string processName, uint32_t tid,
                        std::string name, int32_t sortIndex) {
  return {id, TimelineTrack::Kind::hostThread, pid, std::move(processName), tid, std::move(name),
          sortIndex};
}

TimelineTrack queueTrack(uint64_t id, uint32_t pid, std::string processName, std::string name,
                         int32_t sortIndex) {
  return {id, TimelineTrack::Kind::deviceQueue, pid, std::move(processName), 0, std::move(name),
          sortIndex};
}

// What the test timelines' slices point into (a Timeline's own store would
// do the same; these slices are made before their timeline).
gtap::readers::OpStore& testStore() {
  static gtap::readers::OpStore store;
  return store;
}

std::span<const TimelineArg> args(std::initializer_list<TimelineArg> list) {
  auto out = testStore().allocate<TimelineArg>(list.size());
  size_t i = 0;
  for (const TimelineArg& a : list) out[i++] = {testStore().intern(a.first), testStore().intern(a.second)};
  return out;
}

TimelineSlice slice(uint64_t track, int64_t start, int64_t end, std::string_view name,
                    std::string_view category, uint64_t flowOut = 0, uint64_t flowIn = 0) {
  TimelineSlice s;
  s.track = track;
  s.startNs = start;
  s.endNs = end;
  s.name = testStore().intern(name);
  s.category = testStore().intern(category);
  s.flowOut = flowOut;
  s.flowIn = flowIn;
  return s;
}

// Two processes. Process A: main thread with nested calls (one sharing its
// parent's start), adjacent and zero-length calls; a worker thread; a queue.
// Process B: main thread and an unnamed queue holding two slices that overlap
// without nesting. Three flows, one with an id too large for a double. Slices
// are deliberately not in time order.
Timeline sampleTimeline() {
  const std::string nameB = "rank 1 (pid 5200) ./app";
  Timeline t;
  // B's queue comes before B's main thread: sort indexes, not list order, rank them.
  t.tracks = {hostTrack(10, 4100, kProcessNameA, 4100, "main", 0),
              hostTrack(11, 4100, kProcessNameA, 4107, kWorkerName, 1),
              queueTrack(12, 4100, kProcessNameA, "gtap simulated GPU queue 0", 2),
              queueTrack(21, 5200, nameB, "", 1),
              hostTrack(20, 5200, nameB, 5200, "main", 0)};

  TimelineSlice launch = slice(10, T + 2000, T + 9001, "zeCommandListAppendLaunchKernel", "api", 1);
  launch.args = args({{"kernel", kRawKernel}, {"note", kRawNote}});
  TimelineSlice kernel = slice(12, T + 9500, T + 20000, "vec_add", "kernel", 0, 1);
  kernel.args = args({{"global size", "1024"}});
  t.slices = {
      slice(10, T + 2600, T + 2700, "zeDeep", "api"),
      slice(10, T + 2500, T + 3000, "zeKernelSetArgumentValue", "api"),
      launch,
      slice(10, T + 2500, T + 2550, "zeSameStartChild", "api"),
      slice(10, T + 0, T + 1000, "zeInit", "api"),
      slice(10, T + 11000, T + 12000, "zeAdjacentB", "api"),
      slice(10, T + 10000, T + 11000, "zeAdjacentA", "api"),
      slice(10, T + 12000, T + 12000, "zeZeroLength", "api"),
      slice(11, T + 5000, T + 6000, "zeCommandQueueExecuteCommandLists", "api", 2),
      kernel,
      slice(12, T + 20000, T + 21000, "copy", "copy", 0, 2),
      slice(20, T + 100, T + 200, "zeInitB", "api"),
      slice(20, T + 300, T + 400, "launchB", "api", kBigFlow),
      slice(21, T + 500, T + 800, "kernelB", "kernel", 0, kBigFlow),
      slice(21, T + 1999, T + 3000, "overlapSecond", "kernel"),
      slice(21, T + 1000, T + 2000, "overlapFirst", "kernel"),
  };
  return t;
}

std::string cleanText(std::string_view raw) { return raw == kRawNote ? kCleanNote : std::string(raw); }

const TimelineSlice& sliceNamed(const Timeline& t, const std::string& name) {
  for (const auto& s : t.slices) {
    if (s.name == name) return s;
  }
  throw std::out_of_range("no slice " + name);
}

const TimelineTrack& trackWithId(const Timeline& t, uint64_t id) {
  for (const auto& track : t.tracks) {
    if (track.id == id) return track;
  }
  throw std::out_of_range("no track " + std::to_string(id));
}

int64_t nsFromMicros(const json& value) { return std::llround(value.get<double>() * 1000.0); }

// ---------------------------------------------------------------- Chrome JSON

json writeAndParseChrome(const Timeline& t, const std::string& path, std::string* text = nullptr) {
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    gtap::readers::writeChromeTrace(t, out);
    EXPECT_TRUE(out.good());
  }
  std::string content = readAll(path);
  if (text) *text = content;
  return json::parse(content);  // throws, failing the test, on invalid JSON
}

TEST(ChromeTrace, SlicesMetadataAndFlows) {
  const Timeline t = sampleTimeline();
  std::string text;
  const json doc = writeAndParseChrome(t, tempPath("trace.json"), &text);
  ASSERT_TRUE(doc.is_object());
  EXPECT_EQ(doc.at("displayTimeUnit"), "ns");
  const json& events = doc.at("traceEvents");
  ASSERT_TRUE(events.is_array());

  std::map<uint32_t, std::string> processNames;
  std::map<uint32_t, int64_t> processSort;
  std::map<std::pair<uint32_t, uint32_t>, std::string> threadNames;
  std::map<std::pair<uint32_t, uint32_t>, int64_t> threadSort;
  std::map<std::string, json> sliceEvents;
  std::map<std::string, size_t> slicePosition;
  for (size_t i = 0; i < events.size(); ++i) {
    const json& e = events[i];
    const std::string ph = e.at("ph");
    const uint32_t pid = e.at("pid");
    if (ph == "M") {
      const std::string name = e.at("name");
      if (name == "process_name") {
        EXPECT_TRUE(processNames.emplace(pid, e.at("args").at("name")).second);
      } else if (name == "process_sort_index") {
        processSort[pid] = e.at("args").at("sort_index");
      } else if (name == "thread_name") {
        threadNames[{pid, e.at("tid")}] = e.at("args").at("name");
      } else if (name == "thread_sort_index") {
        threadSort[{pid, e.at("tid")}] = e.at("args").at("sort_index");
      } else {
        ADD_FAILURE() << "unexpected metadata " << e.dump();
      }
    } else if (ph == "X") {
      const std::string name = e.at("name");
      EXPECT_TRUE(sliceEvents.emplace(name, e).second) << name;
      slicePosition[name] = i;
    }
  }

  EXPECT_EQ(processNames, (std::map<uint32_t, std::string>{{4100, kProcessNameA},
                                                           {5200, "rank 1 (pid 5200) ./app"}}));
  EXPECT_EQ(processSort, (std::map<uint32_t, int64_t>{{4100, 0}, {5200, 1}}));

  // Every slice, on its process and thread, with its timing to the nanosecond.
  ASSERT_EQ(sliceEvents.size(), t.slices.size());
  std::map<uint64_t, uint32_t> tidOfTrack;
  for (const TimelineSlice& s : t.slices) {
    SCOPED_TRACE(s.name);
    const json& e = sliceEvents.at(std::string(s.name));
    const TimelineTrack& track = trackWithId(t, s.track);
    EXPECT_EQ(e.at("pid"), track.pid);
    const uint32_t tid = e.at("tid");
    if (track.kind == TimelineTrack::Kind::hostThread) {
      EXPECT_EQ(tid, track.tid);
    } else {
      EXPECT_GE(tid, 1u << 22) << "a queue's tid must not be a possible OS tid";
    }
    auto [known, added] = tidOfTrack.emplace(s.track, tid);
    EXPECT_EQ(known->second, tid) << "one tid per track";
    EXPECT_EQ(e.at("cat"), std::string(s.category));
    EXPECT_EQ(nsFromMicros(e.at("ts")), s.startNs);
    EXPECT_EQ(nsFromMicros(e.at("dur")), s.endNs - s.startNs);
    json expectedArgs = json::object();
    for (const auto& [k, v] : s.args) expectedArgs[std::string(k)] = cleanText(v);
    EXPECT_EQ(e.at("args"), expectedArgs);
  }
  // The digits themselves are exact: 2000 ns after T.
  EXPECT_NE(text.find("\"ts\":1000000000125.456,"), std::string::npos);
  EXPECT_NE(text.find("\"dur\":7.001,"), std::string::npos);

  // Queue tids are distinct from each other and from every host tid.
  std::set<uint32_t> tids;
  for (const auto& [id, tid] : tidOfTrack) EXPECT_TRUE(tids.insert(tid).second);

  // Thread names and sort order for every track, host and queue.
  for (const TimelineTrack& track : t.tracks) {
    SCOPED_TRACE(track.id);
    const std::pair<uint32_t, uint32_t> key{track.pid, tidOfTrack.at(track.id)};
    const std::string expected = track.name.empty() ? "device queue " + std::to_string(track.id)
                                                    : track.name;
    EXPECT_EQ(threadNames.at(key), expected);
    EXPECT_EQ(threadSort.at(key), track.sortIndex);
  }
  EXPECT_EQ(threadNames.size(), t.tracks.size());

  // Flows: an "s" at the source slice and an "f" bound to the enclosing slice
  // at the destination, paired by id, each after the slice it binds to.
  struct FlowEnds {
    std::vector<json> starts, finishes;
    std::vector<size_t> startPos, finishPos;
  };
  std::map<std::string, FlowEnds> flows;
  for (size_t i = 0; i < events.size(); ++i) {
    const json& e = events[i];
    if (e.at("ph") == "s") {
      flows[e.at("id").dump()].starts.push_back(e);
      flows[e.at("id").dump()].startPos.push_back(i);
    } else if (e.at("ph") == "f") {
      EXPECT_EQ(e.at("bp"), "e");
      flows[e.at("id").dump()].finishes.push_back(e);
      flows[e.at("id").dump()].finishPos.push_back(i);
    }
  }
  struct ExpectedFlow {
    std::string id, from, to;
  };
  const std::vector<ExpectedFlow> expectedFlows = {
      {"1", "zeCommandListAppendLaunchKernel", "vec_add"},
      {"2", "zeCommandQueueExecuteCommandLists", "copy"},
      {"\"0x1000000000000005\"", "launchB", "kernelB"}};
  EXPECT_EQ(flows.size(), expectedFlows.size());
  for (const ExpectedFlow& expected : expectedFlows) {
    SCOPED_TRACE(expected.id);
    ASSERT_EQ(flows.count(expected.id), 1u);
    const FlowEnds& ends = flows.at(expected.id);
    ASSERT_EQ(ends.starts.size(), 1u);
    ASSERT_EQ(ends.finishes.size(), 1u);
    const json& s = ends.starts[0];
    const json& f = ends.finishes[0];
    EXPECT_EQ(s.at("cat"), f.at("cat"));
    EXPECT_EQ(s.at("name"), f.at("name"));
    const json& from = sliceEvents.at(expected.from);
    const json& to = sliceEvents.at(expected.to);
    EXPECT_EQ(s.at("pid"), from.at("pid"));
    EXPECT_EQ(s.at("tid"), from.at("tid"));
    EXPECT_EQ(nsFromMicros(s.at("ts")), sliceNamed(t, expected.from).startNs);
    EXPECT_EQ(f.at("pid"), to.at("pid"));
    EXPECT_EQ(f.at("tid"), to.at("tid"));
    EXPECT_EQ(nsFromMicros(f.at("ts")), sliceNamed(t, expected.to).startNs);
    EXPECT_GT(ends.startPos[0], slicePosition.at(expected.from));
    EXPECT_GT(ends.finishPos[0], slicePosition.at(expected.to));
  }
}

TEST(ChromeTrace, EmptyTimeline) {
  const json doc = writeAndParseChrome(Timeline{}, tempPath("empty.json"));
  EXPECT_EQ(doc.at("traceEvents"), json::array());
  EXPECT_EQ(doc.at("displayTimeUnit"), "ns");
}

// ------------------------------------------------------------------ Perfetto

protos::Trace writeAndParsePerfetto(const Timeline& t, const std::string& path) {
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    gtap::readers::writePerfettoTrace(t, out);
    EXPECT_TRUE(out.good());
  }
  protos::Trace trace;
  EXPECT_TRUE(trace.ParseFromString(readAll(path)));
  return trace;
}

// Decodes `tracePath` with protoc and the exporter's schema; returns the text.
std::string protocDecode(const std::string& tracePath) {
  const std::string proto = GTAP_TEST_PERFETTO_PROTO;
  const std::string dir = std::filesystem::path(proto).parent_path().string();
  const std::string outPath = tracePath + ".txt";
  const std::string command = std::string("'") + GTAP_TEST_PROTOC + "' --proto_path='" + dir +
                              "' --decode=perfetto.protos.Trace '" + proto + "' < '" + tracePath +
                              "' > '" + outPath + "' 2>&1";
  const int status = std::system(command.c_str());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << command << "\n" << readAll(outPath);
  return readAll(outPath);
}

struct ReplayedSlice {
  uint64_t trackUuid = 0;
  int64_t startNs = 0, endNs = 0;
  protos::TrackEvent begin;
  protos::TrackEvent end;
};

TEST(PerfettoTrace, TracksSlicesAndFlows) {
  const Timeline t = sampleTimeline();
  const std::string path = tempPath("trace.perfetto-trace");
  const protos::Trace trace = writeAndParsePerfetto(t, path);
  ASSERT_GT(trace.packet_size(), 0);

  // One writer sequence: the first packet starts it clean, the rest depend on it.
  const uint32_t sequence = trace.packet(0).trusted_packet_sequence_id();
  EXPECT_NE(sequence, 0u);
  EXPECT_EQ(trace.packet(0).sequence_flags(), protos::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED);
  EXPECT_TRUE(trace.packet(0).first_packet_on_sequence());
  for (int i = 1; i < trace.packet_size(); ++i) {
    EXPECT_EQ(trace.packet(i).trusted_packet_sequence_id(), sequence);
    EXPECT_EQ(trace.packet(i).sequence_flags(), protos::TracePacket::SEQ_NEEDS_INCREMENTAL_STATE);
    EXPECT_FALSE(trace.packet(i).first_packet_on_sequence());
  }

  // Track hierarchy: root, one track per process, host threads and queues under them.
  std::map<uint64_t, protos::TrackDescriptor> descriptors;
  std::map<uint32_t, uint64_t> processUuid;
  std::map<uint64_t, uint64_t> uuidOfTrack;  // timeline track id -> uuid
  int firstEvent = -1;
  for (int i = 0; i < trace.packet_size(); ++i) {
    const protos::TracePacket& p = trace.packet(i);
    if (p.has_track_event()) {
      if (firstEvent < 0) firstEvent = i;
      continue;
    }
    ASSERT_TRUE(p.has_track_descriptor());
    EXPECT_EQ(firstEvent, -1) << "descriptors come before events";
    EXPECT_EQ(p.timestamp(), static_cast<uint64_t>(T));
    EXPECT_EQ(p.timestamp_clock_id(), 3u);
    const protos::TrackDescriptor& d = p.track_descriptor();
    EXPECT_TRUE(descriptors.emplace(d.uuid(), d).second) << "uuid " << d.uuid() << " repeated";
    if (d.has_process()) {
      EXPECT_FALSE(d.has_parent_uuid());
      processUuid[static_cast<uint32_t>(d.process().pid())] = d.uuid();
    }
  }
  ASSERT_EQ(descriptors.count(0), 1u);
  EXPECT_EQ(descriptors.at(0).process_ordering(),
            protos::TrackDescriptor::PROCESS_ORDERING_EXPLICIT);
  EXPECT_EQ(descriptors.at(0).thread_ordering(), protos::TrackDescriptor::THREAD_ORDERING_EXPLICIT);
  ASSERT_EQ(processUuid.size(), 2u);
  EXPECT_EQ(descriptors.at(processUuid.at(4100)).process().process_name(), kProcessNameA);
  EXPECT_EQ(descriptors.at(processUuid.at(4100)).sibling_order_rank(), 0);
  EXPECT_EQ(descriptors.at(processUuid.at(5200)).process().process_name(),
            "rank 1 (pid 5200) ./app");
  EXPECT_EQ(descriptors.at(processUuid.at(5200)).sibling_order_rank(), 1);
  EXPECT_EQ(descriptors.size(), 1 + 2 + t.tracks.size());

  for (const TimelineTrack& track : t.tracks) {
    SCOPED_TRACE(track.id);
    const protos::TrackDescriptor* match = nullptr;
    for (const auto& [uuid, d] : descriptors) {
      if (d.has_process() || uuid == 0) continue;
      const bool same = track.kind == TimelineTrack::Kind::hostThread
                            ? d.has_thread() && d.thread().tid() == track.tid
                            : !d.has_thread() && d.parent_uuid() == processUuid.at(track.pid) &&
                                  d.name() == (track.name.empty()
                                                   ? "device queue " + std::to_string(track.id)
                                                   : track.name);
      if (same) {
        EXPECT_EQ(match, nullptr);
        match = &d;
      }
    }
    ASSERT_NE(match, nullptr);
    EXPECT_NE(match->uuid(), 0u);
    EXPECT_EQ(match->parent_uuid(), processUuid.at(track.pid));
    EXPECT_EQ(match->sibling_order_rank(), track.sortIndex);
    if (track.kind == TimelineTrack::Kind::hostThread) {
      EXPECT_EQ(match->thread().pid(), static_cast<int32_t>(track.pid));
      EXPECT_EQ(match->thread().thread_name(), track.name);
    } else {
      EXPECT_EQ(match->sibling_merge_behavior(),
                protos::TrackDescriptor::SIBLING_MERGE_BEHAVIOR_NONE);
    }
    uuidOfTrack[track.id] = match->uuid();
  }

  // Replay begin/end per track: every end closes the innermost open slice,
  // times never go back (per track, and across the file), nothing stays open.
  std::map<uint64_t, std::vector<ReplayedSlice>> open;
  std::map<std::string, ReplayedSlice> done;
  uint64_t lastTime = 0;
  ASSERT_GE(firstEvent, 0);
  for (int i = firstEvent; i < trace.packet_size(); ++i) {
    const protos::TracePacket& p = trace.packet(i);
    ASSERT_TRUE(p.has_track_event()) << i;
    ASSERT_TRUE(p.has_timestamp());
    EXPECT_EQ(p.timestamp_clock_id(), 3u);
    EXPECT_GE(p.timestamp(), lastTime);
    lastTime = p.timestamp();
    const protos::TrackEvent& e = p.track_event();
    ASSERT_EQ(descriptors.count(e.track_uuid()), 1u);
    auto& stack = open[e.track_uuid()];
    if (e.type() == protos::TrackEvent::TYPE_SLICE_BEGIN) {
      ReplayedSlice r;
      r.trackUuid = e.track_uuid();
      r.startNs = static_cast<int64_t>(p.timestamp());
      r.begin = e;
      stack.push_back(r);
    } else {
      ASSERT_EQ(e.type(), protos::TrackEvent::TYPE_SLICE_END);
      ASSERT_FALSE(stack.empty()) << "end without begin at packet " << i;
      ReplayedSlice r = stack.back();
      stack.pop_back();
      r.endNs = static_cast<int64_t>(p.timestamp());
      r.end = e;
      EXPECT_TRUE(done.emplace(r.begin.name(), r).second) << r.begin.name();
    }
  }
  for (const auto& [uuid, stack] : open) EXPECT_TRUE(stack.empty()) << "open slices on " << uuid;

  ASSERT_EQ(done.size(), t.slices.size());
  for (const TimelineSlice& s : t.slices) {
    SCOPED_TRACE(s.name);
    const ReplayedSlice& r = done.at(std::string(s.name));
    EXPECT_EQ(r.trackUuid, uuidOfTrack.at(s.track));
    EXPECT_EQ(r.startNs, s.startNs);
    ASSERT_EQ(r.begin.categories_size(), 1);
    EXPECT_EQ(r.begin.categories(0), s.category);
    ASSERT_EQ(r.begin.debug_annotations_size(), static_cast<int>(s.args.size()));
    for (size_t a = 0; a < s.args.size(); ++a) {
      EXPECT_EQ(r.begin.debug_annotations(static_cast<int>(a)).name(), s.args[a].first);
      EXPECT_EQ(r.begin.debug_annotations(static_cast<int>(a)).string_value(),
                cleanText(s.args[a].second));
    }
    if (s.name == "overlapFirst") {
      // Overlaps the next slice on its queue without enclosing it: cut where
      // that one begins, the recorded end kept on the end event.
      EXPECT_EQ(r.endNs, T + 1999);
      ASSERT_EQ(r.end.debug_annotations_size(), 1);
      EXPECT_EQ(r.end.debug_annotations(0).name(), "recorded_end_ns");
      EXPECT_EQ(r.end.debug_annotations(0).int_value(), s.endNs);
    } else {
      EXPECT_EQ(r.endNs, s.endNs);
      EXPECT_EQ(r.end.debug_annotations_size(), 0);
    }
    const std::vector<uint64_t> flowOut(r.begin.flow_ids().begin(), r.begin.flow_ids().end());
    const std::vector<uint64_t> flowIn(r.begin.terminating_flow_ids().begin(),
                                       r.begin.terminating_flow_ids().end());
    EXPECT_EQ(flowOut, s.flowOut ? std::vector<uint64_t>{s.flowOut} : std::vector<uint64_t>{});
    EXPECT_EQ(flowIn, s.flowIn ? std::vector<uint64_t>{s.flowIn} : std::vector<uint64_t>{});
  }

  // The schema subset decodes the file with protoc itself.
  const std::string decoded = protocDecode(path);
  EXPECT_NE(decoded.find("type: TYPE_SLICE_BEGIN"), std::string::npos) << decoded;
  EXPECT_NE(decoded.find("name: \"zeCommandListAppendLaunchKernel\""), std::string::npos);
  EXPECT_NE(decoded.find("process_name: \"rank 1 (pid 5200) ./app\""), std::string::npos);
  EXPECT_NE(decoded.find("timestamp_clock_id: 3"), std::string::npos);
  EXPECT_NE(decoded.find("terminating_flow_ids: 1152921504606846981"), std::string::npos);
}

TEST(PerfettoTrace, EmptyTimeline) {
  const std::string path = tempPath("empty.perfetto-trace");
  const protos::Trace trace = writeAndParsePerfetto(Timeline{}, path);
  ASSERT_EQ(trace.packet_size(), 1);
  EXPECT_TRUE(trace.packet(0).has_track_descriptor());
  EXPECT_EQ(trace.packet(0).track_descriptor().uuid(), 0u);
  EXPECT_NE(protocDecode(path).find("track_descriptor"), std::string::npos);
}

// ----------------------------------------------------------- both exporters

TEST(TimelineExport, RejectsBrokenTimelineBeforeWriting) {
  Timeline unknownTrack = sampleTimeline();
  unknownTrack.slices.push_back(slice(99, T, T + 1, "lost", "api"));
  Timeline backwards = sampleTimeline();
  backwards.slices.push_back(slice(10, T + 5, T + 1, "backwards", "api"));
  Timeline duplicateTrack = sampleTimeline();
  duplicateTrack.tracks.push_back(hostTrack(10, 4100, kProcessNameA, 4200, "again", 3));

  for (const Timeline* t : {&unknownTrack, &backwards, &duplicateTrack}) {
    std::ostringstream chrome, perfetto;
    EXPECT_THROW(gtap::readers::writeChromeTrace(*t, chrome), std::invalid_argument);
    EXPECT_THROW(gtap::readers::writePerfettoTrace(*t, perfetto), std::invalid_argument);
    EXPECT_TRUE(chrome.str().empty());
    EXPECT_TRUE(perfetto.str().empty());
  }
  try {
    std::ostringstream out;
    gtap::readers::writeChromeTrace(unknownTrack, out);
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("track 99"), std::string::npos) << e.what();
  }
}

// Counts what reaches the stream and how much arrives in one call.
class WriteSizeRecorder : public std::streambuf {
 public:
  size_t total = 0, largest = 0, calls = 0;

 protected:
  std::streamsize xsputn(const char*, std::streamsize n) override {
    total += static_cast<size_t>(n);
    largest = std::max(largest, static_cast<size_t>(n));
    ++calls;
    return n;
  }
  int_type overflow(int_type c) override {
    if (!traits_type::eq_int_type(c, traits_type::eof())) xsputn(nullptr, 1);
    return traits_type::not_eof(c);
  }
};

TEST(TimelineExport, LargeTimelineIsStreamedInBlocks) {
  Timeline t;
  t.tracks = {hostTrack(1, 7, "big", 7, "main", 0), queueTrack(2, 7, "big", "queue", 1)};
  constexpr int kSlices = 200000;
  t.slices.reserve(kSlices);
  for (int i = 0; i < kSlices; ++i) {
    TimelineSlice s = slice(i % 2 ? 2 : 1, T + i * 100, T + i * 100 + 50,
                            "zeCommandListAppendLaunchKernel", "api", i % 2 ? 0 : i + 1,
                            i % 2 ? i : 0);
    s.args = args({{"index", std::to_string(i)}});
    t.slices.push_back(std::move(s));
  }
  for (bool chrome : {true, false}) {
    SCOPED_TRACE(chrome ? "chrome" : "perfetto");
    WriteSizeRecorder recorder;
    std::ostream out(&recorder);
    if (chrome) {
      gtap::readers::writeChromeTrace(t, out);
    } else {
      gtap::readers::writePerfettoTrace(t, out);
    }
    EXPECT_GT(recorder.total, size_t{8} << 20);
    EXPECT_LE(recorder.largest, size_t{1} << 20) << "output is handed over in blocks";
    EXPECT_GT(recorder.calls, 100u);
  }
}

}  // namespace
