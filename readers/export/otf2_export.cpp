// The OTF2 export (otf2_export.h). Each capture's timeline is built on its
// own (several at once, gtap -j), then its slices are written in order as
// Enter and Leave events, a location's events by its own writer, closed once
// the capture is done; the global definitions (strings, regions, the system
// tree, location groups and locations, the clock) follow at the end.
#include "gtap/readers/otf2_export.h"

#include <otf2/otf2.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>

#include "gtap/readers/parallel.h"
#include "gtap/readers/timeline_builder.h"
#include "slice_edges.h"
#include "timeline_index.h"

namespace gtap::readers {

namespace {

thread_local std::string otf2Message;

OTF2_ErrorCode keepMessage(void*, const char*, uint64_t, const char*, OTF2_ErrorCode code, const char* format,
                           va_list va) {
  char text[512];
  std::vsnprintf(text, sizeof text, format, va);
  otf2Message = text;
  return code;
}

void check(OTF2_ErrorCode code, const char* what) {
  if (code == OTF2_SUCCESS) return;
  std::string message = std::string("OTF2: ") + what + ": " + OTF2_Error_GetDescription(code);
  if (!otf2Message.empty()) message += " (" + otf2Message + ")";
  throw Otf2Error(message);
}

OTF2_FlushType preFlush(void*, OTF2_FileType, OTF2_LocationRef, void*, bool) { return OTF2_FLUSH; }

// The definitions gathered while the events are written.
struct Definitions {
  std::unordered_map<std::string, OTF2_StringRef> strings;
  std::vector<std::string> stringOrder;
  struct Region {
    OTF2_StringRef name, category;
    OTF2_RegionRole role;
  };
  std::map<std::pair<std::string, std::string>, OTF2_RegionRef> regionIds;
  std::vector<Region> regions;
  struct Node {
    OTF2_StringRef name, kind;
    OTF2_SystemTreeNodeRef parent;
  };
  std::vector<Node> nodes;
  std::map<std::string, OTF2_SystemTreeNodeRef> hosts;
  struct Group {
    OTF2_StringRef name;
    OTF2_SystemTreeNodeRef node;
  };
  std::vector<Group> groups;
  struct Location {
    OTF2_StringRef name;
    OTF2_LocationType type;
    uint64_t events;
    OTF2_LocationGroupRef group;
  };
  std::vector<Location> locations;
  int64_t firstNs = std::numeric_limits<int64_t>::max(), lastNs = std::numeric_limits<int64_t>::min();

  OTF2_StringRef string(std::string_view s) {
    auto [it, added] = strings.try_emplace(std::string(s), static_cast<OTF2_StringRef>(strings.size()));
    if (added) stringOrder.push_back(it->first);
    return it->second;
  }
  OTF2_RegionRef region(std::string_view name, std::string_view category) {
    auto key = std::make_pair(std::string(name), std::string(category));
    auto it = regionIds.find(key);
    if (it != regionIds.end()) return it->second;
    OTF2_RegionRole role = OTF2_REGION_ROLE_FUNCTION;
    if (category == "copy" || category == "fill") role = OTF2_REGION_ROLE_DATA_TRANSFER;
    else if (category == "barrier") role = OTF2_REGION_ROLE_BARRIER;
    else if (category == "gtap") role = OTF2_REGION_ROLE_ARTIFICIAL;
    auto id = static_cast<OTF2_RegionRef>(regions.size());
    regions.push_back({string(name), string(category), role});
    regionIds.emplace(std::move(key), id);
    return id;
  }
  OTF2_SystemTreeNodeRef host(const std::string& name) {
    if (nodes.empty()) nodes.push_back({string("gtap"), string("machine"), OTF2_UNDEFINED_SYSTEM_TREE_NODE});
    auto [it, added] = hosts.try_emplace(name, static_cast<OTF2_SystemTreeNodeRef>(nodes.size()));
    if (added) nodes.push_back({string(name.empty() ? "unknown host" : name), string("node"), 0});
    return it->second;
  }
};

enum Attribute : OTF2_AttributeRef { kFlowOut = 0, kFlowIn = 1 };

// Writes one capture's timeline; its location ids follow those before.
void writeTimelineEvents(OTF2_Archive* archive, const Capture& capture, const Timeline& timeline,
                         Definitions& defs, uint64_t& flowBase, OTF2_AttributeList* attributes) {
  timeline_export::TimelineIndex index(timeline);
  OTF2_LocationGroupRef group = static_cast<OTF2_LocationGroupRef>(defs.groups.size());
  defs.groups.push_back({defs.string(capture.label()), defs.host(capture.process().hostname)});
  // The tracks in the order viewers show them.
  std::vector<uint32_t> order(timeline.tracks.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return timeline.tracks[a].sortIndex < timeline.tracks[b].sortIndex;
  });
  std::vector<OTF2_LocationRef> locationOf(timeline.tracks.size());
  std::vector<OTF2_EvtWriter*> writers(timeline.tracks.size(), nullptr);
  for (uint32_t t : order) {
    const TimelineTrack& track = timeline.tracks[t];
    locationOf[t] = defs.locations.size();
    OTF2_LocationType type = track.kind == TimelineTrack::Kind::deviceQueue ? OTF2_LOCATION_TYPE_ACCELERATOR_STREAM
                                                                             : OTF2_LOCATION_TYPE_CPU_THREAD;
    std::string name = track.name.empty() ? "thread " + std::to_string(track.tid) : track.name;
    defs.locations.push_back({defs.string(name), type, 0, group});
  }
  uint64_t flows = 0;
  timeline_export::SliceEdges edges(timeline, index);
  for (timeline_export::SliceEdge e; edges.next(e);) {
    OTF2_EvtWriter*& w = writers[e.track];
    if (!w) {
      w = OTF2_Archive_GetEvtWriter(archive, locationOf[e.track]);
      if (!w) check(OTF2_ERROR_MEM_ALLOC_FAILED, "an event writer");
    }
    const TimelineSlice& s = timeline.slices[e.slice];
    OTF2_RegionRef region = defs.region(s.name, s.category);
    auto time = static_cast<OTF2_TimeStamp>(e.ns);
    defs.firstNs = std::min(defs.firstNs, e.ns);
    defs.lastNs = std::max(defs.lastNs, e.ns);
    if (e.begin) {
      OTF2_AttributeList* list = nullptr;
      if (s.flowOut || s.flowIn) {
        list = attributes;
        if (s.flowOut) check(OTF2_AttributeList_AddUint64(list, kFlowOut, flowBase + s.flowOut), "an attribute");
        if (s.flowIn) check(OTF2_AttributeList_AddUint64(list, kFlowIn, flowBase + s.flowIn), "an attribute");
        flows = std::max({flows, s.flowOut, s.flowIn});
      }
      check(OTF2_EvtWriter_Enter(w, list, time, region), "an Enter event");
      if (list) OTF2_AttributeList_RemoveAllAttributes(list);
    } else {
      check(OTF2_EvtWriter_Leave(w, nullptr, time, region), "a Leave event");
    }
  }
  flowBase += flows;
  for (size_t t = 0; t < writers.size(); ++t) {
    if (!writers[t]) continue;
    uint64_t n = 0;
    check(OTF2_EvtWriter_GetNumberOfEvents(writers[t], &n), "counting events");
    defs.locations[locationOf[t]].events = n;
    check(OTF2_Archive_CloseEvtWriter(archive, writers[t]), "closing an event writer");
  }
}

struct ArchiveCloser {
  void operator()(OTF2_Archive* a) const { OTF2_Archive_Close(a); }
};

}  // namespace

Otf2Written writeOtf2(std::span<const Capture* const> captures, const std::string& directory,
                      std::vector<std::string>& notes) {
  OTF2_Error_RegisterCallback(keepMessage, nullptr);
  std::unique_ptr<OTF2_Archive, ArchiveCloser> archive(OTF2_Archive_Open(
      directory.c_str(), "traces", OTF2_FILEMODE_WRITE, 1024 * 1024, 4 * 1024 * 1024, OTF2_SUBSTRATE_POSIX,
      OTF2_COMPRESSION_NONE));
  if (!archive) check(OTF2_ERROR_FILE_CAN_NOT_OPEN, ("opening an archive in " + directory).c_str());
  OTF2_FlushCallbacks flush = {preFlush, nullptr};  // no BufferFlush records
  check(OTF2_Archive_SetFlushCallbacks(archive.get(), &flush, nullptr), "flush callbacks");
  check(OTF2_Archive_SetSerialCollectiveCallbacks(archive.get()), "collective callbacks");
  check(OTF2_Archive_SetCreator(archive.get(), "gtap"), "the creator");
  check(OTF2_Archive_OpenEvtFiles(archive.get()), "opening the event files");

  Definitions defs;
  uint64_t flowBase = 0;
  std::unique_ptr<OTF2_AttributeList, decltype(&OTF2_AttributeList_Delete)> attributes(OTF2_AttributeList_New(),
                                                                                       &OTF2_AttributeList_Delete);
  // Timelines built a few at once, written one at a time in the order given.
  std::vector<std::optional<Timeline>> timelines(captures.size());
  std::vector<std::vector<std::string>> captureNotes(captures.size());
  PartNotes joined(notes);
  forEachInParallel(
      captures.size(),
      [&](size_t i) { timelines[i] = buildTimeline(captures.subspan(i, 1), captureNotes[i]); },
      [&](size_t i) {
        writeTimelineEvents(archive.get(), *captures[i], *timelines[i], defs, flowBase, attributes.get());
        timelines[i].reset();
        joined.add(std::move(captureNotes[i]));
      });
  check(OTF2_Archive_CloseEvtFiles(archive.get()), "closing the event files");

  // A local definition file per location (empty: every definition is global).
  check(OTF2_Archive_OpenDefFiles(archive.get()), "opening the definition files");
  for (size_t l = 0; l < defs.locations.size(); ++l) {
    OTF2_DefWriter* w = OTF2_Archive_GetDefWriter(archive.get(), l);
    if (!w) check(OTF2_ERROR_MEM_ALLOC_FAILED, "a definition writer");
    check(OTF2_Archive_CloseDefWriter(archive.get(), w), "closing a definition writer");
  }
  check(OTF2_Archive_CloseDefFiles(archive.get()), "closing the definition files");

  OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(archive.get());
  if (!g) check(OTF2_ERROR_MEM_ALLOC_FAILED, "the global definition writer");
  int64_t first = defs.firstNs <= defs.lastNs ? defs.firstNs : 0;
  int64_t last = defs.firstNs <= defs.lastNs ? defs.lastNs : 0;
  check(OTF2_GlobalDefWriter_WriteClockProperties(g, 1000000000, static_cast<uint64_t>(first),
                                                  static_cast<uint64_t>(last - first) + 1, OTF2_UNDEFINED_TIMESTAMP),
        "the clock");
  OTF2_StringRef flowOut = defs.string("gtap launch"), flowIn = defs.string("gtap launched by");
  OTF2_StringRef flowOutText = defs.string("id of the device work this call launched (the same id on its Enter)");
  OTF2_StringRef flowInText = defs.string("id of the call that launched this device work (the same id on its Enter)");
  OTF2_StringRef empty = defs.string("");
  // Every string any definition below names is interned by now.
  for (size_t i = 0; i < defs.stringOrder.size(); ++i)
    check(OTF2_GlobalDefWriter_WriteString(g, static_cast<OTF2_StringRef>(i), defs.stringOrder[i].c_str()),
          "a string");
  check(OTF2_GlobalDefWriter_WriteAttribute(g, kFlowOut, flowOut, flowOutText, OTF2_TYPE_UINT64), "an attribute");
  check(OTF2_GlobalDefWriter_WriteAttribute(g, kFlowIn, flowIn, flowInText, OTF2_TYPE_UINT64), "an attribute");
  for (size_t r = 0; r < defs.regions.size(); ++r) {
    const auto& region = defs.regions[r];
    check(OTF2_GlobalDefWriter_WriteRegion(g, static_cast<OTF2_RegionRef>(r), region.name, region.name,
                                           region.category, region.role, OTF2_PARADIGM_USER, OTF2_REGION_FLAG_NONE,
                                           empty, 0, 0),
          "a region");
  }
  for (size_t n = 0; n < defs.nodes.size(); ++n)
    check(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, static_cast<OTF2_SystemTreeNodeRef>(n), defs.nodes[n].name,
                                                   defs.nodes[n].kind, defs.nodes[n].parent),
          "a system tree node");
  for (size_t i = 0; i < defs.groups.size(); ++i)
    check(OTF2_GlobalDefWriter_WriteLocationGroup(g, static_cast<OTF2_LocationGroupRef>(i), defs.groups[i].name,
                                                  OTF2_LOCATION_GROUP_TYPE_PROCESS, defs.groups[i].node,
                                                  OTF2_UNDEFINED_LOCATION_GROUP),
          "a location group");
  for (size_t l = 0; l < defs.locations.size(); ++l) {
    const auto& loc = defs.locations[l];
    check(OTF2_GlobalDefWriter_WriteLocation(g, l, loc.name, loc.type, loc.events, loc.group), "a location");
  }
  check(OTF2_Archive_CloseGlobalDefWriter(archive.get(), g), "closing the global definitions");
  OTF2_ErrorCode closed = OTF2_Archive_Close(archive.release());
  check(closed, "closing the archive");

  Otf2Written written;
  written.locationGroups = defs.groups.size();
  written.locations = defs.locations.size();
  written.regions = defs.regions.size();
  for (const auto& l : defs.locations) written.events += l.events;
  return written;
}

}  // namespace gtap::readers
