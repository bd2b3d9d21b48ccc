// Writes small captures holding hardware counters and device metrics (format
// 1.7) with the format's own writer, so that the counter reports, exports and
// roofline are tested on values the test chose: one device whose clock runs
// at 1 GHz from 0 at host time 0 (device ticks are host nanoseconds), kernels
// on queue 1, counter sets, notes and device-metric series as given.
#pragma once

#include <capnp/message.h>

#include <array>
#include <bit>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "gtap/format/device_ops.h"
#include "gtap/format/writer.h"

namespace gtap::test {

class CounterCaptureBuilder {
 public:
  struct Counter {
    Counter(std::string n, std::string u = "", schema::CounterType t = schema::CounterType::UNSIGNED,
            std::string b = "")
        : name(std::move(n)), units(std::move(u)), type(t), block(std::move(b)) {}
    std::string name, units;
    schema::CounterType type;
    std::string block;
  };
  struct Set {
    Set(uint32_t i, std::string s, std::string g, std::vector<Counter> c, uint32_t p = 0, uint32_t ps = 1)
        : id(i), source(std::move(s)), group(std::move(g)), counters(std::move(c)), pass(p), passes(ps) {}
    uint32_t id;
    std::string source, group;
    std::vector<Counter> counters;
    uint32_t pass, passes;
  };
  struct Note {
    Note(std::string c, std::string r, uint32_t p = 0) : counter(std::move(c)), reason(std::move(r)), pass(p) {}
    std::string counter, reason;
    uint32_t pass;
  };
  struct Metric {
    Metric(std::string n, std::string u = "", bool c = false) : name(std::move(n)), units(std::move(u)), cumulative(c) {}
    std::string name, units;
    bool cumulative;
  };
  struct Series {
    Series(std::string s, uint64_t interval, std::vector<Metric> m, std::vector<int64_t> t, std::vector<double> v,
           std::string n = "")
        : source(std::move(s)), intervalNs(interval), metrics(std::move(m)), times(std::move(t)), values(std::move(v)),
          note(std::move(n)) {}
    std::string source;
    uint64_t intervalNs;
    std::vector<Metric> metrics;
    std::vector<int64_t> times;
    std::vector<double> values;
    std::string note;
  };

  uint32_t pid = 4242;
  std::string deviceName = "counting GPU";
  schema::Api api = schema::Api::LEVEL_ZERO;
  double peakFlops = 0, peakBytes = 0;
  std::string requested;
  std::vector<Set> sets;
  std::vector<Note> notes;
  std::vector<Series> series;

  // A kernel that ran from `startNs` to `endNs` with `groups` work-groups;
  // measured with counter set `set` (0: not measured) holding `values` (as
  // doubles; stored as the set's type says, or as given when the set is
  // unknown).
  void kernel(const std::string& name, int64_t startNs, int64_t endNs, uint32_t set = 0,
              std::vector<double> values = {}, std::array<uint32_t, 3> groups = {1, 1, 1}) {
    Op op;
    op.kernel = kernelId(name);
    op.startNs = startNs;
    op.endNs = endNs;
    op.set = set;
    op.values = std::move(values);
    op.groups = groups;
    ops_.push_back(std::move(op));
  }

  std::string write(const std::string& path) const {
    std::string error;
    auto w = format::CaptureWriter::create(path, error);
    if (!w) return error;
    {
      capnp::MallocMessageBuilder m;
      auto info = m.initRoot<schema::FileInfo>();
      info.setPid(pid);
      info.setExecutable("/usr/bin/app");
      info.setMode("api,kernels");
      w->writeMessage(schema::ChunkKind::FILE_INFO, m);
    }
    {
      capnp::MallocMessageBuilder m;
      auto d = m.initRoot<schema::Devices>();
      auto devs = d.initDevices(1);
      devs[0].setId(0);
      devs[0].setApi(api);
      devs[0].setName(deviceName);
      devs[0].setTimerFrequencyHz(1000000000);
      devs[0].setKernelTimestampBits(64);
      devs[0].setGlobalTimestampBits(64);
      devs[0].setPeakFlopsPerSecond(peakFlops);
      devs[0].setPeakBytesPerSecond(peakBytes);
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
    if (!sets.empty() || !notes.empty() || !requested.empty()) {
      capnp::MallocMessageBuilder m;
      auto root = m.initRoot<schema::Counters>();
      auto ss = root.initSets(static_cast<unsigned>(sets.size()));
      for (unsigned i = 0; i < sets.size(); ++i) {
        ss[i].setId(sets[i].id);
        ss[i].setDevice(0);
        ss[i].setSource(sets[i].source);
        ss[i].setGroup(sets[i].group);
        ss[i].setPass(sets[i].pass);
        ss[i].setPasses(sets[i].passes);
        auto cs = ss[i].initCounters(static_cast<unsigned>(sets[i].counters.size()));
        for (unsigned k = 0; k < sets[i].counters.size(); ++k) {
          cs[k].setName(sets[i].counters[k].name);
          cs[k].setUnits(sets[i].counters[k].units);
          cs[k].setType(sets[i].counters[k].type);
          cs[k].setBlock(sets[i].counters[k].block);
        }
      }
      auto ns = root.initNotes(static_cast<unsigned>(notes.size()));
      for (unsigned i = 0; i < notes.size(); ++i) {
        ns[i].setCounter(notes[i].counter);
        ns[i].setDevice(0);
        ns[i].setReason(notes[i].reason);
        ns[i].setPass(notes[i].pass);
      }
      if (!requested.empty()) root.setRequested(requested);
      w->writeMessage(schema::ChunkKind::COUNTERS, m);
    }
    for (const auto& s : series) {
      capnp::MallocMessageBuilder m;
      auto root = m.initRoot<schema::DeviceMetrics>();
      root.setDevice(0);
      root.setSource(s.source);
      root.setIntervalNs(s.intervalNs);
      auto ms = root.initMetrics(static_cast<unsigned>(s.metrics.size()));
      for (unsigned i = 0; i < s.metrics.size(); ++i) {
        ms[i].setName(s.metrics[i].name);
        ms[i].setUnits(s.metrics[i].units);
        ms[i].setCumulative(s.metrics[i].cumulative);
      }
      auto ts = root.initTimes(static_cast<unsigned>(s.times.size()));
      for (unsigned i = 0; i < s.times.size(); ++i) ts.set(i, s.times[i]);
      auto vs = root.initValues(static_cast<unsigned>(s.values.size()));
      for (unsigned i = 0; i < s.values.size(); ++i) vs.set(i, s.values[i]);
      if (!s.note.empty()) root.setNote(s.note);
      w->writeMessage(schema::ChunkKind::DEVICE_METRICS, m);
    }
    if (!ops_.empty()) {
      format::DeviceOpEncoder e;
      e.reset();
      for (const Op& op : ops_) {
        std::vector<uint64_t> bits;
        const Set* set = nullptr;
        for (const auto& s : sets)
          if (s.id == op.set) set = &s;
        for (size_t i = 0; i < op.values.size(); ++i) {
          auto type = set && i < set->counters.size() ? set->counters[i].type : schema::CounterType::UNSIGNED;
          bits.push_back(type == schema::CounterType::REAL     ? std::bit_cast<uint64_t>(op.values[i])
                         : type == schema::CounterType::SIGNED ? static_cast<uint64_t>(static_cast<int64_t>(op.values[i]))
                                                               : static_cast<uint64_t>(op.values[i]));
        }
        format::DeviceOpFields f;
        f.kind = schema::DeviceOpKind::KERNEL;
        f.timed = true;
        f.device = 0;
        f.queue = 1;
        f.kernel = op.kernel;
        f.groupCount = op.groups;
        f.groupSize = {64, 1, 1};
        f.thread = 0;
        f.submitThread = 0;
        f.appendNs = f.submitNs = op.startNs > 1000 ? op.startNs - 1000 : 1;
        f.startTicks = static_cast<uint64_t>(op.startNs);
        f.endTicks = static_cast<uint64_t>(op.endNs);
        f.recordedBy = api;
        f.counterSet = op.set;
        f.counterValues = bits;
        e.add(f);
      }
      auto bytes = e.bytes();
      capnp::MallocMessageBuilder m;
      auto root = m.initRoot<schema::DeviceOps>();
      root.setCount(e.count());
      root.setEncoded(capnp::Data::Reader(bytes.data(), bytes.size()));
      w->writeMessage(schema::ChunkKind::DEVICE_OPS, m);
    }
    if (!w->close(0, 0, 0, "exit")) return w->error();
    return w->ok() ? "" : w->error();
  }

 private:
  struct Op {
    uint64_t kernel = 0;
    int64_t startNs = 0, endNs = 0;
    uint32_t set = 0;
    std::vector<double> values;
    std::array<uint32_t, 3> groups{1, 1, 1};
  };
  uint64_t kernelId(const std::string& name) {
    return kernels_.emplace(name, static_cast<uint64_t>(kernels_.size() + 100)).first->second;
  }
  std::map<std::string, uint64_t> kernels_;
  std::vector<Op> ops_;
};

}  // namespace gtap::test
