#include "profile_records.h"

#include <capnp/message.h>

#include <algorithm>
#include <atomic>
#include <span>
#include <string_view>

#include "device_work.h"
#include "exit_summary.h"
#include "phases.h"

namespace gtap::core::profile {

uint64_t nextObjectId() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

uint32_t nextCounterSetId() {
  static std::atomic<uint32_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}


namespace {

void writeDevices(ChunkSink& sink, const Outbox& out) {
  if (out.devices.empty() && out.samples.empty()) return;
  capnp::MallocMessageBuilder m;
  auto root = m.initRoot<schema::Devices>();
  auto defs = root.initDevices(static_cast<unsigned>(out.devices.size()));
  for (unsigned i = 0; i < out.devices.size(); ++i) {
    const DeviceRecord& d = out.devices[i];
    defs[i].setId(d.id);
    defs[i].setApi(d.api);
    defs[i].setHandle(d.handle);
    defs[i].setName(d.name);
    defs[i].setVendorId(d.vendorId);
    defs[i].setDeviceId(d.deviceId);
    defs[i].setUuid(capnp::Data::Reader(d.uuid.data(), d.uuid.size()));
    defs[i].setTimerFrequencyHz(d.frequency);
    defs[i].setKernelTimestampBits(d.kernelBits);
    defs[i].setGlobalTimestampBits(d.globalBits);
    defs[i].setPeakFlopsPerSecond(d.peakFlopsPerSecond);
    defs[i].setPeakBytesPerSecond(d.peakBytesPerSecond);
    summary::noteDevice(d.id, d.frequency, d.kernelBits);
  }
  auto samples = root.initSamples(static_cast<unsigned>(out.samples.size()));
  for (unsigned i = 0; i < out.samples.size(); ++i) {
    samples[i].setDevice(out.samples[i].device);
    samples[i].setHostNs(out.samples[i].hostNs);
    samples[i].setDeviceTicks(out.samples[i].ticks);
  }
  sink.write(schema::ChunkKind::DEVICES, m);
}

void writeObjects(ChunkSink& sink, const Outbox& out) {
  if (out.created.empty() && out.destroyed.empty()) return;
  capnp::MallocMessageBuilder m;
  auto root = m.initRoot<schema::Objects>();
  auto created = root.initCreated(static_cast<unsigned>(out.created.size()));
  for (unsigned i = 0; i < out.created.size(); ++i) {
    const ObjectRecord& r = out.created[i];
    auto o = created[i];
    o.setId(r.id);
    o.setKind(r.kind);
    o.setHandle(r.handle);
    o.setDevice(r.device);
    o.setParent(r.parent);
    o.setName(r.name);
    if (r.kind == schema::ObjectKind::KERNEL) summary::noteKernelName(r.id, r.name);
    o.setCreatedNs(sink.toHostNs(r.ticks));
    o.setThread(r.thread);
    // Bytes stored once per file, referred to by hash.
    auto blobRef = [&sink](const std::vector<uint8_t>& bytes, schema::BlobRef::Builder b) {
      format::Hash128 h = sink.writeBlob(bytes.data(), bytes.size());
      b.setHashLow(h.low);
      b.setHashHigh(h.high);
      b.setSize(bytes.size());
    };
    if (!r.binary.empty()) blobRef(r.binary, o.initBinary());
    if (!r.debugInfo.empty()) blobRef(r.debugInfo, o.initDebugInfo());
    o.setCodeAddress(r.codeAddress);
    o.setBinaryFormat(r.binaryFormat);
    o.setBuildFlags(r.buildFlags);
    o.setFlags(r.flags);
    o.setOrdinal(r.ordinal);
    o.setIndex(r.index);
    auto props = o.initProperties(static_cast<unsigned>(r.properties.size()));
    for (unsigned j = 0; j < r.properties.size(); ++j) {
      props[j].setKey(r.properties[j].first);
      props[j].setValue(r.properties[j].second);
    }
  }
  auto destroyed = root.initDestroyed(static_cast<unsigned>(out.destroyed.size()));
  for (unsigned i = 0; i < out.destroyed.size(); ++i) {
    destroyed[i].setId(out.destroyed[i].first);
    destroyed[i].setDestroyedNs(sink.toHostNs(out.destroyed[i].second));
  }
  sink.write(schema::ChunkKind::OBJECTS, m);
}

// A device operation's variable parts, wherever they are kept: an OpRecord's
// vectors, or the bytes after a device-work record in its thread's buffer.
struct OpParts {
  std::span<const uint32_t> grid;
  std::string_view note;
  std::span<const uint8_t> arguments;
  std::span<const OpRecord::Binding> bindings;
  std::span<const OpRecord::SemaphoreValue> waits, signals;
  std::span<const uint64_t> counterValues;
  std::span<const uint8_t> counterRaw;
};

OpParts partsOf(const OpRecord& r) {
  return {r.gridSize, r.note, r.arguments, r.bindings, r.waits, r.signals, r.counterValues, r.counterRaw};
}

OpParts partsOf(const devicework::Header& h) {
  auto& r = const_cast<devicework::Header&>(h);  // the accessors only compute addresses
  return {{r.grid.data(), r.gridDims},
          {r.note(), r.noteBytes},
          {r.arguments(), r.argumentBytes},
          {r.bindings(), r.bindingCount},
          {r.waits(), r.waitCount},
          {r.signals(), r.signalCount},
          {r.counterValues(), r.counterCount},
          {r.counterRaw(), r.counterRawBytes}};
}

// OpRecord and devicework::Header share the names of the fixed fields.
template <class R>
void addOp(format::DeviceOpEncoder& e, const R& r, const OpParts& p, uint32_t stack, const ChunkSink& sink) {
  format::DeviceOpFields f;
  f.kind = r.kind;
  f.timed = r.timed;
  f.device = r.device;
  f.queue = r.queue;
  f.list = r.list;
  f.kernel = r.kernel;
  f.groupCount = r.groupCount;
  f.groupSize = r.groupSize;
  f.bytes = r.bytes;
  f.direction = r.direction;
  f.thread = r.thread;
  f.appendIndex = r.appendIndex;
  f.appendNs = sink.toHostNs(r.appendTicks);
  f.submitNs = sink.toHostNs(r.submitTicks);
  f.submitThread = r.submitThread;
  f.startTicks = r.start;
  f.endTicks = r.end;
  f.stack = stack;
  f.completedNs = r.completedNs;
  f.note = !p.note.empty() ? p.note : r.fixedNote ? std::string_view(r.fixedNote) : std::string_view();
  f.arguments = p.arguments;
  f.packetHeader = r.packetHeader;
  f.queueIndex = r.queueIndex;
  f.grid = p.grid;
  f.recordedBy = r.recordedBy;
  f.bindings = p.bindings;
  f.operation = r.operation ? std::string_view(r.operation) : std::string_view();
  f.waits = p.waits;
  f.signals = p.signals;
  f.counterSet = r.counterSet;
  f.counterValues = p.counterValues;
  f.counterRaw = p.counterRaw;
  e.add(f);
  summary::noteOp({r.kind, r.recordedBy, r.device, r.kernel, r.bytes, r.direction, r.timed, r.start, r.end});
}

// Writer thread only; never destroyed (the last flush may come after static
// destructors). Its bytes stay allocated between chunks.
format::DeviceOpEncoder& opEncoder() {
  static auto& e = *new format::DeviceOpEncoder;
  e.reset();
  return e;
}

// Device work submitted (or, never submitted apart, appended) while the
// profile records were paused is not written (phases.h).
template <class R>
bool submittedPaused(const R& r) {
  return phases::droppedAt(r.submitTicks ? r.submitTicks : r.appendTicks);
}
// Allocations made while paused are not written; frees always are, so what
// was allocated while recording is not left live.
bool memoryPaused(const MemoryRecord& r) { return !r.isFree && phases::droppedAt(r.ticks); }

void writeEncodedOps(ChunkSink& sink, const format::DeviceOpEncoder& e) {
  if (!e.count()) return;
  auto bytes = e.bytes();
  capnp::MallocMessageBuilder m(static_cast<unsigned>(std::min<size_t>(bytes.size() / 8 + 16, size_t{1} << 28)));
  auto root = m.initRoot<schema::DeviceOps>();
  root.setCount(e.count());
  root.setEncoded(capnp::Data::Reader(bytes.data(), bytes.size()));
  sink.write(schema::ChunkKind::DEVICE_OPS, m);
}

void writeOps(ChunkSink& sink, const Outbox& out, const std::vector<uint32_t>& stacks) {
  if (out.ops.empty()) return;
  auto& e = opEncoder();
  for (size_t i = 0; i < out.ops.size(); ++i)
    if (!submittedPaused(out.ops[i])) addOp(e, out.ops[i], partsOf(out.ops[i]), stacks[i], sink);
  writeEncodedOps(sink, e);
}

void writeMemory(ChunkSink& sink, const Outbox& out, const std::vector<uint32_t>& stacks) {
  if (out.memory.empty()) return;
  unsigned kept = 0;
  for (const MemoryRecord& r : out.memory) kept += !memoryPaused(r);
  if (!kept) return;
  capnp::MallocMessageBuilder m;
  auto list = m.initRoot<schema::MemoryOps>().initOps(kept);
  unsigned at = 0;
  for (unsigned i = 0; i < out.memory.size(); ++i) {
    const MemoryRecord& r = out.memory[i];
    if (memoryPaused(r)) continue;
    auto o = list[at++];
    o.setIsFree(r.isFree);
    o.setKind(r.kind);
    o.setDevice(r.device);
    o.setAddress(r.address);
    o.setSize(r.size);
    o.setAlignment(r.alignment);
    o.setHostNs(sink.toHostNs(r.ticks));
    o.setThread(r.thread);
    o.setStack(stacks[i]);
  }
  sink.write(schema::ChunkKind::MEMORY_OPS, m);
}

void writeDeviceMetrics(ChunkSink& sink, const Outbox& out) {
  for (const DeviceMetricsRecord& r : out.deviceMetrics) {
    capnp::MallocMessageBuilder m;
    auto root = m.initRoot<schema::DeviceMetrics>();
    root.setDevice(r.device);
    root.setSource(r.source);
    root.setIntervalNs(r.intervalNs);
    auto metrics = root.initMetrics(static_cast<unsigned>(r.metrics.size()));
    for (unsigned i = 0; i < r.metrics.size(); ++i) {
      metrics[i].setName(r.metrics[i].name);
      metrics[i].setUnits(r.metrics[i].units);
      metrics[i].setCumulative(r.metrics[i].cumulative);
    }
    auto times = root.initTimes(static_cast<unsigned>(r.times.size()));
    for (unsigned i = 0; i < r.times.size(); ++i) times.set(i, r.times[i]);
    auto values = root.initValues(static_cast<unsigned>(r.values.size()));
    for (unsigned i = 0; i < r.values.size(); ++i) values.set(i, r.values[i]);
    if (!r.note.empty()) root.setNote(r.note);
    sink.write(schema::ChunkKind::DEVICE_METRICS, m);
  }
}

}  // namespace

void writeCounters(ChunkSink& sink, const Outbox& out) {
  if (out.counterSets.empty() && out.counterNotes.empty() && out.countersRequested.empty()) return;
  capnp::MallocMessageBuilder m;
  auto root = m.initRoot<schema::Counters>();
  auto sets = root.initSets(static_cast<unsigned>(out.counterSets.size()));
  for (unsigned i = 0; i < out.counterSets.size(); ++i) {
    const CounterSetRecord& r = out.counterSets[i];
    auto s = sets[i];
    s.setId(r.id);
    s.setDevice(r.device);
    s.setSource(r.source);
    s.setGroup(r.group);
    s.setPass(r.pass);
    s.setPasses(r.passes);
    auto defs = s.initCounters(static_cast<unsigned>(r.counters.size()));
    for (unsigned j = 0; j < r.counters.size(); ++j) {
      defs[j].setName(r.counters[j].name);
      defs[j].setDescription(r.counters[j].description);
      defs[j].setUnits(r.counters[j].units);
      defs[j].setBlock(r.counters[j].block);
      defs[j].setType(r.counters[j].type);
    }
  }
  auto notes = root.initNotes(static_cast<unsigned>(out.counterNotes.size()));
  for (unsigned i = 0; i < out.counterNotes.size(); ++i) {
    notes[i].setCounter(out.counterNotes[i].counter);
    notes[i].setDevice(out.counterNotes[i].device);
    notes[i].setReason(out.counterNotes[i].reason);
    notes[i].setPass(out.counterNotes[i].pass);
  }
  if (!out.countersRequested.empty()) root.setRequested(out.countersRequested);
  sink.write(schema::ChunkKind::COUNTERS, m);
}

void writeProfileRecords(ChunkSink& sink, const Outbox& out) {
  writeDevices(sink, out);
  writeObjects(sink, out);
  writeCounters(sink, out);
  writeDeviceMetrics(sink, out);
  // Stack ids first, so the records below can refer to them.
  std::vector<uint32_t> opStacks(out.ops.size()), memStacks(out.memory.size());
  for (size_t i = 0; i < out.ops.size(); ++i) opStacks[i] = sink.internStack(out.ops[i].stack);
  for (size_t i = 0; i < out.memory.size(); ++i) memStacks[i] = sink.internStack(out.memory[i].stack);
  sink.writeNewStacks();
  writeOps(sink, out, opStacks);
  writeMemory(sink, out, memStacks);
}

void writeDeviceWork(ChunkSink& sink, const std::vector<const devicework::Header*>& records) {
  if (records.empty()) return;
  // Stack ids first (a stack is rare: the `stacks` mode), through one reused vector.
  // Writer thread only; never destroyed (the last flush may come after static destructors).
  static auto& stacks = *new std::vector<uint32_t>;
  static auto& frames = *new std::vector<uint64_t>;
  stacks.assign(records.size(), 0);
  bool anyStack = false;
  for (size_t i = 0; i < records.size(); ++i) {
    auto& h = const_cast<devicework::Header&>(*records[i]);
    if (!h.stackCount || submittedPaused(h)) continue;
    frames.assign(h.stack(), h.stack() + h.stackCount);
    stacks[i] = sink.internStack(frames);
    anyStack = true;
  }
  if (anyStack) sink.writeNewStacks();
  auto& e = opEncoder();
  for (size_t i = 0; i < records.size(); ++i)
    if (!submittedPaused(*records[i])) addOp(e, *records[i], partsOf(*records[i]), stacks[i], sink);
  writeEncodedOps(sink, e);
}

}  // namespace gtap::core::profile
