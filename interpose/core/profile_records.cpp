#include "profile_records.h"

#include <capnp/message.h>

#include <algorithm>
#include <atomic>

namespace gtap::core::profile {

uint64_t nextObjectId() {
  static std::atomic<uint64_t> next{1};
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
    o.setCreatedNs(sink.toHostNs(r.ticks));
    o.setThread(r.thread);
    if (!r.binary.empty()) {
      format::Hash128 h = sink.writeBlob(r.binary.data(), r.binary.size());
      auto b = o.initBinary();
      b.setHashLow(h.low);
      b.setHashHigh(h.high);
      b.setSize(r.binary.size());
    }
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

void writeOps(ChunkSink& sink, const Outbox& out, const std::vector<uint32_t>& stacks) {
  if (out.ops.empty()) return;
  // One segment sized for the ops (about 26 words each, plus kernel
  // arguments): a reader then follows no pointer across segments.
  size_t words = 64;
  for (const OpRecord& r : out.ops) words += 32 + (r.arguments.size() + 7) / 8 + (r.note.size() + 80) / 8;
  capnp::MallocMessageBuilder m(static_cast<unsigned>(std::min<size_t>(words, size_t{1} << 28)));
  auto list = m.initRoot<schema::DeviceOps>().initOps(static_cast<unsigned>(out.ops.size()));
  for (unsigned i = 0; i < out.ops.size(); ++i) {
    const OpRecord& r = out.ops[i];
    auto o = list[i];
    o.setKind(r.kind);
    o.setDevice(r.device);
    o.setQueue(r.queue);
    o.setCommandList(r.list);
    o.setKernel(r.kernel);
    auto gc = o.initGroupCount(3);
    auto gs = o.initGroupSize(3);
    for (unsigned j = 0; j < 3; ++j) {
      gc.set(j, r.groupCount[j]);
      gs.set(j, r.groupSize[j]);
    }
    if (!r.gridSize.empty()) {
      auto grid = o.initGridSize(static_cast<unsigned>(r.gridSize.size()));
      for (unsigned j = 0; j < r.gridSize.size(); ++j) grid.set(j, r.gridSize[j]);
    }
    o.setBytes(r.bytes);
    o.setDirection(r.direction);
    o.setThread(r.thread);
    o.setAppendIndex(r.appendIndex);
    o.setAppendNs(sink.toHostNs(r.appendTicks));
    o.setSubmitNs(sink.toHostNs(r.submitTicks));
    o.setSubmitThread(r.submitThread);
    o.setTimed(r.timed);
    o.setStartTicks(r.start);
    o.setEndTicks(r.end);
    o.setStack(stacks[i]);
    o.setCompletedNs(r.completedNs);
    if (!r.note.empty()) o.setNote(r.note);
    else if (r.fixedNote) o.setNote(r.fixedNote);
    if (!r.arguments.empty()) o.setArguments(capnp::Data::Reader(r.arguments.data(), r.arguments.size()));
    o.setPacketHeader(r.packetHeader);
    o.setQueueIndex(r.queueIndex);
    o.setRecordedBy(r.recordedBy);
    if (!r.bindings.empty()) {
      auto b = o.initBindings(static_cast<unsigned>(r.bindings.size()));
      for (unsigned j = 0; j < r.bindings.size(); ++j) {
        b[j].setBuffer(r.bindings[j].buffer);
        b[j].setOffset(r.bindings[j].offset);
        b[j].setLength(r.bindings[j].length);
        b[j].setSlot(r.bindings[j].slot);
      }
    }
    if (r.operation) o.setOperation(r.operation);
    auto semaphores = [](auto entries, const std::vector<OpRecord::SemaphoreValue>& values) {
      for (unsigned j = 0; j < values.size(); ++j) {
        entries[j].setSemaphore(values[j].semaphore);
        entries[j].setValue(values[j].value);
      }
    };
    if (!r.waits.empty()) semaphores(o.initWaits(static_cast<unsigned>(r.waits.size())), r.waits);
    if (!r.signals.empty()) semaphores(o.initSignals(static_cast<unsigned>(r.signals.size())), r.signals);
  }
  sink.write(schema::ChunkKind::DEVICE_OPS, m);
}

void writeMemory(ChunkSink& sink, const Outbox& out, const std::vector<uint32_t>& stacks) {
  if (out.memory.empty()) return;
  capnp::MallocMessageBuilder m;
  auto list = m.initRoot<schema::MemoryOps>().initOps(static_cast<unsigned>(out.memory.size()));
  for (unsigned i = 0; i < out.memory.size(); ++i) {
    const MemoryRecord& r = out.memory[i];
    auto o = list[i];
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

}  // namespace

void writeProfileRecords(ChunkSink& sink, const Outbox& out) {
  writeDevices(sink, out);
  writeObjects(sink, out);
  // Stack ids first, so the records below can refer to them.
  std::vector<uint32_t> opStacks(out.ops.size()), memStacks(out.memory.size());
  for (size_t i = 0; i < out.ops.size(); ++i) opStacks[i] = sink.internStack(out.ops[i].stack);
  for (size_t i = 0; i < out.memory.size(); ++i) memStacks[i] = sink.internStack(out.memory[i].stack);
  sink.writeNewStacks();
  writeOps(sink, out, opStacks);
  writeMemory(sink, out, memStacks);
}

}  // namespace gtap::core::profile
