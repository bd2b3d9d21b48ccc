#include "gtap/readers/timeline_builder.h"

#include <map>
#include <set>
#include <span>
#include <string_view>
#include <unordered_map>

namespace gtap::readers {

namespace {
std::string triple(const std::array<uint32_t, 3>& v) {
  return std::to_string(v[0]) + "," + std::to_string(v[1]) + "," + std::to_string(v[2]);
}
}  // namespace

Timeline buildTimeline(const std::vector<LoadedCapture>& captures) {
  Timeline t;
  uint64_t nextTrack = 1;
  uint64_t nextFlow = 1;
  // Viewers group tracks by pid; ranks on different hosts (or a pid reused over
  // time) may share one, so each capture gets a pid of its own in the timeline
  // and its real one stays in the process name.
  std::set<uint32_t> pidsUsed;
  for (const auto& lc : captures) {
    const Capture& c = *lc.capture;
    std::string processName = c.label();
    if (!c.process().executable.empty()) processName += " " + c.process().executable;
    uint32_t pid = c.process().pid;
    if (pidsUsed.count(pid)) {
      processName += " @" + c.process().hostname;
      while (pidsUsed.count(pid)) pid += 1u << 22;  // above Linux's pid_max
    }
    pidsUsed.insert(pid);
    std::map<uint32_t, uint64_t> threadTracks;
    for (const auto& [id, th] : c.threads()) {
      TimelineTrack track;
      track.id = nextTrack++;
      track.kind = TimelineTrack::Kind::hostThread;
      track.pid = pid;
      track.processName = processName;
      track.tid = th.osTid;
      track.name = th.name.empty() ? "thread " + std::to_string(th.osTid) : th.name;
      track.sortIndex = static_cast<int32_t>(id);
      threadTracks[id] = track.id;
      t.tracks.push_back(track);
    }
    // Flows: an append call (thread, begin index) to the operations it made;
    // for a device dispatch an IREE HAL dispatch became, the program's
    // queue_execute that submitted it.
    const auto& ops = lc.work.ops;
    auto madeBy = [&](const DeviceOp& op) {
      const DeviceOp& from = op.halSubmission != DeviceOp::kNone ? ops[op.halSubmission] : op;
      return std::make_pair(from.thread, from.appendIndex);
    };
    struct CallHash {
      size_t operator()(const std::pair<uint32_t, uint64_t>& k) const {
        return std::hash<uint64_t>()(k.second * 0x9e3779b97f4a7c15ull ^ k.first);
      }
    };
    // Flow ids are numbered in the order of the operations, as the calls
    // they start at are first met there.
    std::unordered_map<std::pair<uint32_t, uint64_t>, uint64_t, CallHash> flowOfCall;
    for (const DeviceOp& op : ops) {
      auto call = madeBy(op);
      if (op.timed && call.second != ~uint64_t{0} && flowOfCall.try_emplace(call, nextFlow).second) ++nextFlow;
    }
    // Per function, its interned name and a result's argument list (results
    // are few: each distinct one is kept once).
    std::unordered_map<uint32_t, std::string_view> functionNames;
    std::unordered_map<int64_t, std::span<const TimelineArg>> resultArgs;
    std::string_view api = t.text("api");
    c.forEachCallBatch([&](std::span<const ApiCall> calls) {
      for (const ApiCall& call : calls) {
        if (!call.finished) continue;
        auto track = threadTracks.find(call.thread);
        if (track == threadTracks.end()) continue;
        TimelineSlice& s = t.slices.emplace_back();
        s.track = track->second;
        s.startNs = call.beginNs;
        s.endNs = call.endNs;
        auto [name, newName] = functionNames.try_emplace(call.function);
        if (newName) name->second = t.text(c.functionName(call.function));
        s.name = name->second;
        s.category = api;
        auto [args, newResult] = resultArgs.try_emplace(call.result);
        if (newResult) args->second = t.args({{"result", std::to_string(call.result)}});
        s.args = args->second;
        if (!flowOfCall.empty())
          if (auto f = flowOfCall.find({call.thread, call.beginIndex}); f != flowOfCall.end()) s.flowOut = f->second;
      }
    });
    std::unordered_map<uint64_t, uint64_t> queueTracks;
    std::vector<bool> flowEnded;
    // The arguments of the ops of one kernel, shape and join, once.
    std::string lastArgsKey, argsKey;
    std::span<const TimelineArg> lastArgs;
    for (const DeviceOp& op : lc.work.ops) {
      if (!op.timed) continue;
      auto [it, fresh] = queueTracks.try_emplace(op.queue, 0);
      if (fresh) {
        TimelineTrack track;
        track.id = nextTrack++;
        track.kind = TimelineTrack::Kind::deviceQueue;
        track.pid = pid;
        track.processName = processName;
        track.name = lc.work.queueName(op.queue);
        track.sortIndex = 1000 + static_cast<int32_t>(queueTracks.size());
        it->second = track.id;
        t.tracks.push_back(track);
      }
      TimelineSlice& s = t.slices.emplace_back();
      s.track = it->second;
      s.startNs = op.startNs;
      s.endNs = op.endNs;
      s.name = t.text(op.name);
      s.category = opKindText(op.kind);
      // The arguments as text, interned whole when they differ from the last op's.
      TimelineArg list[6];
      size_t n = 0;
      std::string groups, groupSize, bytes, buffer;
      if (op.kind == schema::DeviceOpKind::KERNEL) {
        groups = triple(op.groupCount);
        groupSize = triple(op.groupSize);
        list[n++] = {"groups", groups};
        list[n++] = {"group size", groupSize};
      }
      if (op.bytes) {
        bytes = std::to_string(op.bytes);
        list[n++] = {"bytes", bytes};
      }
      std::string direction;
      if (op.kind == schema::DeviceOpKind::COPY) {
        direction = directionName(op.direction);
        list[n++] = {"direction", direction};
      }
      if (op.halDispatch != DeviceOp::kNone) {
        buffer = std::to_string(ops[op.halDispatch].list);
        list[n++] = {"IREE HAL dispatch", ops[op.halDispatch].name};
        list[n++] = {"HAL command buffer", buffer};
      }
      argsKey.clear();
      for (size_t a = 0; a < n; ++a) {
        argsKey.append(list[a].first).push_back('\0');
        argsKey.append(list[a].second).push_back('\0');
      }
      if (argsKey != lastArgsKey || lastArgs.size() != n) {
        auto stored = t.store->allocate<TimelineArg>(n);
        for (size_t a = 0; a < n; ++a) stored[a] = {t.text(list[a].first), t.text(list[a].second)};
        lastArgs = stored;
        std::swap(lastArgsKey, argsKey);
      }
      s.args = lastArgs;
      // A flow has one end: a regular list executed again gets no second arrow.
      if (auto f = flowOfCall.find(madeBy(op)); f != flowOfCall.end()) {
        if (flowEnded.size() <= f->second) flowEnded.resize(f->second + 1);
        if (!flowEnded[f->second]) {
          s.flowIn = f->second;
          flowEnded[f->second] = true;
        }
      }
    }
  }
  return t;
}

}  // namespace gtap::readers
