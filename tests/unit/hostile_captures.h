// Crafted capture files: a small valid capture holding every chunk kind (and,
// for replay cases, a vector addition's replay stream), and variants of it
// with one declared length, count, index or hash set to a hostile value (0,
// huge, off by one, past the end, negative when read as signed), each with
// compressed and with uncompressed chunks. Built with the format's own chunk
// encoding and Cap'n Proto builders; nothing binary is kept in the tree.
#pragma once

#include <capnp/message.h>
#include <capnp/serialize.h>
#include <zstd.h>

#include <cstdint>
#include <algorithm>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "gtap/format/container.h"
#include "gtap/format/hash.h"
#include "gtap/format/schema/capture.capnp.h"

namespace gtap::test::hostile {

using schema::ChunkKind;
using O = schema::ReplayOp;

// Hooks a variant uses to change what the base capture would write. Each
// gets the builder after the base filled it.
struct Hooks {
  std::function<void(schema::Definitions::Builder)> definitions;
  std::function<void(schema::ApiEvents::Builder)> apiEvents;
  std::function<void(schema::Blob::Builder, int part)> blob;  // module binary parts 0 and 1
  std::function<void(schema::Devices::Builder)> devices;
  std::function<void(schema::Objects::Builder)> objects;
  std::function<void(schema::DeviceOps::Builder)> deviceOps;
  std::function<void(schema::MemoryOps::Builder)> memoryOps;
  std::function<void(schema::Stacks::Builder)> stacks;
  std::function<void(schema::InstructionSamples::Builder)> instructionSamples;
  std::function<void(capnp::List<schema::ReplayRecord>::Builder)> replay;
  std::function<void(schema::Trailer::Builder)> trailer;
  // The chunk header as it will be written (checksum made after this, unless
  // `breakChecksum`), with the stored payload.
  std::function<void(uint16_t kind, format::ChunkHeader&, std::vector<uint8_t>& payload, bool& breakChecksum)> header;
  // The whole file's bytes at the end (footer, cuts).
  std::function<void(std::vector<uint8_t>&)> file;
};

struct Case {
  std::string name;
  std::vector<uint8_t> bytes;
  bool replay = false;  // holds a replay stream meant for `replay --sim`
  // When set, every reader that reports an error must name this (a blob hash).
  std::string mustName;
};

// The replay stream's captured addresses and sizes.
inline constexpr uint64_t kA = 0x10000000, kB = 0x20000000, kC = 0x30000000, kHost = 0x7fff00000000;
inline constexpr uint32_t kCount = 256;
inline constexpr uint64_t kBytes = kCount * sizeof(float);
inline constexpr uint64_t kCopySeq = 19;  // the device-to-host copy's seq in the base stream

inline std::vector<uint8_t> floatBytes(float scale) {
  std::vector<uint8_t> out(kBytes);
  for (uint32_t i = 0; i < kCount; ++i) {
    float v = scale * static_cast<float>(i);
    std::memcpy(out.data() + i * sizeof(float), &v, sizeof v);
  }
  return out;
}

class FileBuilder {
 public:
  FileBuilder(bool compress, const Hooks& hooks) : compress_(compress), hooks_(hooks) {
    bytes_.assign(format::kPreambleMagic, format::kPreambleMagic + 8);
    uint16_t major = format::kFormatMajor, minor = format::kFormatMinor;
    bytes_.resize(format::kPreambleSize, 0);
    std::memcpy(bytes_.data() + 8, &major, 2);
    std::memcpy(bytes_.data() + 10, &minor, 2);
  }

  void message(ChunkKind kind, capnp::MessageBuilder& m) {
    auto words = capnp::messageToFlatArray(m);
    auto raw = words.asBytes();
    std::vector<uint8_t> payload(raw.begin(), raw.end());
    format::ChunkHeader h{static_cast<uint16_t>(kind), format::Codec::none, 0, static_cast<uint32_t>(raw.size()), 0};
    if (compress_) {
      std::vector<uint8_t> z(ZSTD_compressBound(raw.size()));
      size_t n = ZSTD_compress(z.data(), z.size(), raw.begin(), raw.size(), 1);
      z.resize(n);
      payload = std::move(z);
      h.codec = format::Codec::zstd;
    }
    h.storedSize = static_cast<uint32_t>(payload.size());
    bool breakChecksum = false;
    if (hooks_.header) hooks_.header(static_cast<uint16_t>(kind), h, payload, breakChecksum);
    uint8_t head[format::kChunkHeaderSize];
    format::encodeChunkHeader(h, head);
    h.checksum = format::chunkChecksum(head, payload.data(), payload.size()) ^ (breakChecksum ? 1 : 0);
    format::encodeChunkHeader(h, head);
    offsets_.push_back({bytes_.size(), static_cast<uint16_t>(kind), static_cast<uint32_t>(payload.size())});
    bytes_.insert(bytes_.end(), head, head + sizeof head);
    bytes_.insert(bytes_.end(), payload.begin(), payload.end());
  }

  std::vector<uint8_t> close() {
    capnp::MallocMessageBuilder m;
    auto t = m.initRoot<schema::Trailer>();
    auto refs = t.initChunks(static_cast<unsigned>(offsets_.size()));
    for (unsigned i = 0; i < offsets_.size(); ++i) {
      refs[i].setOffset(offsets_[i].offset);
      refs[i].setKind(offsets_[i].kind);
      refs[i].setStoredSize(offsets_[i].stored);
    }
    t.setEventsWritten(4);
    t.setCloseReason("exit");
    if (hooks_.trailer) hooks_.trailer(t);
    uint64_t at = bytes_.size();
    message(ChunkKind::TRAILER, m);
    uint8_t footer[format::kFooterSize];
    std::memcpy(footer, &at, 8);
    std::memcpy(footer + 8, format::kFooterMagic, 8);
    bytes_.insert(bytes_.end(), footer, footer + sizeof footer);
    if (hooks_.file) hooks_.file(bytes_);
    return std::move(bytes_);
  }

 private:
  struct Ref {
    uint64_t offset;
    uint16_t kind;
    uint32_t stored;
  };
  bool compress_;
  const Hooks& hooks_;
  std::vector<uint8_t> bytes_;
  std::vector<Ref> offsets_;
};

// A replay record as the base stream holds it.
struct Rec {
  O op;
  uint64_t object = 0;
  std::vector<uint64_t> objects, values, addresses;
  enum class P { none, inlineBytes, blob } payload = P::none;
  std::vector<uint8_t> bytes;
  std::string text;
};

inline Rec rec(O op, uint64_t object = 0, std::vector<uint64_t> objects = {}, std::vector<uint64_t> values = {},
               std::vector<uint64_t> addresses = {}, Rec::P payload = Rec::P::none, std::vector<uint8_t> bytes = {},
               std::string text = {}) {
  Rec r;
  r.op = op;
  r.object = object;
  r.objects = std::move(objects);
  r.values = std::move(values);
  r.addresses = std::move(addresses);
  r.payload = payload;
  r.bytes = std::move(bytes);
  r.text = std::move(text);
  return r;
}

inline std::vector<Rec> vectorAddRecords(const std::vector<uint8_t>& kernels) {
  auto ptr = [](uint64_t v) {
    std::vector<uint8_t> b(8);
    std::memcpy(b.data(), &v, 8);
    return b;
  };
  std::vector<uint8_t> count(4);
  std::memcpy(count.data(), &kCount, 4);
  std::vector<Rec> r;
  r.push_back(rec(O::DEVICE, 1, {}, {0, 0, 0x6774, 0x5a01}, {}, Rec::P::none, {}, "gtap simulated GPU"));
  r.push_back(rec(O::CONTEXT_CREATE, 2, {}, {0}));
  r.push_back(rec(O::MEM_ALLOC, 3, {2, 1}, {3, kBytes, 64}, {kA}));
  r.push_back(rec(O::MEM_ALLOC, 4, {2, 1}, {3, kBytes, 64}, {kB}));
  r.push_back(rec(O::MEM_ALLOC, 5, {2, 1}, {2, kBytes, 64}, {kC}));
  r.push_back(rec(O::MODULE_CREATE, 6, {2, 1}, {1}, {}, Rec::P::blob, kernels));
  r.push_back(rec(O::KERNEL_CREATE, 7, {6}, {0}, {}, Rec::P::none, {}, "vector_add"));
  r.push_back(rec(O::KERNEL_SET_GROUP_SIZE, 7, {}, {64, 1, 1}));
  r.push_back(rec(O::KERNEL_SET_ARGUMENT, 7, {}, {0, 8, 1}, {}, Rec::P::inlineBytes, ptr(kA)));
  r.push_back(rec(O::KERNEL_SET_ARGUMENT, 7, {}, {1, 8, 1}, {}, Rec::P::inlineBytes, ptr(kB)));
  r.push_back(rec(O::KERNEL_SET_ARGUMENT, 7, {}, {2, 8, 1}, {}, Rec::P::inlineBytes, ptr(kC)));
  r.push_back(rec(O::KERNEL_SET_ARGUMENT, 7, {}, {3, 4, 1}, {}, Rec::P::inlineBytes, count));
  r.push_back(rec(O::LIST_CREATE_IMMEDIATE, 8, {2, 1}, {0, 0, 0, 0, 0}));
  r.push_back(rec(O::EVENT_POOL_CREATE, 9, {2}, {1, 2}));
  r.push_back(rec(O::EVENT_CREATE, 10, {9}, {0, 4, 4}));
  r.push_back(rec(O::HOST_DATA, 3, {}, {0, 0}, {kA}, Rec::P::blob, floatBytes(1.0f)));
  r.push_back(rec(O::HOST_DATA, 4, {}, {0, 0}, {kB}, Rec::P::inlineBytes, floatBytes(0.5f)));
  r.push_back(rec(O::LAUNCH_KERNEL, 8, {7, 0}, {kCount / 64, 1, 1, 0, 0}));
  r.push_back(rec(O::COPY, 8, {10}, {kBytes}, {kHost, kC}));  // seq kCopySeq
  r.push_back(rec(O::EVENT_HOST_SYNCHRONIZE, 10, {}, {UINT64_MAX}));
  r.push_back(rec(O::READ_BACK, kCopySeq, {}, {0}, {kHost}, Rec::P::blob, floatBytes(1.5f)));
  r.push_back(rec(O::FILL, 8, {0}, {16}, {kA}, Rec::P::inlineBytes, {0, 0, 0, 0}));
  r.push_back(rec(O::BARRIER, 8, {0}));
  r.push_back(rec(O::EVENT_DESTROY, 10));
  r.push_back(rec(O::EVENT_POOL_DESTROY, 9));
  r.push_back(rec(O::LIST_DESTROY, 8));
  r.push_back(rec(O::KERNEL_DESTROY, 7));
  r.push_back(rec(O::MODULE_DESTROY, 6));
  r.push_back(rec(O::MEM_FREE, 5, {2}, {}, {kC}));
  r.push_back(rec(O::MEM_FREE, 4, {2}, {}, {kB}));
  r.push_back(rec(O::MEM_FREE, 3, {2}, {}, {kA}));
  r.push_back(rec(O::CONTEXT_DESTROY, 2));
  return r;
}

// The base capture with `hooks` applied. `kernels` is the module binary
// (for replay cases, a kernel object the simulated driver loads).
inline std::vector<uint8_t> build(bool compress, const Hooks& hooks, const std::vector<uint8_t>& kernels,
                                  bool withReplay) {
  FileBuilder f(compress, hooks);
  {
    capnp::MallocMessageBuilder m;
    auto info = m.initRoot<schema::FileInfo>();
    info.setPid(4242);
    info.setProducer("hostile_captures");
    info.setExecutable("/bin/hostile");
    info.setMode(withReplay ? "replay" : "profile");
    f.message(ChunkKind::FILE_INFO, m);
  }
  {
    capnp::MallocMessageBuilder m;
    auto d = m.initRoot<schema::Definitions>();
    auto fns = d.initFunctions(2);
    fns[0].setId(1);
    fns[0].setApi(schema::Api::LEVEL_ZERO);
    fns[0].setName("zeCommandListAppendLaunchKernel");
    fns[1].setId(2);
    fns[1].setApi(schema::Api::LEVEL_ZERO);
    fns[1].setName("zeMemAllocShared");
    auto threads = d.initThreads(1);
    threads[0].setId(0);
    threads[0].setOsTid(4242);
    threads[0].setName("main");
    auto strings = d.initStrings(1);
    strings[0].setId(1);
    strings[0].setText("vector_add");
    if (hooks.definitions) hooks.definitions(d);
    f.message(ChunkKind::DEFINITIONS, m);
  }
  {
    // Two calls: begin/end of function 2, then of function 1.
    const uint8_t encoded[] = {4, 10, 5, 20, 0, 2, 30, 3, 40, 0};
    capnp::MallocMessageBuilder m;
    auto ev = m.initRoot<schema::ApiEvents>();
    ev.setThread(0);
    ev.setFirstIndex(0);
    ev.setBaseHostNs(1000);
    ev.setCount(4);
    ev.setEncoded(capnp::Data::Reader(encoded, sizeof encoded));
    if (hooks.apiEvents) hooks.apiEvents(ev);
    f.message(ChunkKind::API_EVENTS, m);
  }
  format::Hash128 binaryHash = format::contentHash(kernels.data(), kernels.size());
  {
    // The module binary in two parts, as large blobs are stored.
    size_t half = kernels.size() / 2;
    for (int part = 0; part < 2; ++part) {
      capnp::MallocMessageBuilder m;
      auto b = m.initRoot<schema::Blob>();
      b.setHashLow(binaryHash.low);
      b.setHashHigh(binaryHash.high);
      b.setTotalSize(kernels.size());
      size_t from = part ? half : 0, to = part ? kernels.size() : half;
      b.setOffset(from);
      b.setData(capnp::Data::Reader(kernels.data() + from, to - from));
      if (hooks.blob) hooks.blob(b, part);
      f.message(ChunkKind::BLOB, m);
    }
  }
  {
    capnp::MallocMessageBuilder m;
    auto d = m.initRoot<schema::Devices>();
    auto devs = d.initDevices(1);
    devs[0].setId(0);
    devs[0].setApi(schema::Api::LEVEL_ZERO);
    devs[0].setName("gtap simulated GPU");
    devs[0].setTimerFrequencyHz(1000000000);
    devs[0].setKernelTimestampBits(32);
    devs[0].setGlobalTimestampBits(64);
    auto samples = d.initSamples(1);
    samples[0].setDevice(0);
    samples[0].setHostNs(1000);
    samples[0].setDeviceTicks(5000);
    if (hooks.devices) hooks.devices(d);
    f.message(ChunkKind::DEVICES, m);
  }
  {
    capnp::MallocMessageBuilder m;
    auto o = m.initRoot<schema::Objects>();
    auto created = o.initCreated(3);
    created[0].setId(1);
    created[0].setKind(schema::ObjectKind::CONTEXT);
    created[1].setId(2);
    created[1].setKind(schema::ObjectKind::MODULE);
    created[1].setParent(1);
    created[1].setDevice(0);
    auto bin = created[1].initBinary();
    bin.setHashLow(binaryHash.low);
    bin.setHashHigh(binaryHash.high);
    bin.setSize(kernels.size());
    created[1].setBinaryFormat("native");
    created[2].setId(3);
    created[2].setKind(schema::ObjectKind::KERNEL);
    created[2].setParent(2);
    created[2].setName("vector_add");
    created[2].setCodeAddress(0x7000);
    auto debug = created[1].initDebugInfo();  // the module's bytes are its debug ELF too
    debug.setHashLow(binaryHash.low);
    debug.setHashHigh(binaryHash.high);
    debug.setSize(kernels.size());
    auto props = created[2].initProperties(1);
    props[0].setKey("numKernelArgs");
    props[0].setValue("4");
    auto destroyed = o.initDestroyed(1);
    destroyed[0].setId(3);
    destroyed[0].setDestroyedNs(9000);
    if (hooks.objects) hooks.objects(o);
    f.message(ChunkKind::OBJECTS, m);
  }
  {
    capnp::MallocMessageBuilder m;
    auto s = m.initRoot<schema::Stacks>();
    auto mods = s.initModules(1);
    mods[0].setId(1);
    mods[0].setPath("/bin/hostile");
    mods[0].setStart(0x400000);
    mods[0].setEnd(0x500000);
    auto stacks = s.initStacks(1);
    stacks[0].setId(1);
    auto frames = stacks[0].initFrames(2);
    frames.set(0, 0x401000);
    frames.set(1, 0x402000);
    if (hooks.stacks) hooks.stacks(s);
    f.message(ChunkKind::STACKS, m);
  }
  {
    capnp::MallocMessageBuilder m;
    auto ops = m.initRoot<schema::DeviceOps>().initOps(2);
    ops[0].setKind(schema::DeviceOpKind::KERNEL);
    ops[0].setDevice(0);
    ops[0].setQueue(4);
    ops[0].setKernel(3);
    auto gc = ops[0].initGroupCount(3);
    auto gs = ops[0].initGroupSize(3);
    for (unsigned i = 0; i < 3; ++i) {
      gc.set(i, i ? 1 : 4);
      gs.set(i, i ? 1 : 64);
    }
    ops[0].setThread(0);
    ops[0].setAppendIndex(2);
    ops[0].setAppendNs(1030);
    ops[0].setSubmitNs(1030);
    ops[0].setTimed(true);
    ops[0].setStartTicks(5100);
    ops[0].setEndTicks(5200);
    ops[0].setStack(1);
    ops[1].setKind(schema::DeviceOpKind::COPY);
    ops[1].setDevice(0);
    ops[1].setQueue(4);
    ops[1].setBytes(kBytes);
    ops[1].setDirection(schema::CopyDirection::DEVICE_TO_HOST);
    ops[1].setAppendNs(1050);
    ops[1].setSubmitNs(1050);
    if (hooks.deviceOps) hooks.deviceOps(m.getRoot<schema::DeviceOps>());
    f.message(ChunkKind::DEVICE_OPS, m);
  }
  {
    capnp::MallocMessageBuilder m;
    auto ops = m.initRoot<schema::MemoryOps>().initOps(2);
    ops[0].setKind(schema::MemoryKind::SHARED);
    ops[0].setDevice(0);
    ops[0].setAddress(kA);
    ops[0].setSize(kBytes);
    ops[0].setHostNs(1010);
    ops[0].setStack(1);
    ops[1].setIsFree(true);
    ops[1].setAddress(kA);
    ops[1].setSize(kBytes);
    ops[1].setHostNs(1060);
    if (hooks.memoryOps) hooks.memoryOps(m.getRoot<schema::MemoryOps>());
    f.message(ChunkKind::MEMORY_OPS, m);
  }
  {
    capnp::MallocMessageBuilder m;
    auto is = m.initRoot<schema::InstructionSamples>();
    is.setDevice(0);
    is.setGroup("EuStallSampling");
    auto reasons = is.initReasons(2);
    reasons.set(0, "Active");
    reasons.set(1, "PipeStall");
    is.setFromNs(1000);
    is.setToNs(2000);
    auto rows = is.initSamples(2);
    rows[0].setIp(0x7010);
    auto c0 = rows[0].initCounts(2);
    c0.set(0, 3);
    c0.set(1, 1);
    rows[1].setIp(0x100);  // below every kernel
    rows[1].initCounts(1).set(0, 2);
    if (hooks.instructionSamples) hooks.instructionSamples(is);
    f.message(ChunkKind::INSTRUCTION_SAMPLES, m);
  }
  if (withReplay) {
    auto recs = vectorAddRecords(kernels);
    // The other blobs the stream refers to (the module binary is stored above).
    std::vector<std::vector<uint8_t>> extra;
    for (const Rec& r : recs)
      if (r.payload == Rec::P::blob && r.bytes != kernels) extra.push_back(r.bytes);
    for (const auto& bytes : extra) {
      format::Hash128 h = format::contentHash(bytes.data(), bytes.size());
      capnp::MallocMessageBuilder m;
      auto b = m.initRoot<schema::Blob>();
      b.setHashLow(h.low);
      b.setHashHigh(h.high);
      b.setTotalSize(bytes.size());
      b.setData(capnp::Data::Reader(bytes.data(), bytes.size()));
      f.message(ChunkKind::BLOB, m);
    }
    capnp::MallocMessageBuilder m;
    auto list = m.initRoot<schema::Replay>().initRecords(static_cast<unsigned>(recs.size()));
    for (unsigned i = 0; i < recs.size(); ++i) {
      const Rec& r = recs[i];
      auto out = list[i];
      out.setSeq(i + 1);
      out.setOp(r.op);
      out.setFunction(r.op == O::LAUNCH_KERNEL ? 1 : ~0u);
      out.setObject(r.object);
      auto objs = out.initObjects(static_cast<unsigned>(r.objects.size()));
      for (unsigned k = 0; k < r.objects.size(); ++k) objs.set(k, r.objects[k]);
      auto vals = out.initValues(static_cast<unsigned>(r.values.size()));
      for (unsigned k = 0; k < r.values.size(); ++k) vals.set(k, r.values[k]);
      auto addrs = out.initAddresses(static_cast<unsigned>(r.addresses.size()));
      for (unsigned k = 0; k < r.addresses.size(); ++k) addrs.set(k, r.addresses[k]);
      out.setText(r.text);
      auto p = out.initPayload();
      p.setSize(r.bytes.size());
      if (r.payload == Rec::P::inlineBytes) {
        p.setInline(capnp::Data::Reader(r.bytes.data(), r.bytes.size()));
      } else if (r.payload == Rec::P::blob) {
        format::Hash128 h = format::contentHash(r.bytes.data(), r.bytes.size());
        auto b = p.initBlob();
        b.setHashLow(h.low);
        b.setHashHigh(h.high);
        b.setSize(r.bytes.size());
      } else {
        p.setNone();
      }
    }
    if (hooks.replay) hooks.replay(list);
    f.message(ChunkKind::REPLAY, m);
  }
  return f.close();
}

inline schema::ReplayRecord::Builder record(capnp::List<schema::ReplayRecord>::Builder list, O op, int nth = 0) {
  for (auto r : list)
    if (r.getOp() == op && nth-- == 0) return r;
  return list[0];
}

inline void setValue(schema::ReplayRecord::Builder r, unsigned i, uint64_t v) {
  auto old = r.getValues();
  if (i < old.size()) {
    old.set(i, v);
    return;
  }
  std::vector<uint64_t> keep;
  for (auto x : old) keep.push_back(x);
  keep.resize(i + 1, 0);
  keep[i] = v;
  auto vals = r.initValues(static_cast<unsigned>(keep.size()));
  for (unsigned k = 0; k < keep.size(); ++k) vals.set(k, keep[k]);
}

// Every hostile variant, compressed and not. `kernels`: the module binary;
// `fifo`: a FIFO's path, given as an external file a payload reads.
inline std::vector<Case> allCases(const std::vector<uint8_t>& kernels, const std::string& fifo) {
  struct Variant {
    std::string name;
    Hooks hooks;
    bool replay = false;
    bool namesModuleBlob = false;
  };
  std::vector<Variant> v;
  const uint64_t kHuge = ~uint64_t{0};
  const uint64_t kNegative = uint64_t{1} << 63;  // most negative when read as signed
  const uint16_t kApi = static_cast<uint16_t>(ChunkKind::API_EVENTS);
  const uint16_t kBlob = static_cast<uint16_t>(ChunkKind::BLOB);
  const uint16_t kInfo = static_cast<uint16_t>(ChunkKind::FILE_INFO);
  const uint16_t kOps = static_cast<uint16_t>(ChunkKind::DEVICE_OPS);
  const uint16_t kReplay = static_cast<uint16_t>(ChunkKind::REPLAY);
  auto onHeader = [](uint16_t which, std::function<void(format::ChunkHeader&, std::vector<uint8_t>&, bool&)> f) {
    Hooks h;
    h.header = [which, f](uint16_t kind, format::ChunkHeader& hd, std::vector<uint8_t>& p, bool& bad) {
      if (kind == which) f(hd, p, bad);
    };
    return h;
  };
  auto add = [&](std::string name, Hooks h, bool replay = false, bool namesBlob = false) {
    v.push_back({std::move(name), std::move(h), replay, namesBlob});
  };

  add("valid", {});
  add("valid-replay", {}, true);
  // Container: chunk header sizes, codec, checksum; footer.
  for (uint32_t raw : {0u, 4u, 0xFFFFFFF8u, 0xFFFFFFFFu, 1u << 30})
    add("apiEvents-rawSize-" + std::to_string(raw),
        onHeader(kApi, [raw](auto& h, auto&, bool&) { h.rawSize = raw; }));
  add("apiEvents-rawSize-plus-8", onHeader(kApi, [](auto& h, auto&, bool&) { h.rawSize += 8; }));
  add("apiEvents-rawSize-minus-8", onHeader(kApi, [](auto& h, auto&, bool&) { h.rawSize -= 8; }));
  add("blob-rawSize-1GiB", onHeader(kBlob, [](auto& h, auto&, bool&) { h.rawSize = 1u << 30; }));
  add("deviceOps-rawSize-huge", onHeader(kOps, [](auto& h, auto&, bool&) { h.rawSize = 0x7FFFFFF8u; }));
  for (uint32_t stored : {0u, 0xFFFFFFFFu, 1u << 27})
    add("apiEvents-storedSize-" + std::to_string(stored),
        onHeader(kApi, [stored](auto& h, auto&, bool&) { h.storedSize = stored; }));
  add("apiEvents-storedSize-plus-1", onHeader(kApi, [](auto& h, auto&, bool&) { h.storedSize += 1; }));
  add("apiEvents-codec-7", onHeader(kApi, [](auto& h, auto&, bool&) { h.codec = static_cast<format::Codec>(7); }));
  add("fileInfo-checksum", onHeader(kInfo, [](auto&, auto&, bool& bad) { bad = true; }));
  add("replay-checksum", onHeader(kReplay, [](auto&, auto&, bool& bad) { bad = true; }), true);
  add("apiEvents-payload-cut", onHeader(kApi, [](auto& h, auto& p, bool&) {
        p.resize(p.size() / 2);
        h.storedSize = static_cast<uint32_t>(p.size());
      }));
  {
    Hooks h;
    h.file = [](std::vector<uint8_t>& b) {
      uint64_t past = b.size() * 2;
      std::memcpy(b.data() + b.size() - format::kFooterSize, &past, 8);
    };
    add("footer-past-end", h);
    h.file = [](std::vector<uint8_t>& b) { std::memset(b.data() + b.size() - format::kFooterSize, 0xff, 8); };
    add("footer-huge", h);
    h.file = [](std::vector<uint8_t>& b) { b.resize(b.size() - format::kFooterSize - 7); };
    add("cut-in-trailer", h);
  }
  // Trailer index entries pointing anywhere.
  {
    Hooks h;
    h.trailer = [kHuge](schema::Trailer::Builder t) {
      auto c = t.getChunks();
      c[0].setOffset(kHuge);
      c[1].setStoredSize(0xFFFFFFFF);
      c[2].setKind(0xFFFF);
      t.setEventsWritten(kHuge);
      t.setEndHostNs(static_cast<int64_t>(kNegative));
    };
    add("trailer-index-hostile", h);
  }
  // Definitions: ids used as indices.
  {
    Hooks h;
    h.definitions = [](schema::Definitions::Builder d) {
      d.getFunctions()[0].setId(0xFFFFFFFF);
      d.getThreads()[0].setId(0xFFFFFFFF);
      d.getStrings()[0].setId(0xFFFFFFFF);
    };
    add("definitions-ids-huge", h);
  }
  // ApiEvents counts and bytes.
  for (uint32_t count : {0u, 5u, 6u, 0x7FFFFFFFu, 0x80000000u, 0xFFFFFFFFu}) {
    Hooks h;
    h.apiEvents = [count](schema::ApiEvents::Builder e) { e.setCount(count); };
    add("apiEvents-count-" + std::to_string(count), h);
  }
  {
    Hooks h;
    h.apiEvents = [kHuge, kNegative](schema::ApiEvents::Builder e) {
      e.setThread(0xFFFFFFFF);
      e.setFirstIndex(kHuge);
      e.setBaseHostNs(static_cast<int64_t>(kNegative));
      const uint8_t encoded[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
                                 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f};
      e.setEncoded(capnp::Data::Reader(encoded, sizeof encoded));
      e.setCount(1);
    };
    add("apiEvents-varints-huge", h);
  }
  // Blob sizes, offsets and contents (the module binary).
  auto blobHook = [&](std::string name, std::function<void(schema::Blob::Builder, int)> f, bool names = false) {
    Hooks h;
    h.blob = f;
    add(name, h, false, names);
    add(name + "-replay", h, true, names);
  };
  blobHook("blob-totalSize-4GiB", [](auto b, int) { b.setTotalSize(uint64_t{4} << 30); }, true);
  blobHook("blob-totalSize-huge", [kHuge](auto b, int) { b.setTotalSize(kHuge); }, true);
  blobHook("blob-totalSize-0", [](auto b, int) { b.setTotalSize(0); }, true);
  blobHook("blob-totalSize-plus-1", [](auto b, int) { b.setTotalSize(b.getTotalSize() + 1); }, true);
  blobHook("blob-totalSize-minus-1", [](auto b, int) { b.setTotalSize(b.getTotalSize() - 1); }, true);
  blobHook("blob-offset-past-end", [](auto b, int part) { if (part) b.setOffset(b.getTotalSize() + 1); }, true);
  blobHook("blob-offset-huge", [kHuge](auto b, int part) { if (part) b.setOffset(kHuge); }, true);
  blobHook("blob-offset-negative", [kNegative](auto b, int part) { if (part) b.setOffset(kNegative); }, true);
  blobHook("blob-parts-overlap", [](auto b, int part) { if (part) b.setOffset(b.getOffset() - 1); }, true);
  blobHook("blob-part-missing", [](auto b, int part) { if (part) b.setHashLow(b.getHashLow() ^ 1); }, true);
  blobHook("blob-bit-flipped", [](auto b, int part) {
        if (part) b.getData()[b.getData().size() / 2] ^= 0x10;
      }, true);
  blobHook("blob-part-duplicated", [](auto b, int part) {
        if (part) b.setOffset(0);
      }, true);
  // Objects: ids, parents, binary references.
  {
    Hooks h;
    h.objects = [kHuge](schema::Objects::Builder o) {
      o.getCreated()[1].getBinary().setSize(kHuge);
      o.getCreated()[2].setParent(kHuge);
      o.getCreated()[2].setId(kHuge);
      o.getCreated()[1].setDevice(0xFFFFFFFE);
      o.getDestroyed()[0].setId(kHuge);
    };
    add("objects-ids-huge", h);
    h.objects = [](schema::Objects::Builder o) {
      auto b = o.getCreated()[1].getBinary();
      b.setHashLow(b.getHashLow() + 1);
    };
    add("objects-binary-missing", h);
  }
  // Device ops: devices, kernels, stacks, lists of any length.
  {
    Hooks h;
    h.deviceOps = [kHuge, kNegative](schema::DeviceOps::Builder d) {
      auto op = d.getOps()[0];
      op.setDevice(0xFFFFFFFF);
      op.setKernel(kHuge);
      op.setStack(0xFFFFFFFF);
      op.setThread(0xFFFFFFFF);
      op.setAppendIndex(kHuge);
      op.setStartTicks(kHuge);
      op.setEndTicks(0);
      op.setSubmitNs(static_cast<int64_t>(kNegative));
      op.initGroupCount(0);
      auto gs = op.initGroupSize(7);
      for (unsigned i = 0; i < 7; ++i) gs.set(i, 0xFFFFFFFF);
      auto grid = op.initGridSize(1);
      grid.set(0, 0xFFFFFFFF);
      auto copy = d.getOps()[1];
      copy.setBytes(kHuge);
      copy.setDirection(static_cast<schema::CopyDirection>(200));
      copy.setKind(static_cast<schema::DeviceOpKind>(77));
      auto bind = copy.initBindings(1);
      bind[0].setOffset(kHuge);
      bind[0].setLength(kHuge);
    };
    add("deviceOps-fields-hostile", h);
    h.deviceOps = [](schema::DeviceOps::Builder d) {
      auto op = d.getOps()[0];
      op.setQueue(0);
      op.setCommandList(0);
    };
    add("deviceOps-no-queue", h);
  }
  {
    Hooks h;
    h.devices = [kHuge](schema::Devices::Builder d) {
      d.getDevices()[0].setTimerFrequencyHz(1);
      d.getDevices()[0].setKernelTimestampBits(255);
      d.getDevices()[0].setGlobalTimestampBits(0);
      d.getSamples()[0].setDeviceTicks(kHuge);
      d.getSamples()[0].setDevice(0xFFFFFFFF);
    };
    add("devices-clock-hostile", h);
    h.devices = [](schema::Devices::Builder d) { d.getDevices()[0].setKernelTimestampBits(64); d.getDevices()[0].setTimerFrequencyHz(0); };
    add("devices-frequency-0", h);
  }
  {
    Hooks h;
    h.memoryOps = [kHuge](schema::MemoryOps::Builder m) {
      m.getOps()[0].setSize(kHuge);
      m.getOps()[0].setAddress(kHuge);
      m.getOps()[1].setSize(kHuge);
      m.getOps()[0].setStack(0xFFFFFFFF);
    };
    add("memoryOps-sizes-huge", h);
  }
  {
    Hooks h;
    h.stacks = [kHuge](schema::Stacks::Builder s) {
      s.getModules()[0].setStart(kHuge);
      s.getModules()[0].setEnd(0);
      s.getModules()[0].setLoadBias(kHuge);
      s.getModules()[0].setPath("/dev/zero");
      s.getStacks()[0].setId(0);
      s.getStacks()[0].getFrames().set(0, kHuge);
    };
    add("stacks-hostile", h);
  }
  {
    // Addresses at the ends of the range, windows backwards, more counts
    // than reasons, a huge device id.
    Hooks h;
    h.instructionSamples = [kHuge](schema::InstructionSamples::Builder is) {
      is.setDevice(0xFFFFFFFF);
      is.setFromNs(INT64_MAX);
      is.setToNs(INT64_MIN);
      is.getSamples()[0].setIp(kHuge);
      is.getSamples()[1].setIp(0);
      auto counts = is.getSamples()[1].initCounts(5);
      for (unsigned i = 0; i < 5; ++i) counts.set(i, kHuge);
    };
    add("instructionSamples-hostile", h);
    Hooks k;
    k.objects = [kHuge](schema::Objects::Builder o) {
      o.getCreated()[2].setCodeAddress(kHuge);
      o.getCreated()[1].getDebugInfo().setSize(kHuge);
    };
    add("objects-code-and-debug-hostile", k);
  }
  // Replay records: ids naming no object, sizes and offsets past allocations.
  auto replayHook = [&](std::string name, std::function<void(capnp::List<schema::ReplayRecord>::Builder)> f) {
    Hooks h;
    h.replay = f;
    add(name, h, true);
  };
  replayHook("replay-kernel-id-unknown", [](auto l) { record(l, O::LAUNCH_KERNEL).getObjects().set(0, 99); });
  replayHook("replay-list-id-huge", [kHuge](auto l) { record(l, O::LAUNCH_KERNEL).setObject(kHuge); });
  replayHook("replay-context-id-0", [](auto l) { record(l, O::MEM_ALLOC).getObjects().set(0, 0); });
  replayHook("replay-device-index-huge", [kHuge](auto l) { setValue(record(l, O::DEVICE), 1, kHuge); });
  replayHook("replay-alloc-size-huge", [kHuge](auto l) { setValue(record(l, O::MEM_ALLOC), 1, kHuge); });
  replayHook("replay-alloc-size-0", [](auto l) { setValue(record(l, O::MEM_ALLOC, 2), 1, 0); });
  replayHook("replay-copy-size-plus-1", [](auto l) { setValue(record(l, O::COPY), 0, kBytes + 1); });
  replayHook("replay-copy-size-huge", [kHuge](auto l) { setValue(record(l, O::COPY), 0, kHuge); });
  replayHook("replay-copy-size-negative", [kNegative](auto l) { setValue(record(l, O::COPY), 0, kNegative); });
  replayHook("replay-copy-src-outside", [](auto l) {
    record(l, O::COPY).getAddresses().set(1, kHost + 64);
    setValue(record(l, O::COPY), 0, uint64_t{1} << 40);
  });
  replayHook("replay-copy-src-inside-end", [](auto l) { record(l, O::COPY).getAddresses().set(1, kC + kBytes - 4); });
  replayHook("replay-copy-region-huge", [kHuge](auto l) {
    auto r = record(l, O::COPY);
    r.setOp(O::COPY_REGION);
    auto vals = r.initValues(16);
    for (unsigned i = 0; i < 16; ++i) vals.set(i, 1);
    vals.set(3, 0xFFFFFFFF);   // dst width
    vals.set(6, 0xFFFFFFFF);   // dst pitch
    vals.set(7, kHuge);        // dst slice: past 32 bits
  });
  replayHook("replay-copy-region-overflow", [](auto l) {
    auto r = record(l, O::COPY);
    r.setOp(O::COPY_REGION);
    auto vals = r.initValues(16);
    for (unsigned i = 0; i < 16; ++i) vals.set(i, 0xFFFFFFFF);
  });
  replayHook("replay-readBack-offset-huge", [kHuge](auto l) { setValue(record(l, O::READ_BACK), 0, kHuge); });
  replayHook("replay-readBack-offset-plus-1", [](auto l) { setValue(record(l, O::READ_BACK), 0, 1); });
  replayHook("replay-readBack-copy-unknown", [](auto l) { record(l, O::READ_BACK).setObject(12345); });
  replayHook("replay-hostData-offset-huge", [kHuge](auto l) { setValue(record(l, O::HOST_DATA), 1, kHuge); });
  replayHook("replay-hostData-offset-plus-1", [](auto l) { setValue(record(l, O::HOST_DATA), 1, 1); });
  replayHook("replay-hostData-target-copy", [](auto l) {
    auto r = record(l, O::HOST_DATA, 1);
    setValue(r, 0, 1);
    r.setObject(kCopySeq);
  });
  replayHook("replay-kernelArg-size-huge", [kHuge](auto l) { setValue(record(l, O::KERNEL_SET_ARGUMENT), 1, kHuge); });
  replayHook("replay-kernelArg-size-plus-1", [](auto l) { setValue(record(l, O::KERNEL_SET_ARGUMENT), 1, 9); });
  replayHook("replay-kernelArg-index-huge", [](auto l) { setValue(record(l, O::KERNEL_SET_ARGUMENT), 0, 0xFFFFFFFF); });
  replayHook("replay-fill-size-huge", [kHuge](auto l) { setValue(record(l, O::FILL), 0, kHuge); });
  replayHook("replay-fill-pattern-empty", [](auto l) {
    auto p = record(l, O::FILL).getPayload();
    p.setInline(capnp::Data::Reader(nullptr, 0));
    p.setSize(0);
  });
  replayHook("replay-payload-blobOffset-huge", [kHuge](auto l) {
    record(l, O::HOST_DATA).getPayload().setBlobOffset(kHuge);
  });
  replayHook("replay-payload-size-huge", [kHuge](auto l) { record(l, O::HOST_DATA).getPayload().setSize(kHuge); });
  replayHook("replay-payload-blob-unknown", [](auto l) {
    auto b = record(l, O::HOST_DATA).getPayload().getBlob();
    b.setHashHigh(b.getHashHigh() ^ 0x8000);
  });
  replayHook("replay-payload-file-fifo", [fifo](auto l) {
    auto f = record(l, O::HOST_DATA).getPayload().initFile();
    f.setPath(fifo);
    f.setFileSize(kBytes);
  });
  replayHook("replay-payload-file-device", [kHuge](auto l) {
    auto f = record(l, O::HOST_DATA).getPayload().initFile();
    f.setPath("/dev/zero");
    f.setOffset(kHuge);
  });
  replayHook("replay-group-size-huge", [](auto l) {
    auto r = record(l, O::KERNEL_SET_GROUP_SIZE);
    for (unsigned i = 0; i < 3; ++i) r.getValues().set(i, 0xFFFFFFFF);
  });
  replayHook("replay-mem-free-context-gone", [](auto l) {
    // The context destroyed first: the frees name a context that is gone.
    auto last = l[l.size() - 1];
    auto free = record(l, O::MEM_FREE);
    free.setOp(O::CONTEXT_DESTROY);
    free.setObject(2);
    last.setOp(O::MEM_FREE);
    last.setObject(5);
  });
  replayHook("replay-records-seq-huge", [kHuge](auto l) {
    for (auto r : l) r.setSeq(kHuge - r.getSeq());
  });
  replayHook("replay-op-unknown", [](auto l) { l[3].setOp(static_cast<O>(999)); });

  std::vector<Case> out;
  for (const auto& var : v) {
    for (bool compress : {true, false}) {
      Case c;
      c.name = var.name + (compress ? "-zstd" : "-raw");
      c.bytes = build(compress, var.hooks, kernels, var.replay);
      c.replay = var.replay;
      if (var.namesModuleBlob) c.mustName = format::contentHash(kernels.data(), kernels.size()).hex();
      out.push_back(std::move(c));
    }
  }
  return out;
}

// Chunks declaring a raw size the zstd payload truly decodes to, far beyond
// its stored size: decompression bombs within and beyond the limits.
inline Case bomb(ChunkKind kind, uint32_t rawSize, const std::string& name) {
  FileBuilder f(true, {});
  {
    capnp::MallocMessageBuilder m;
    m.initRoot<schema::FileInfo>().setPid(1);
    f.message(ChunkKind::FILE_INFO, m);
  }
  std::vector<uint8_t> out = f.close();
  // The bomb: zeros (an empty root, then padding) of the declared size,
  // compressed as they stream by so that making it costs no memory.
  std::vector<uint8_t> z;
  {
    ZSTD_CCtx* cctx = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 3);
    ZSTD_CCtx_setPledgedSrcSize(cctx, rawSize);
    std::vector<uint8_t> zeros(1 << 20, 0), buf(ZSTD_CStreamOutSize());
    for (uint64_t left = rawSize;;) {
      size_t n = static_cast<size_t>(std::min<uint64_t>(left, zeros.size()));
      left -= n;
      ZSTD_inBuffer in{zeros.data(), n, 0};
      ZSTD_EndDirective mode = left ? ZSTD_e_continue : ZSTD_e_end;
      size_t remaining;
      do {
        ZSTD_outBuffer out{buf.data(), buf.size(), 0};
        remaining = ZSTD_compressStream2(cctx, &out, &in, mode);
        z.insert(z.end(), buf.data(), buf.data() + out.pos);
      } while (mode == ZSTD_e_end ? remaining != 0 : in.pos < in.size);
      if (!left) break;
    }
    ZSTD_freeCCtx(cctx);
  }
  format::ChunkHeader h{static_cast<uint16_t>(kind), format::Codec::zstd, static_cast<uint32_t>(z.size()), rawSize, 0};
  uint8_t head[format::kChunkHeaderSize];
  format::encodeChunkHeader(h, head);
  h.checksum = format::chunkChecksum(head, z.data(), z.size());
  format::encodeChunkHeader(h, head);
  // Appended after the footer's place: the file then has no trailer (a cut
  // file), and the bomb is the last whole chunk, read like any other.
  out.resize(out.size() - format::kFooterSize);
  std::vector<uint8_t> chunk(head, head + sizeof head);
  chunk.insert(chunk.end(), z.begin(), z.end());
  for (int i = 0; i < 20; ++i) out.insert(out.end(), chunk.begin(), chunk.end());
  return {name, std::move(out), false, {}};
}

}  // namespace gtap::test::hostile
