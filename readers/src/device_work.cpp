#include "gtap/readers/device_work.h"

#include <kj/exception.h>
#include <sys/mman.h>

#include "gtap/format/hash.h"
#include "gtap/readers/report_filter.h"

#include <algorithm>
#include <cstdio>
#include <climits>
#include <set>
#include <tuple>
#include <utility>
#include <unordered_map>

namespace gtap::readers {

namespace {
std::string hex(const uint8_t* p, size_t n) {
  std::string s;
  char buf[3];
  for (size_t i = 0; i < n; ++i) {
    std::snprintf(buf, sizeof buf, "%02x", p[i]);
    s += buf;
  }
  return s;
}
std::string_view textView(capnp::Text::Reader t) { return {t.begin(), t.size()}; }

// Asks for transparent huge pages over the whole 2 MiB pages inside a large
// array about to be filled: faulting it in 4 KiB at a time cost more than
// decoding the operations into it. Advice only: refused, nothing changes.
void adviseHugePages(void* p, size_t bytes) {
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + kHuge - 1) & ~(kHuge - 1);
  uintptr_t end = (reinterpret_cast<uintptr_t>(p) + bytes) & ~(kHuge - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}
}  // namespace

std::string directionName(schema::CopyDirection d) {
  switch (d) {
    case schema::CopyDirection::HOST_TO_DEVICE: return "host-to-device";
    case schema::CopyDirection::DEVICE_TO_HOST: return "device-to-host";
    case schema::CopyDirection::DEVICE_TO_DEVICE: return "device-to-device";
    case schema::CopyDirection::HOST_TO_HOST: return "host-to-host";
    default: return "unknown";
  }
}

std::string memoryKindName(schema::MemoryKind k) {
  switch (k) {
    case schema::MemoryKind::HOST: return "host";
    case schema::MemoryKind::DEVICE: return "device";
    case schema::MemoryKind::SHARED: return "shared";
    case schema::MemoryKind::LOCKED: return "locked";
    default: return "unknown";
  }
}

std::string_view opKindText(schema::DeviceOpKind k) {
  switch (k) {
    case schema::DeviceOpKind::KERNEL: return "kernel";
    case schema::DeviceOpKind::COPY: return "copy";
    case schema::DeviceOpKind::FILL: return "fill";
    case schema::DeviceOpKind::BARRIER: return "barrier";
    default: return "other";
  }
}

std::string opKindName(schema::DeviceOpKind k) { return std::string(opKindText(k)); }

const Device::Sample* Device::sampleNear(int64_t nearHostNs, uint8_t bits) const {
  if (samples.empty() || frequencyHz == 0 || bits == 0) return nullptr;
  auto it = std::lower_bound(samples.begin(), samples.end(), nearHostNs,
                             [](const Sample& s, int64_t t) { return s.hostNs < t; });
  if (it == samples.end() || (it != samples.begin() && nearHostNs - (it - 1)->hostNs < it->hostNs - nearHostNs)) --it;
  return &*it;
}

int64_t Device::hostNsFrom(const Sample& sample, uint64_t ticks, uint8_t bits) const {
  // Both readings reduced to the timestamp's width; the difference taken
  // modulo 2^bits and read as signed covers a wrap in either direction.
  uint64_t mask = bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  uint64_t diff = (ticks - sample.ticks) & mask;
  int64_t delta = bits >= 64 ? static_cast<int64_t>(diff)
                             : (diff & (uint64_t{1} << (bits - 1)) ? static_cast<int64_t>(diff) - (int64_t{1} << bits)
                                                                     : static_cast<int64_t>(diff));
  // delta * 1e9 / frequency, exact and truncated toward zero, without
  // overflow: whole seconds of ticks, then the rest.
  constexpr uint64_t kNsPerSecond = 1000000000;
  uint64_t magnitude = delta < 0 ? 0 - static_cast<uint64_t>(delta) : static_cast<uint64_t>(delta);
  uint64_t ns;
  if (frequencyHz == kNsPerSecond) {
    ns = magnitude;
  } else {
    uint64_t seconds = magnitude / frequencyHz, rest = magnitude % frequencyHz;
    // rest * 1e9 fits 64 bits below 18.4 GHz: one 64-bit division then.
    uint64_t part = frequencyHz <= ~uint64_t{0} / kNsPerSecond
                        ? rest * kNsPerSecond / frequencyHz
                        : static_cast<uint64_t>(static_cast<unsigned __int128>(rest) * kNsPerSecond / frequencyHz);
    ns = seconds * kNsPerSecond + part;
  }
  return sample.hostNs + (delta < 0 ? -static_cast<int64_t>(ns) : static_cast<int64_t>(ns));
}

bool Device::toHostNs(uint64_t ticks, uint8_t bits, int64_t nearHostNs, int64_t& out) const {
  const Sample* s = sampleNear(nearHostNs, bits);
  if (!s) return false;
  out = hostNsFrom(*s, ticks, bits);
  return true;
}

const HostModule* DeviceWork::moduleFor(uint64_t address) const {
  for (const auto& [id, m] : modules)
    if (address >= m.start && address < m.end) return &m;
  return nullptr;
}

std::string DeviceWork::queueName(uint64_t queue) const {
  if (queue == 0) return "host";  // an IREE HAL semaphore signal or wait: on no queue
  auto it = objects.find(queue);
  if (it == objects.end()) return "queue#" + std::to_string(queue);
  const Object& o = it->second;
  // IREE HAL command buffers belong to no device gtap numbered.
  if (o.device == ~0u && !o.name.empty()) return o.name + " " + std::to_string(queue);
  std::string dev = "device " + std::to_string(o.device);
  if (auto d = devices.find(o.device); d != devices.end()) dev = d->second.name;
  if (o.kind == schema::ObjectKind::IMMEDIATE_COMMAND_LIST)
    return dev + " immediate list " + std::to_string(queue);
  if (!o.name.empty()) return dev + " " + o.name + " " + std::to_string(queue);
  return dev + " queue " + std::to_string(queue);
}

namespace {

// Device ops are read with their raw ticks beside them; times are converted
// once every clock sample is known.
struct Ticks {
  uint64_t start, end;
};

// What loading and streaming share: operations of either layout into a
// vector, and the chunks beside them (devices, objects, memory, stacks).
class OpReader {
 public:
  OpReader(const Capture& capture, DeviceWork& w, std::vector<DeviceOp>& ops, bool lists)
      : capture_(capture), w_(w), ops_(ops), lists_(lists) {}

  std::vector<Ticks> ticks;

  // Streaming: every `batch` operations, and at the end of each chunk, the
  // operations so far go to `visit` (names and times set) and are dropped,
  // so the same few cached pages hold every batch. Once `visit` says stop,
  // the rest is skipped.
  void streamTo(const std::function<bool(std::span<const DeviceOp>)>* visit, size_t batch) {
    visit_ = visit;
    batch_ = batch;
  }
  bool stopped() const { return stopped_; }
  void flush() {
    if (!visit_ || ops_.empty()) return;
    finish(0);
    if (w_.halJoined) applyJoin();
    if (!stopped_ && !(*visit_)(ops_)) stopped_ = true;
    ops_.clear();
    ticks.clear();
    batchLists_.clear();
  }

  // The work's IREE HAL join on ops_, the next operations in file order.
  void applyJoin() {
    const auto& origins = w_.halOrigins;
    const auto& counts = w_.halDispatchCounts;
    for (DeviceOp& op : ops_) {
      size_t i = index_++;
      if (nextOrigin_ < origins.size() && origins[nextOrigin_].op == i) op.hal = &origins[nextOrigin_++];
      if (nextCount_ < counts.size() && counts[nextCount_].first == i) op.deviceDispatches = counts[nextCount_++].second;
    }
  }

  std::string where(const format::ChunkInfo& c) const {
    return capture_.path() + ": chunk at offset " + std::to_string(c.offset) + ": ";
  }

  // Runs `read` on chunk `c`; what makes the chunk unreadable becomes a note
  // naming it, and the next chunk is read.
  template <class Read>
  void guarded(const format::ChunkInfo& c, Read&& read) {
    try {
      read();
    } catch (const format::FormatError& e) {
      w_.notes.push_back(e.what());
    } catch (const kj::Exception& e) {
      w_.notes.push_back(where(c) + "malformed " + kindName(c.kind) + ": " + e.getDescription().cStr());
    }
  }

  // Room for `more` operations, growing by doubling at least.
  void grow(size_t more) {
    if (visit_) more = std::min(more, batch_);
    if (ops_.capacity() < ops_.size() + more) {
      ops_.reserve(std::max(ops_.size() + more, 2 * ops_.capacity()));
      ticks.reserve(ops_.capacity());
    }
  }

  // One operation of either layout; the lists and texts go into the store
  // (the argument, binding and semaphore lists only when asked for).
  void add(const format::DeviceOpFields& f) {
    if (stopped_) return;
    OpStore& store = *w_.store;
    DeviceOp& x = ops_.emplace_back();
    x.kind = f.kind;
    x.device = f.device;
    x.queue = f.queue;
    x.list = f.list;
    x.kernel = f.kernel;
    x.groupCount = f.groupCount;
    x.groupSize = f.groupSize;
    x.bytes = f.bytes;
    x.direction = f.direction;
    x.thread = f.thread;
    x.appendIndex = f.appendIndex;
    x.appendNs = f.appendNs;
    x.submitNs = f.submitNs;
    x.completedNs = f.completedNs;
    x.timed = f.timed;
    x.stack = f.stack;
    // Notes and methods repeat from row to row: interned when they change.
    if (!f.note.empty()) {
      if (f.note != lastNote_) lastNote_ = store.intern(f.note);
      x.note = lastNote_;
    }
    if (!f.grid.empty()) {
      // Launches repeat their shapes: one copy while the grid stays the same.
      if (!std::equal(f.grid.begin(), f.grid.end(), lastGrid_.begin(), lastGrid_.end()))
        lastGrid_ = store.copy(f.grid.data(), f.grid.size());
      x.gridSize = lastGrid_;
    }
    x.packetHeader = f.packetHeader;
    x.queueIndex = f.queueIndex;
    x.recordedBy = f.recordedBy;
    if (!f.operation.empty()) {
      if (f.operation != lastOperation_) lastOperation_ = store.intern(f.operation);
      x.operation = lastOperation_;
    }
    if (f.counterSet) {
      x.counterSet = f.counterSet;
      x.counterValues = (visit_ ? batchLists_ : store).copy(f.counterValues.data(), f.counterValues.size());
    }
    if (lists_) {
      if (!f.arguments.empty() || !f.bindings.empty() || !f.waits.empty() || !f.signals.empty() ||
          !f.counterRaw.empty()) {
        // A stream's lists last only while their batch is visited.
        OpStore& held = visit_ ? batchLists_ : store;
        DeviceOp::Lists& l = held.allocate<DeviceOp::Lists>(1)[0];
        if (!f.arguments.empty()) l.arguments = held.copy(f.arguments.data(), f.arguments.size());
        if (!f.counterRaw.empty()) l.counterRaw = held.copy(f.counterRaw.data(), f.counterRaw.size());
        if (!f.bindings.empty()) l.bindings = held.copy(f.bindings.data(), f.bindings.size());
        if (!f.waits.empty()) l.waits = held.copy(f.waits.data(), f.waits.size());
        if (!f.signals.empty()) l.signals = held.copy(f.signals.data(), f.signals.size());
        x.lists = &l;
      }
    }
    ticks.push_back({f.startTicks, f.endTicks});
    if (visit_ && ops_.size() >= batch_) flush();
  }

  // The struct list of 1.0-1.3, through the same fields.
  void addStructs(capnp::List<schema::DeviceOp>::Reader ops) {
    grow(ops.size());
    std::vector<uint32_t> grid;
    std::vector<DeviceOp::Binding> bindings;
    std::vector<DeviceOp::SemaphoreValue> waits, signals;
    format::DeviceOpFields f;
    for (auto o : ops) {
      f.kind = o.getKind();
      f.device = o.getDevice();
      f.queue = o.getQueue();
      f.list = o.getCommandList();
      f.kernel = o.getKernel();
      f.groupCount = {};
      f.groupSize = {};
      auto gc = o.getGroupCount();
      auto gs = o.getGroupSize();
      for (unsigned i = 0; i < 3 && i < gc.size(); ++i) f.groupCount[i] = gc[i];
      for (unsigned i = 0; i < 3 && i < gs.size(); ++i) f.groupSize[i] = gs[i];
      f.bytes = o.getBytes();
      f.direction = o.getDirection();
      f.thread = o.getThread();
      f.appendIndex = o.getAppendIndex();
      f.appendNs = o.getAppendNs();
      f.submitNs = o.getSubmitNs();
      f.completedNs = o.getCompletedNs();
      f.timed = o.getTimed();
      f.stack = o.getStack();
      f.startTicks = o.getStartTicks();
      f.endTicks = o.getEndTicks();
      f.note = o.hasNote() ? textView(o.getNote()) : std::string_view();
      grid.clear();
      if (o.hasGridSize())
        for (auto g : o.getGridSize()) grid.push_back(g);
      f.grid = grid;
      f.packetHeader = o.getPacketHeader();
      f.queueIndex = o.getQueueIndex();
      f.arguments = {};
      if (o.hasArguments()) f.arguments = {o.getArguments().begin(), o.getArguments().size()};
      f.recordedBy = o.getRecordedBy();
      bindings.clear();
      if (o.hasBindings())
        for (auto b : o.getBindings()) bindings.push_back({b.getBuffer(), b.getOffset(), b.getLength(), b.getSlot()});
      f.bindings = bindings;
      f.operation = o.hasOperation() ? textView(o.getOperation()) : std::string_view();
      auto semaphores = [](auto in, std::vector<DeviceOp::SemaphoreValue>& out) {
        out.clear();
        for (auto v : in) out.push_back({v.getSemaphore(), v.getValue()});
      };
      semaphores(o.getWaits(), waits);
      semaphores(o.getSignals(), signals);
      f.waits = waits;
      f.signals = signals;
      add(f);
    }
  }

  // A device-ops chunk's operations, of either layout.
  void addChunk(const format::ChunkInfo& c, schema::DeviceOps::Reader root) {
    if (!root.hasEncoded()) {
      addStructs(root.getOps());
      return;
    }
    auto encoded = root.getEncoded();
    grow(std::min<size_t>(root.getCount(), encoded.size() / 2));
    std::string problem = format::decodeDeviceOps(encoded.begin(), encoded.size(), root.getCount(),
                                                  [this](const format::DeviceOpFields& f) {
                                                    add(f);
                                                    return !stopped_;  // a stream that has stopped reads no further
                                                  });
    if (!problem.empty()) w_.notes.push_back(where(c) + "deviceOps: " + problem);
  }

  // A chunk that is not device operations.
  void addOther(schema::ChunkKind kind, format::DecodedChunk& d) {
    DeviceWork& w = w_;
    if (kind == schema::ChunkKind::DEVICES) {
      auto root = d.root<schema::Devices>();
      for (auto dev : root.getDevices()) {
        Device& x = w.devices[dev.getId()];
        x.id = dev.getId();
        x.name = dev.getName();
        x.frequencyHz = dev.getTimerFrequencyHz();
        x.kernelBits = dev.getKernelTimestampBits();
        x.globalBits = dev.getGlobalTimestampBits();
        x.peakFlopsPerSecond = dev.getPeakFlopsPerSecond();
        x.peakBytesPerSecond = dev.getPeakBytesPerSecond();
      }
      for (auto s : root.getSamples()) w.devices[s.getDevice()].samples.push_back({s.getHostNs(), s.getDeviceTicks()});
    } else if (kind == schema::ChunkKind::OBJECTS) {
      auto root = d.root<schema::Objects>();
      for (auto o : root.getCreated()) {
        Object& x = w.objects[o.getId()];
        x.id = o.getId();
        x.kind = o.getKind();
        x.handle = o.getHandle();
        x.device = o.getDevice();
        x.parent = o.getParent();
        x.name = o.getName();
        x.createdNs = o.getCreatedNs();
        if (o.hasBinary()) {
          auto b = o.getBinary();
          x.binarySize = b.getSize();
          x.binaryHash = format::Hash128{b.getHashLow(), b.getHashHigh()}.hex();
          x.binaryHashLow = b.getHashLow();
          x.binaryHashHigh = b.getHashHigh();
        }
        x.binaryFormat = o.getBinaryFormat();
        if (o.hasDebugInfo()) {
          auto b = o.getDebugInfo();
          x.debugInfoSize = b.getSize();
          x.debugInfoHashLow = b.getHashLow();
          x.debugInfoHashHigh = b.getHashHigh();
        }
        x.codeAddress = o.getCodeAddress();
        for (auto kv : o.getProperties()) x.properties.emplace_back(kv.getKey(), kv.getValue());
      }
      for (auto e : root.getDestroyed())
        if (auto it = w.objects.find(e.getId()); it != w.objects.end()) it->second.destroyedNs = e.getDestroyedNs();
    } else if (kind == schema::ChunkKind::MEMORY_OPS) {
      for (auto o : d.root<schema::MemoryOps>().getOps())
        w.memory.push_back({o.getIsFree(), o.getKind(), o.getDevice(), o.getAddress(), o.getSize(), o.getHostNs(),
                            o.getThread(), o.getStack()});
    } else {
      auto root = d.root<schema::Stacks>();
      for (auto m : root.getModules()) {
        auto id = m.getBuildId();
        w.modules[m.getId()] = {m.getId(), m.getPath(), hex(id.begin(), id.size()), m.getLoadBias(), m.getStart(),
                                m.getEnd()};
      }
      for (auto s : root.getStacks()) {
        auto& frames = w.stacks[s.getId()];
        for (auto f : s.getFrames()) frames.push_back(f);
      }
    }
  }

  // Names and host times of ops_[from..], once every object and clock sample
  // is known (the samples sorted).
  void finish(size_t from) {
    DeviceWork& w = w_;
    for (size_t i = from; i < ops_.size(); ++i) {
      DeviceOp& x = ops_[i];
      const Ticks& r = ticks[i];
      if (x.kind == schema::DeviceOpKind::KERNEL) {
        if (!haveLast_ || x.kernel != lastKernel_) {
          auto named = kernelNames_.find(x.kernel);
          if (named == kernelNames_.end()) {
            auto k = w.objects.find(x.kernel);
            std::string_view name =
                w.intern(k != w.objects.end() ? k->second.name : "kernel#" + std::to_string(x.kernel));
            std::string_view module;
            if (k != w.objects.end() && k->second.parent) module = w.intern("module#" + std::to_string(k->second.parent));
            named = kernelNames_.emplace(x.kernel, std::make_pair(name, module)).first;
          }
          lastKernel_ = x.kernel;
          lastNames_ = named->second;
          haveLast_ = true;
        }
        x.name = lastNames_.first;
        x.module = lastNames_.second;
      } else {
        x.name = opKindText(x.kind);
      }
      if (x.timed) {
        if (!lastDevice_ || x.device != lastDeviceId_) {
          auto dev = w.devices.find(x.device);
          lastDevice_ = dev == w.devices.end() ? nullptr : &dev->second;
          lastDeviceId_ = x.device;
        }
        const Device::Sample* sample = lastDevice_ ? lastDevice_->sampleNear(x.submitNs, lastDevice_->kernelBits) : nullptr;
        if (!sample) {
          x.timed = false;
          x.note = "no clock sample for its device";
          continue;
        }
        x.startNs = lastDevice_->hostNsFrom(*sample, r.start, lastDevice_->kernelBits);
        x.endNs = lastDevice_->hostNsFrom(*sample, r.end, lastDevice_->kernelBits);
        if (x.endNs < x.startNs) {
          x.timed = false;
          x.note = "device end before start";
        }
      }
    }
  }

 private:
  const Capture& capture_;
  DeviceWork& w_;
  std::vector<DeviceOp>& ops_;
  bool lists_;
  const std::function<bool(std::span<const DeviceOp>)>* visit_ = nullptr;
  size_t batch_ = SIZE_MAX;
  bool stopped_ = false;
  // Kernel and module names, made once per kernel (kernels are few; ops
  // of one kernel usually come in runs).
  std::unordered_map<uint64_t, std::pair<std::string_view, std::string_view>> kernelNames_;
  uint64_t lastKernel_ = 0;
  std::pair<std::string_view, std::string_view> lastNames_;
  bool haveLast_ = false;
  std::span<const uint32_t> lastGrid_;  // in the store
  std::string_view lastNote_, lastOperation_;  // in the store
  OpStore batchLists_;  // a stream's lists, for one batch
  // Where applyJoin is: the index of the next operation, and the next origin
  // and count to give.
  size_t index_ = 0, nextOrigin_ = 0, nextCount_ = 0;
  // The device of the last timed operation (its samples are complete once
  // finish runs).
  const Device* lastDevice_ = nullptr;
  uint32_t lastDeviceId_ = 0;
};

bool isOther(schema::ChunkKind kind) {
  return kind == schema::ChunkKind::DEVICES || kind == schema::ChunkKind::OBJECTS ||
         kind == schema::ChunkKind::MEMORY_OPS || kind == schema::ChunkKind::STACKS;
}

void sortSamples(DeviceWork& w) {
  for (auto& [id, dev] : w.devices)
    std::sort(dev.samples.begin(), dev.samples.end(), [](const auto& a, const auto& b) { return a.hostNs < b.hostNs; });
}

// The devices, objects, memory operations and stacks, the samples sorted.
void readOthers(const Capture& capture, DeviceWork& w) {
  const auto& reader = capture.reader();
  std::vector<DeviceOp> none;
  OpReader in(capture, w, none, false);
  for (const auto& c : reader.chunks()) {
    auto kind = static_cast<schema::ChunkKind>(c.kind);
    if (!isOther(kind)) continue;
    in.guarded(c, [&] {
      auto d = reader.decode(c);
      in.addOther(kind, d);
    });
  }
  sortSamples(w);
  if (const ReportFilter* filter = capture.filter(); filter && filter->narrowsRecords())
    std::erase_if(w.memory, [&](const MemoryOp& m) { return !filter->keepsMemory(capture, m); });
}

// Notes added since `before` that repeat one made before it are dropped: what
// was wrong with an operations chunk read before is said once.
void dropRepeatedNotes(DeviceWork& w, size_t before) {
  if (w.notes.size() == before) return;
  std::set<std::string> said(w.notes.begin(), w.notes.begin() + static_cast<std::ptrdiff_t>(before));
  auto repeated = std::remove_if(w.notes.begin() + static_cast<std::ptrdiff_t>(before), w.notes.end(),
                                 [&](const std::string& n) { return said.count(n) > 0; });
  w.notes.erase(repeated, w.notes.end());
}

// What the join needs of an operation, some 64 bytes: a device-level kernel,
// or an IREE HAL dispatch, begin or queue_execute on a command buffer.
struct JoinOp {
  enum class Role : uint8_t { device, dispatch, begin, submission };
  std::string_view name;
  uint64_t list;
  int64_t appendNs;
  int64_t submitted;  // when the device runtime saw it submitted
  uint64_t appendIndex;
  uint32_t thread;
  uint32_t index;  // in file order
  Role role;
};

// Operations in file order, kept when the join needs them.
class JoinInput {
 public:
  HalJoin counts;
  std::vector<JoinOp> ops;
  size_t submissions = 0;
  bool tooMany = false;  // more operations than an index holds: nothing joins

  void add(const DeviceOp& op, size_t index) {
    JoinOp::Role role;
    if (op.recordedBy != schema::Api::IREE_HAL) {
      if (op.kind != schema::DeviceOpKind::KERNEL) return;
      ++counts.deviceKernels;
      role = JoinOp::Role::device;
    } else if (!op.list) {
      return;
    } else if (op.operation == "dispatch") {
      role = JoinOp::Role::dispatch;
    } else if (op.operation == "begin") {
      role = JoinOp::Role::begin;
    } else if (op.operation == "queue_execute") {
      role = JoinOp::Role::submission;
      ++submissions;
    } else {
      return;
    }
    if (index >= UINT32_MAX) {
      tooMany = true;
      return;
    }
    ops.push_back({op.name, op.list, op.appendNs, op.submitNs ? op.submitNs : op.appendNs, op.appendIndex, op.thread,
                   static_cast<uint32_t>(index), role});
  }
};

void join(JoinInput& in, DeviceWork& w);

// Every chunk into `w`, the operations joined.
void readWhole(const Capture& capture, DeviceWork& w) {
  const auto& reader = capture.reader();
  OpReader in(capture, w, w.ops, true);
  // Room for every operation at once. Operations of 1.4 on are rows of a few
  // bytes: their chunks are decompressed first (a fourteenth of the struct
  // lists before them) and their counts, each checked against its bytes,
  // size the vector exactly. Struct lists (1.0-1.3) are bounded from their
  // chunks' decoded sizes: a list of N records takes N times the record's
  // size and more. Pages reserved and never written cost nothing.
  struct Rows {
    format::ChunkInfo chunk;
    format::DecodedChunk decoded;
  };
  std::vector<Rows> rows;
  {
    size_t perOp = (size_t{schema::DeviceOp::_capnpPrivate::dataWordSize} +
                    schema::DeviceOp::_capnpPrivate::pointerCount) * sizeof(capnp::word);
    size_t bound = 0;
    for (const auto& c : reader.chunks()) {
      if (static_cast<schema::ChunkKind>(c.kind) != schema::ChunkKind::DEVICE_OPS) continue;
      if (reader.formatMinor() < 4) {
        bound += c.rawSize / perOp;
        continue;
      }
      in.guarded(c, [&] {
        auto d = reader.decode(c);
        auto root = d.root<schema::DeviceOps>();
        if (root.hasEncoded()) bound += std::min<size_t>(root.getCount(), root.getEncoded().size() / 2);
        else bound += c.rawSize / perOp;
        rows.push_back({c, std::move(d)});
      });
    }
    w.ops.reserve(bound);
    in.ticks.reserve(bound);
    adviseHugePages(w.ops.data(), w.ops.capacity() * sizeof(DeviceOp));
    adviseHugePages(in.ticks.data(), in.ticks.capacity() * sizeof(Ticks));
  }
  for (auto& r : rows) in.guarded(r.chunk, [&] { in.addChunk(r.chunk, r.decoded.root<schema::DeviceOps>()); });
  rows.clear();
  for (const auto& c : reader.chunks()) {
    auto kind = static_cast<schema::ChunkKind>(c.kind);
    bool ops = kind == schema::ChunkKind::DEVICE_OPS;
    if (!isOther(kind) && !ops) continue;
    if (ops && reader.formatMinor() >= 4) continue;  // read above
    in.guarded(c, [&] {
      auto d = reader.decode(c);
      if (ops) in.addChunk(c, d.root<schema::DeviceOps>());
      else in.addOther(kind, d);
    });
  }
  sortSamples(w);
  in.finish(0);
  joinHalDispatches(w);
}

}  // namespace

DeviceWork loadDeviceWork(const Capture& capture) {
  DeviceWork w;
  readWhole(capture, w);
  return w;
}

bool streamDeviceWork(const Capture& capture, DeviceWork& w, bool lists,
                      const std::function<bool(std::span<const DeviceOp>)>& visit) {
  readOthers(capture, w);
  return streamDeviceOps(capture, w, lists, visit);
}

namespace {

// Every operation, whatever the capture's filter: what the IREE HAL join
// counts in file order.
bool streamRecordedOps(const Capture& capture, DeviceWork& w, bool lists,
                       const std::function<bool(std::span<const DeviceOp>)>& visit) {
  const auto& reader = capture.reader();
  size_t before = w.notes.size();
  std::vector<DeviceOp> batch;
  OpReader in(capture, w, batch, lists);
  // Batches of a few thousand: a megabyte of operations, used again and again.
  in.streamTo(&visit, 4096);
  bool whole = true;
  for (const auto& c : reader.chunks()) {
    if (static_cast<schema::ChunkKind>(c.kind) != schema::ChunkKind::DEVICE_OPS) continue;
    in.guarded(c, [&] {
      auto d = reader.decode(c);
      in.addChunk(c, d.root<schema::DeviceOps>());
    });
    in.flush();
    if (in.stopped()) {
      whole = false;
      break;
    }
  }
  dropRepeatedNotes(w, before);
  return whole;
}

}  // namespace

bool streamEveryDeviceOp(const Capture& capture, DeviceWork& w, bool lists,
                         const std::function<bool(std::span<const DeviceOp>)>& visit) {
  readOthers(capture, w);
  return streamRecordedOps(capture, w, lists, visit);
}

bool streamDeviceOps(const Capture& capture, DeviceWork& w, bool lists,
                     const std::function<bool(std::span<const DeviceOp>)>& visit) {
  const ReportFilter* filter = capture.filter();
  if (!filter || !filter->narrowsRecords()) return streamRecordedOps(capture, w, lists, visit);
  std::vector<DeviceOp> kept;
  return streamRecordedOps(capture, w, lists, [&](std::span<const DeviceOp> ops) {
    kept.clear();
    for (const DeviceOp& op : ops)
      if (filter->keepsOp(capture, op)) kept.push_back(op);
    return kept.empty() || visit(kept);
  });
}

void streamDeviceWorkJoined(const Capture& capture, DeviceWork& w,
                            const std::function<void(std::span<const DeviceOp>)>& visit,
                            const std::function<void()>& restart) {
  bool joins = !streamDeviceWork(capture, w, false, [&](std::span<const DeviceOp> ops) {
    auto hal = std::find_if(ops.begin(), ops.end(), joinsHal);
    visit(ops.first(static_cast<size_t>(hal - ops.begin())));
    return hal == ops.end();
  });
  if (!joins) return;
  joinHalStreamed(capture, w);
  if (restart) restart();
  streamDeviceOps(capture, w, false, [&](std::span<const DeviceOp> ops) {
    visit(ops);
    return true;
  });
}

void joinHalStreamed(const Capture& capture, DeviceWork& w) {
  w.halJoined = false;
  JoinInput in;
  size_t index = 0;
  streamRecordedOps(capture, w, false, [&](std::span<const DeviceOp> ops) {
    for (const DeviceOp& op : ops) in.add(op, index++);
    return true;
  });
  join(in, w);
}

bool holdsHalWork(const Capture& capture) {
  const auto& reader = capture.reader();
  for (const auto& c : reader.chunks()) {
    if (static_cast<schema::ChunkKind>(c.kind) != schema::ChunkKind::DEVICE_OPS) continue;
    bool found = false;
    // A chunk that cannot be read holds nothing here; the reading that
    // follows says what is wrong with it.
    try {
      auto d = reader.decode(c);
      auto root = d.root<schema::DeviceOps>();
      if (root.hasEncoded()) {
        auto encoded = root.getEncoded();
        format::decodeDeviceOps(encoded.begin(), encoded.size(), root.getCount(), [&](const format::DeviceOpFields& f) {
          found = f.recordedBy == schema::Api::IREE_HAL && f.list;
          return !found;
        });
      } else {
        for (auto o : root.getOps())
          if (o.getRecordedBy() == schema::Api::IREE_HAL && o.getCommandList()) {
            found = true;
            break;
          }
      }
    } catch (const format::FormatError&) {
    } catch (const kj::Exception&) {
    }
    if (found) return true;
  }
  return false;
}

void visitDeviceWork(const Capture& capture, DeviceWork& work, bool lists,
                     const std::function<void(std::span<const DeviceOp>)>& visit) {
  readOthers(capture, work);
  if (holdsHalWork(capture)) joinHalStreamed(capture, work);
  streamDeviceOps(capture, work, lists, [&](std::span<const DeviceOp> ops) {
    visit(ops);
    return true;
  });
}

bool isHalSubmission(const DeviceOp& op) {
  return op.recordedBy == schema::Api::IREE_HAL && op.list && op.operation == "queue_execute";
}

bool joinsHal(const DeviceOp& op) { return op.recordedBy == schema::Api::IREE_HAL && op.list; }

void joinHalDispatches(DeviceWork& w) {
  w.halJoined = false;
  JoinInput in;
  // Most captures have no HAL submissions: counted first, nothing is kept.
  for (DeviceOp& op : w.ops) {
    op.hal = nullptr;
    op.deviceDispatches = 0;
    in.counts.deviceKernels += op.recordedBy != schema::Api::IREE_HAL && op.kind == schema::DeviceOpKind::KERNEL;
    in.submissions += isHalSubmission(op);
  }
  if (in.submissions) {
    in = {};
    for (size_t i = 0; i < w.ops.size(); ++i) in.add(w.ops[i], i);
  }
  join(in, w);
  if (!w.halJoined) return;
  for (const HalOrigin& o : w.halOrigins) w.ops[o.op].hal = &o;
  for (const auto& [index, count] : w.halDispatchCounts) w.ops[index].deviceDispatches = count;
}

namespace {

void join(JoinInput& in, DeviceWork& w) {
  w.halJoin = in.counts;
  w.halJoin.notFromHal = w.halJoin.deviceKernels;
  w.halOrigins = {};
  w.halDispatchCounts.clear();
  w.halJoined = true;
  if (!in.submissions || in.tooMany) {
    if (in.tooMany) w.notes.push_back("IREE HAL dispatches were not joined: the capture holds more than 2^32 operations");
    return;
  }
  const std::vector<JoinOp>& j = in.ops;
  // Device dispatches by kernel name, in the order they were submitted, and
  // per position the next one not taken at or after it (a union-find, so a
  // long run of taken ones is skipped once).
  struct Candidates {
    std::vector<size_t> ops;
    std::vector<size_t> next;
  };
  // A command buffer's dispatches of one name between two of its begins, in
  // recording order. Names take disjoint candidates, so each group joins on
  // its own. Once its dispatch at `limit` found every candidate submitted
  // since then taken, it and all later ones (recorded no earlier) never join:
  // an execution tries the group only up to there.
  struct Group {
    Candidates* candidates = nullptr;
    std::vector<size_t> dispatches;
    size_t limit = SIZE_MAX;
  };
  // Per command buffer: its dispatches and begins in recording order, and per
  // stretch between begins (the first before any begin) its groups, ordered
  // by when their first dispatch was recorded; the submissions in the order
  // they were made.
  struct Recording {
    std::vector<size_t> dispatches;
    std::vector<int64_t> dispatchNs;
    std::vector<int64_t> begins;
    std::vector<std::vector<Group>> stretches;
  };
  std::unordered_map<uint64_t, Recording> buffers;
  std::vector<size_t> submissions;
  std::unordered_map<std::string_view, Candidates> device;
  auto recorded = [&](size_t i) { return std::make_tuple(j[i].appendNs, j[i].thread, j[i].appendIndex); };
  for (size_t i = 0; i < j.size(); ++i) {
    const JoinOp& op = j[i];
    switch (op.role) {
      case JoinOp::Role::device: device[op.name].ops.push_back(i); break;
      case JoinOp::Role::dispatch: buffers[op.list].dispatches.push_back(i); break;
      case JoinOp::Role::begin: buffers[op.list].begins.push_back(op.appendNs); break;
      case JoinOp::Role::submission: submissions.push_back(i); break;
    }
  }
  for (auto& [name, c] : device) {
    std::stable_sort(c.ops.begin(), c.ops.end(), [&](size_t a, size_t b) { return j[a].submitted < j[b].submitted; });
    c.next.resize(c.ops.size() + 1);
    for (size_t k = 0; k <= c.ops.size(); ++k) c.next[k] = k;
  }
  for (auto& [list, r] : buffers) {
    std::sort(r.dispatches.begin(), r.dispatches.end(), [&](size_t a, size_t b) { return recorded(a) < recorded(b); });
    std::sort(r.begins.begin(), r.begins.end());
    r.dispatchNs.reserve(r.dispatches.size());
    for (size_t d : r.dispatches) r.dispatchNs.push_back(j[d].appendNs);
    // A dispatch belongs to the stretch after the last begin at or before it.
    r.stretches.resize(r.begins.size() + 1);
    std::unordered_map<const Candidates*, size_t> groupOf;
    size_t stretch = SIZE_MAX;
    auto begin = r.begins.begin();
    for (size_t d : r.dispatches) {
      int64_t ns = j[d].appendNs;
      while (begin != r.begins.end() && *begin <= ns) ++begin;
      if (static_cast<size_t>(begin - r.begins.begin()) != stretch) {
        stretch = begin - r.begins.begin();
        groupOf = {};  // clear() would sweep every bucket a large stretch left
      }
      auto candidates = device.find(j[d].name);
      if (candidates == device.end()) continue;
      auto& groups = r.stretches[stretch];
      auto [g, added] = groupOf.try_emplace(&candidates->second, groups.size());
      if (added) groups.push_back({&candidates->second, {}, SIZE_MAX});
      groups[g->second].dispatches.push_back(d);
    }
  }
  std::sort(submissions.begin(), submissions.end(), [&](size_t a, size_t b) { return recorded(a) < recorded(b); });
  auto findUntaken = [](std::vector<size_t>& next, size_t k) {
    size_t root = k;
    while (next[root] != root) root = next[root];
    while (next[k] != root) k = std::exchange(next[k], root);
    return root;
  };
  std::vector<HalOrigin> origins;
  std::unordered_map<size_t, uint32_t> became;  // HAL dispatch (in j) -> device dispatches
  for (size_t s : submissions) {
    auto r = buffers.find(j[s].list);
    if (r == buffers.end()) continue;
    Recording& rec = r->second;
    int64_t at = j[s].appendNs;
    // What the buffer held then: recorded since its last begin before the submission.
    auto begin = std::upper_bound(rec.begins.begin(), rec.begins.end(), at);
    int64_t since = begin == rec.begins.begin() ? INT64_MIN : *(begin - 1);
    w.halJoin.executions += std::upper_bound(rec.dispatchNs.begin(), rec.dispatchNs.end(), at) -
                            std::lower_bound(rec.dispatchNs.begin(), rec.dispatchNs.end(), since);
    auto& groups = rec.stretches[begin - rec.begins.begin()];
    // Groups that can join nothing more are dropped as they are met.
    size_t kept = 0;
    size_t g = 0;
    for (; g < groups.size(); ++g) {
      Group& group = groups[g];
      if (j[group.dispatches.front()].appendNs > at) break;  // this and later ones: not recorded yet
      auto& list = group.candidates->ops;
      auto& next = group.candidates->next;
      for (size_t p = 0; p < group.dispatches.size() && p < group.limit; ++p) {
        size_t d = group.dispatches[p];
        const JoinOp& hal = j[d];
        if (hal.appendNs > at) break;
        // Submitted no earlier than the dispatch was recorded.
        size_t k = std::partition_point(list.begin(), list.end(),
                                        [&](size_t i) { return j[i].submitted < hal.appendNs; }) - list.begin();
        k = findUntaken(next, k);
        if (k == list.size()) {
          group.limit = p;
          break;
        }
        next[k] = k + 1;
        origins.push_back({j[list[k]].index, hal.index, j[s].index, j[s].thread, j[s].appendIndex, hal.list, hal.name,
                           hal.appendNs, j[s].appendNs});
        ++became[d];
        ++w.halJoin.joined;
      }
      if (group.limit == 0) continue;
      if (kept != g) groups[kept] = std::move(group);
      ++kept;
    }
    if (kept != g) {
      std::move(groups.begin() + g, groups.end(), groups.begin() + kept);
      groups.resize(kept + (groups.size() - g));
    }
  }
  w.halJoin.notFromHal = w.halJoin.deviceKernels - w.halJoin.joined;
  std::sort(origins.begin(), origins.end(), [](const HalOrigin& a, const HalOrigin& b) { return a.op < b.op; });
  auto stored = w.store->allocate<HalOrigin>(origins.size());
  std::copy(origins.begin(), origins.end(), stored.begin());
  w.halOrigins = stored;
  w.halDispatchCounts.reserve(became.size());
  for (const auto& [d, count] : became) w.halDispatchCounts.emplace_back(j[d].index, count);
  std::sort(w.halDispatchCounts.begin(), w.halDispatchCounts.end());
}

}  // namespace

}  // namespace gtap::readers
