#include "gtap/readers/timeline_builder.h"

#include <map>
#include <set>

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
    std::map<std::pair<uint32_t, uint64_t>, uint64_t> flowOfCall;
    for (const DeviceOp& op : ops) {
      auto call = madeBy(op);
      if (op.timed && call.second != ~uint64_t{0} && !flowOfCall.count(call)) flowOfCall[call] = nextFlow++;
    }
    c.forEachCall([&](const ApiCall& call) {
      if (!call.finished) return;
      auto track = threadTracks.find(call.thread);
      if (track == threadTracks.end()) return;
      TimelineSlice s;
      s.track = track->second;
      s.startNs = call.beginNs;
      s.endNs = call.endNs;
      s.name = c.functionName(call.function);
      s.category = "api";
      s.args.emplace_back("result", std::to_string(call.result));
      if (auto f = flowOfCall.find({call.thread, call.beginIndex}); f != flowOfCall.end()) s.flowOut = f->second;
      t.slices.push_back(std::move(s));
    });
    std::map<uint64_t, uint64_t> queueTracks;
    std::set<uint64_t> flowEnded;
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
      TimelineSlice s;
      s.track = it->second;
      s.startNs = op.startNs;
      s.endNs = op.endNs;
      s.name = op.name;
      s.category = opKindName(op.kind);
      if (op.kind == schema::DeviceOpKind::KERNEL) {
        s.args.emplace_back("groups", triple(op.groupCount));
        s.args.emplace_back("group size", triple(op.groupSize));
      }
      if (op.bytes) s.args.emplace_back("bytes", std::to_string(op.bytes));
      if (op.kind == schema::DeviceOpKind::COPY) s.args.emplace_back("direction", directionName(op.direction));
      if (op.halDispatch != DeviceOp::kNone) {
        s.args.emplace_back("IREE HAL dispatch", ops[op.halDispatch].name);
        s.args.emplace_back("HAL command buffer", std::to_string(ops[op.halDispatch].list));
      }
      // A flow has one end: a regular list executed again gets no second arrow.
      if (auto f = flowOfCall.find(madeBy(op)); f != flowOfCall.end() && !flowEnded.count(f->second)) {
        s.flowIn = f->second;
        flowEnded.insert(f->second);
      }
      t.slices.push_back(std::move(s));
    }
  }
  return t;
}

}  // namespace gtap::readers
