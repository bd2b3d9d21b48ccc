// Writes small profile captures (API calls, one device, device operations)
// with the format's own writer, so that reports are tested on captures whose
// every call and operation the test chose. The device's clock runs at 1 GHz
// from 0 at host time 0: device ticks are host nanoseconds.
#pragma once

#include <capnp/message.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "gtap/format/api_events.h"
#include "gtap/format/writer.h"

namespace gtap::test {

class ProfileCaptureBuilder {
 public:
  std::string mode = "api,kernels";  // FileInfo's mode ("" as older files leave it)
  std::string executable = "/usr/bin/app";
  std::string deviceName = "test GPU";
  size_t opsPerChunk = 0;  // device operations a chunk holds; 0: all in one

  // An outermost call of `function` on the one thread; calls must not overlap.
  void call(const std::string& function, int64_t beginNs, int64_t endNs) {
    calls_.push_back({functionId(function), beginNs, endNs});
  }
  // A kernel launch on the device submitted at `submitNs` that ran from
  // `startNs` to `endNs`, host clock.
  void kernel(const std::string& name, int64_t submitNs, int64_t startNs, int64_t endNs,
              std::array<uint32_t, 3> groups = {1, 1, 1}, std::array<uint32_t, 3> groupSize = {1, 1, 1}) {
    Op op;
    op.kind = schema::DeviceOpKind::KERNEL;
    op.kernel = kernelId(name);
    op.submitNs = submitNs;
    op.timed = true;
    op.startNs = startNs;
    op.endNs = endNs;
    op.groups = groups;
    op.groupSize = groupSize;
    ops_.push_back(op);
  }
  // A launch the device gave no times for, and why.
  void untimedKernel(const std::string& name, int64_t submitNs, const std::string& note) {
    Op op;
    op.kind = schema::DeviceOpKind::KERNEL;
    op.kernel = kernelId(name);
    op.submitNs = submitNs;
    op.note = note;
    ops_.push_back(op);
  }
  // A launch appended to a command list at `appendNs` that was never
  // executed: no submission, no device times.
  void appendedKernel(const std::string& name, int64_t appendNs) {
    Op op;
    op.kind = schema::DeviceOpKind::KERNEL;
    op.kernel = kernelId(name);
    op.appendNs = appendNs;
    ops_.push_back(op);
  }
  // An IREE HAL record into command buffer `buffer`: a "dispatch" of
  // `name`, or another operation ("queue_execute", "begin").
  void hal(const std::string& operation, uint64_t buffer, int64_t ns, const std::string& name = {}) {
    Op op;
    op.kind = operation == "dispatch" ? schema::DeviceOpKind::KERNEL : schema::DeviceOpKind::OTHER;
    op.recordedBy = schema::Api::IREE_HAL;
    op.operation = operation;
    op.list = buffer;
    if (!name.empty()) op.kernel = kernelId(name);
    op.appendNs = op.submitNs = ns;
    ops_.push_back(op);
  }

  // A named range on the one thread (gtap_range_push / pop), each written in
  // a ranges chunk of its own (format 1.9); `unmatchedPops` goes with the last.
  void range(const std::string& name, int64_t beginNs, int64_t endNs, uint32_t depth = 0, bool openAtEnd = false) {
    ranges_.push_back({name, beginNs, endNs, depth, openAtEnd});
  }
  uint64_t unmatchedPops = 0;

  // Writes the file; without `close` it ends with no trailer, as a killed
  // process leaves it. Returns an error or "".
  std::string write(const std::string& path, bool close = true) const {
    std::string error;
    auto w = format::CaptureWriter::create(path, error);
    if (!w) return error;
    {
      capnp::MallocMessageBuilder m;
      auto info = m.initRoot<schema::FileInfo>();
      info.setPid(4242);
      info.setExecutable(executable);
      info.setMode(mode);
      w->writeMessage(schema::ChunkKind::FILE_INFO, m);
    }
    {
      capnp::MallocMessageBuilder m;
      auto defs = m.initRoot<schema::Definitions>();
      auto fns = defs.initFunctions(static_cast<unsigned>(functions_.size()));
      unsigned i = 0;
      for (const auto& [name, id] : functions_) {
        fns[i].setId(id);
        fns[i].setApi(schema::Api::LEVEL_ZERO);
        fns[i++].setName(name);
      }
      auto threads = defs.initThreads(1);
      threads[0].setId(0);
      threads[0].setOsTid(4242);
      w->writeMessage(schema::ChunkKind::DEFINITIONS, m);
    }
    if (!calls_.empty()) {
      auto sorted = calls_;
      std::sort(sorted.begin(), sorted.end(), [](const Call& a, const Call& b) { return a.begin < b.begin; });
      std::vector<uint8_t> encoded(sorted.size() * 2 * format::ApiEventEncoder::kMaxEventBytes);
      format::ApiEventEncoder e(encoded.data(), sorted.front().begin);
      for (const auto& c : sorted) {
        e.add(format::ApiEventKind::callBegin, c.function, c.begin, 0);
        e.add(format::ApiEventKind::callEnd, c.function, c.end, 0);
      }
      capnp::MallocMessageBuilder m;
      auto ev = m.initRoot<schema::ApiEvents>();
      ev.setThread(0);
      ev.setBaseHostNs(sorted.front().begin);
      ev.setCount(e.count());
      ev.setEncoded(capnp::Data::Reader(e.data(), e.size()));
      w->writeMessage(schema::ChunkKind::API_EVENTS, m);
    }
    {
      capnp::MallocMessageBuilder m;
      auto d = m.initRoot<schema::Devices>();
      auto devs = d.initDevices(1);
      devs[0].setId(0);
      devs[0].setApi(schema::Api::LEVEL_ZERO);
      devs[0].setName(deviceName);
      devs[0].setTimerFrequencyHz(1000000000);
      devs[0].setKernelTimestampBits(64);
      devs[0].setGlobalTimestampBits(64);
      auto samples = d.initSamples(1);
      samples[0].setDevice(0);
      samples[0].setHostNs(0);
      samples[0].setDeviceTicks(0);
      w->writeMessage(schema::ChunkKind::DEVICES, m);
    }
    if (!kernels_.empty()) {
      capnp::MallocMessageBuilder m;
      auto created = m.initRoot<schema::Objects>().initCreated(static_cast<unsigned>(kernels_.size()));
      unsigned i = 0;
      for (const auto& [name, id] : kernels_) {
        created[i].setId(id);
        created[i].setKind(schema::ObjectKind::KERNEL);
        created[i].setDevice(0);
        created[i++].setName(name);
      }
      w->writeMessage(schema::ChunkKind::OBJECTS, m);
    }
    size_t perChunk = opsPerChunk ? opsPerChunk : ops_.size();
    for (size_t first = 0; first < ops_.size(); first += perChunk) {
      size_t count = std::min(perChunk, ops_.size() - first);
      capnp::MallocMessageBuilder m;
      auto list = m.initRoot<schema::DeviceOps>().initOps(static_cast<unsigned>(count));
      for (unsigned i = 0; i < count; ++i) {
        const Op& op = ops_[first + i];
        auto o = list[i];
        o.setKind(op.kind);
        o.setDevice(0);
        o.setQueue(op.recordedBy == schema::Api::IREE_HAL ? 0 : 1);
        o.setCommandList(op.list);
        o.setKernel(op.kernel);
        auto gc = o.initGroupCount(3);
        auto gs = o.initGroupSize(3);
        for (unsigned k = 0; k < 3; ++k) {
          gc.set(k, op.groups[k]);
          gs.set(k, op.groupSize[k]);
        }
        o.setAppendNs(op.appendNs ? op.appendNs : op.submitNs);
        o.setSubmitNs(op.submitNs);
        o.setTimed(op.timed);
        o.setStartTicks(static_cast<uint64_t>(op.startNs));
        o.setEndTicks(static_cast<uint64_t>(op.endNs));
        if (!op.note.empty()) o.setNote(op.note);
        o.setRecordedBy(op.recordedBy);
        if (!op.operation.empty()) o.setOperation(op.operation);
      }
      w->writeMessage(schema::ChunkKind::DEVICE_OPS, m);
    }
    for (size_t i = 0; i < ranges_.size(); ++i) {
      const Range& r = ranges_[i];
      capnp::MallocMessageBuilder m;
      auto root = m.initRoot<schema::Ranges>();
      root.initNames(1).set(0, r.name);
      auto row = root.initRanges(1)[0];
      row.setThread(0);
      row.setName(0);
      row.setBeginNs(r.beginNs);
      row.setEndNs(r.endNs);
      row.setDepth(r.depth);
      row.setOpenAtEnd(r.openAtEnd);
      if (i + 1 == ranges_.size()) root.setUnmatchedPops(unmatchedPops);
      w->writeMessage(schema::ChunkKind::RANGES, m);
    }
    if (close && !w->close(0, 0, 0, "exit")) return w->error();
    return w->ok() ? "" : w->error();
  }

 private:
  struct Call {
    uint32_t function;
    int64_t begin, end;
  };
  struct Op {
    schema::DeviceOpKind kind = schema::DeviceOpKind::KERNEL;
    schema::Api recordedBy = schema::Api::LEVEL_ZERO;
    std::string operation;
    uint64_t list = 0, kernel = 0;
    int64_t appendNs = 0, submitNs = 0, startNs = 0, endNs = 0;
    bool timed = false;
    std::string note;
    std::array<uint32_t, 3> groups{1, 1, 1}, groupSize{1, 1, 1};
  };
  uint32_t functionId(const std::string& name) {
    return functions_.emplace(name, static_cast<uint32_t>(functions_.size() + 1)).first->second;
  }
  uint64_t kernelId(const std::string& name) {
    return kernels_.emplace(name, static_cast<uint64_t>(kernels_.size() + 100)).first->second;
  }
  std::map<std::string, uint32_t> functions_;
  std::map<std::string, uint64_t> kernels_;
  std::vector<Call> calls_;
  std::vector<Op> ops_;
  struct Range {
    std::string name;
    int64_t beginNs, endNs;
    uint32_t depth;
    bool openAtEnd;
  };
  std::vector<Range> ranges_;
};

}  // namespace gtap::test
