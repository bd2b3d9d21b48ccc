#include "tracker.h"

#include <elf.h>
#include <hsa/amd_hsa_signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "chunk_producer.h"
#include "clock.h"
#include "hsa_tables.h"
#include "log.h"
#include "profile_records.h"
#include "replay_stream.h"
#include "session.h"
#include "stack_table.h"

namespace gtap::hsa {

namespace {

using core::profile::kNoDevice;
constexpr int64_t kClockSampleIntervalNs = 50'000'000;
// Kernarg segments larger than this are not copied into the file (AQL
// programs keep them far smaller; the limit guards against a wrong size).
constexpr uint32_t kMaxKernargBytes = 64 * 1024;
constexpr uint16_t kPacketTypeMask = (1u << HSA_PACKET_HEADER_WIDTH_TYPE) - 1;

uint16_t packetType(uint16_t header) { return header & kPacketTypeMask; }

uint32_t threadIdOf(const core::CallScope& scope) {
  return scope.thread() ? scope.thread()->id : core::currentThreadId();
}

struct DeviceInfo {
  uint32_t id = 0;
  hsa_agent_t agent{};
  bool gpu = false;
  int64_t lastSampleNs = 0;
  uint64_t copyQueue = 0;  // gtap id of the object that stands for its copy engine
};

struct KernelInfo {
  uint64_t id = 0;
  uint32_t kernargSize = 0;
  bool wanted = true;  // its name passes GTAP_KERNEL_FILTER
};

struct Timed;

struct ModuleInfo {
  uint64_t id = 0;
  hsa_agent_t agent{};
  std::vector<uint8_t> bytes;  // kept until the executable is frozen
};

struct ExecutableInfo {
  uint64_t id = 0;
  std::vector<ModuleInfo> modules;
  std::vector<uint64_t> kernelObjects;
};

struct ReaderInfo {
  const void* data = nullptr;  // from memory: the program's bytes (valid until the reader is destroyed)
  size_t size = 0;
  std::vector<uint8_t> owned;  // from a file: read when the reader was made
};

struct Allocation {
  uint64_t size = 0;
  schema::MemoryKind kind = schema::MemoryKind::UNKNOWN;
  uint32_t device = kNoDevice;
};

// A packet or copy gtap times: its record, gtap's completion signal, and the
// program's, which gtap signals once the work is done.
struct Timed {
  core::profile::OpRecord rec;
  hsa_signal_t mine{};
  hsa_signal_t program{};
  hsa_agent_t agent{};  // packets: the queue's agent, for the dispatch time
};
struct QueueInfo {
  uint64_t id = 0;
  uint32_t device = kNoDevice;
  hsa_agent_t agent{};
  hsa_queue_t* queue = nullptr;
  std::deque<Timed> inFlight;  // packets gtap times, in queue order (under the tracker's lock)
};

// An async copy gtap times through a completion handler. Whoever sets
// `finished` first (the handler, or a drain at exit or shut-down) reads it;
// the handler alone recycles the entry.
struct Pending : Timed {
  std::atomic<bool> finished{false};
};

// The times gtap read for work whose completion signal was the program's, so
// the program's own profiling queries on that signal get them.
struct ProgramTimes {
  bool copy = false;
  uint64_t start = 0, end = 0;
};

hsa_signal_value_t signalValue(hsa_signal_t s) { return GTAP_HSA_REAL(hsa_signal_load_relaxed)(s); }

// The program's stack at a doorbell. The packet handler runs inside the
// runtime, inside gtap's wrapper of the doorbell store: the frames up to that
// wrapper (the runtime's queue machinery) are not the program's.
std::vector<uint64_t> doorbellStack(uint32_t depth) {
  std::vector<uint64_t> frames = core::captureStack(depth + 24);
  size_t i = 0;
  while (i < frames.size() && !core::isGtapAddress(frames[i])) ++i;
  if (i == frames.size()) i = 0;  // no wrapper below: keep what there is
  while (i < frames.size() && core::isGtapAddress(frames[i])) ++i;
  frames.erase(frames.begin(), frames.begin() + static_cast<std::ptrdiff_t>(i));
  if (frames.size() > depth) frames.resize(depth);
  return frames;
}

}  // namespace


struct Tracker::Impl {
  std::mutex mu;
  std::vector<DeviceInfo> devices;
  std::unordered_map<uint64_t, uint32_t> deviceOfAgent;
  std::unordered_map<uint64_t, std::pair<schema::MemoryKind, uint32_t>> pools;  // pool or region -> kind, device
  std::unordered_map<uint64_t, KernelInfo> kernels;                             // by kernel object
  std::unordered_map<uint64_t, ExecutableInfo> executables;
  std::unordered_map<uint64_t, ReaderInfo> readers;
  std::map<uint64_t, Allocation> allocations;  // by address
  std::map<uint64_t, uint64_t> lockedRanges;    // host address -> size
  std::unordered_map<hsa_queue_t*, QueueInfo*> queues;
  std::unordered_set<Pending*> outstanding;
  std::vector<Pending*> freePending;
  std::vector<hsa_signal_t> freeSignals;        // interrupt signals (async copies)
  std::vector<hsa_signal_t> freePacketSignals;  // signals only the device waits on (packets)
  std::unordered_map<uint64_t, ProgramTimes> programTimes;  // by the program's signal handle
  uint64_t timestampFrequency = 1'000'000'000;
  // Kernel dispatch packets seen on doorbells, in the order they were: the
  // dispatch numbers of GTAP_DISPATCH_RANGE.
  uint64_t dispatches = 0;
  bool loaded = false;
  bool canTime = false;  // the runtime has every entry timing needs
  bool warnedIntercept = false;
  uint32_t stackDepth = 32;
  core::profile::Outbox out;
  core::profile::Outbox spare;  // emptied by the writer, swapped in at the next flush

  uint32_t deviceOf(hsa_agent_t agent) {
    auto it = deviceOfAgent.find(agent.handle);
    return it == deviceOfAgent.end() ? kNoDevice : it->second;
  }
  void sampleClockLocked(DeviceInfo& d);
  uint64_t objectLocked(schema::ObjectKind kind, uint64_t handle, uint32_t device, uint64_t parent,
                        std::string name, uint32_t thread, core::profile::ObjectRecord extras = {});
  hsa_signal_t acquireSignalLocked();
  hsa_signal_t acquirePacketSignalLocked();
  // Reads the packets of `q` that have completed, in order, up to the first
  // that has not (the device signals gtap's signal; nothing waits for it).
  void collectLocked(QueueInfo& q);
  void collectAllLocked() {
    for (auto& [handle, q] : queues) collectLocked(*q);
  }
  Pending* acquirePendingLocked();
  // Starts timing `rec`: gtap's signal with a completion handler. False when
  // the runtime would not take the handler (then nothing is swapped).
  bool armLocked(Pending* p);
  // Reads the times of a finished copy and hands its completion to the program.
  void completeCopy(Timed& t);
  schema::CopyDirection directionOf(const void* dst, const void* src);
  static void interceptHandler(const void* packets, uint64_t count, uint64_t userIndex, void* data,
                               hsa_amd_queue_intercept_packet_writer writer);
  // interceptHandler's work; `kept` is how many packets the queue had in
  // flight before this doorbell's, `written` whether the writer was called.
  static void interceptPackets(QueueInfo* queue, const void* packets, uint64_t count, uint64_t userIndex,
                               hsa_amd_queue_intercept_packet_writer writer, size_t& kept, bool& written);
  static bool onSignalled(hsa_signal_value_t value, void* arg);
  void drainLocked(bool runtimeEnding);
};

Tracker& Tracker::get() {
  static Tracker* t = new Tracker();  // lives until the process ends
  return *t;
}

Tracker::Tracker() : impl_(std::make_unique<Impl>()) { impl_->stackDepth = core::config().stackDepth; }

// --- agents, pools and the clock ---------------------------------------------

// The system-domain clock (what the profiling queries return) against gtap's
// host clock: the tightest of a few brackets.
void Tracker::Impl::sampleClockLocked(DeviceInfo& d) {
  int64_t bestWidth = INT64_MAX, bestNs = 0;
  uint64_t bestTicks = 0;
  for (int attempt = 0; attempt < 3; ++attempt) {
    uint64_t ts = 0;
    int64_t before = core::monotonicNs();
    if (GTAP_HSA_CALL(hsa_system_get_info, HSA_SYSTEM_INFO_TIMESTAMP, &ts) != HSA_STATUS_SUCCESS) return;
    int64_t after = core::monotonicNs();
    if (after - before < bestWidth) {
      bestWidth = after - before;
      bestNs = before + (after - before) / 2;
      bestTicks = ts;
    }
  }
  d.lastSampleNs = bestNs;
  out.samples.push_back({d.id, bestNs, bestTicks});
}

namespace {

std::string agentString(hsa_agent_t agent, hsa_agent_info_t attribute, size_t size) {
  std::vector<char> buf(size + 1, '\0');
  if (GTAP_HSA_CALL(hsa_agent_get_info, agent, attribute, buf.data()) != HSA_STATUS_SUCCESS) return {};
  return std::string(buf.data());
}

}  // namespace

void Tracker::runtimeLoaded() {
  Impl& m = *impl_;
  std::lock_guard<std::mutex> lock(m.mu);
  m.loaded = true;
  m.canTime = GTAP_HSA_REAL(hsa_amd_queue_intercept_create) && GTAP_HSA_REAL(hsa_amd_queue_intercept_register) &&
              GTAP_HSA_REAL(hsa_signal_create) && GTAP_HSA_REAL(hsa_amd_signal_async_handler) &&
              GTAP_HSA_REAL(hsa_signal_load_relaxed) && GTAP_HSA_REAL(hsa_signal_store_relaxed) &&
              GTAP_HSA_REAL(hsa_signal_store_screlease) && GTAP_HSA_REAL(hsa_signal_subtract_screlease) &&
              GTAP_HSA_REAL(hsa_amd_profiling_get_dispatch_time) &&
              GTAP_HSA_REAL(hsa_amd_profiling_get_async_copy_time) &&
              GTAP_HSA_REAL(hsa_amd_profiling_set_profiler_enabled);
  if (!m.canTime && recordKernels())
    core::logLine("the HSA runtime lacks entries gtap needs to see packets and time them; HSA device work is not recorded");
  uint64_t frequency = 0;
  if (GTAP_HSA_CALL(hsa_system_get_info, HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY, &frequency) == HSA_STATUS_SUCCESS &&
      frequency)
    m.timestampFrequency = frequency;
  if (m.devices.empty()) {
    // Agents in the runtime's order; GPUs become devices (ids per file).
    std::vector<hsa_agent_t> agents;
    GTAP_HSA_CALL(hsa_iterate_agents, 
        [](hsa_agent_t a, void* v) {
          static_cast<std::vector<hsa_agent_t>*>(v)->push_back(a);
          return HSA_STATUS_SUCCESS;
        },
        &agents);
    for (hsa_agent_t agent : agents) {
      hsa_device_type_t type{};
      GTAP_HSA_CALL(hsa_agent_get_info, agent, HSA_AGENT_INFO_DEVICE, &type);
      DeviceInfo d;
      d.agent = agent;
      d.gpu = type == HSA_DEVICE_TYPE_GPU;
      d.id = static_cast<uint32_t>(m.devices.size());
      core::profile::DeviceRecord r;
      r.id = d.id;
      r.api = schema::Api::HSA;
      r.handle = agent.handle;
      std::string product = agentString(agent, static_cast<hsa_agent_info_t>(HSA_AMD_AGENT_INFO_PRODUCT_NAME), 64);
      std::string name = agentString(agent, HSA_AGENT_INFO_NAME, 64);
      r.name = product.empty() ? name : product + " (" + name + ")";
      std::string vendor = agentString(agent, HSA_AGENT_INFO_VENDOR_NAME, 64);
      r.vendorId = vendor == "AMD" ? 0x1002 : 0;
      uint32_t chip = 0;
      if (GTAP_HSA_CALL(hsa_agent_get_info, agent, static_cast<hsa_agent_info_t>(HSA_AMD_AGENT_INFO_CHIP_ID), &chip) ==
          HSA_STATUS_SUCCESS)
        r.deviceId = chip;
      std::string uuid = agentString(agent, static_cast<hsa_agent_info_t>(HSA_AMD_AGENT_INFO_UUID), 21);
      r.uuid.assign(uuid.begin(), uuid.end());
      // Device times are read through the profiling API, which returns them in
      // the system domain: the device's "ticks" are system timestamps.
      r.frequency = m.timestampFrequency;
      r.kernelBits = 64;
      r.globalBits = 64;
      m.deviceOfAgent[agent.handle] = d.id;
      if (d.gpu) m.sampleClockLocked(d);
      m.devices.push_back(d);
      if (d.gpu) m.out.devices.push_back(std::move(r));
    }
    // Pools and regions by owner, for the kind of what is allocated from them.
    struct Owner {
      Impl* impl;
      std::pair<schema::MemoryKind, uint32_t> kind;
    };
    for (const DeviceInfo& d : m.devices) {
      Owner owner{&m, {d.gpu ? schema::MemoryKind::DEVICE : schema::MemoryKind::HOST, d.gpu ? d.id : kNoDevice}};
      GTAP_HSA_CALL(hsa_amd_agent_iterate_memory_pools, 
          d.agent,
          [](hsa_amd_memory_pool_t p, void* v) {
            auto* o = static_cast<Owner*>(v);
            o->impl->pools.emplace(p.handle, o->kind);
            return HSA_STATUS_SUCCESS;
          },
          &owner);
      GTAP_HSA_CALL(hsa_agent_iterate_regions, 
          d.agent,
          [](hsa_region_t r, void* v) {
            auto* o = static_cast<Owner*>(v);
            o->impl->pools.emplace(r.handle, o->kind);
            return HSA_STATUS_SUCCESS;
          },
          &owner);
    }
  } else {
    for (DeviceInfo& d : m.devices)
      if (d.gpu) m.sampleClockLocked(d);
  }
  if (recordKernels()) GTAP_HSA_CALL(hsa_amd_profiling_async_copy_enable, true);
  static std::atomic<bool> told{false};
  core::replay::notReplayed(told, "HSA programs are not replayed (gtap replays Level Zero work)");
}

void Tracker::runtimeUnloading() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->drainLocked(true);
  impl_->loaded = false;
  // Signals die with the runtime; the next hsa_init starts afresh.
  impl_->freeSignals.clear();
  impl_->freePacketSignals.clear();
  impl_->programTimes.clear();
}

void Tracker::processExiting() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (!impl_->loaded) return;
  impl_->drainLocked(false);
  // The runtime may be torn down from here on (its own exit handlers): gtap
  // stops touching its signals, and packets still to come pass untimed.
  impl_->loaded = false;
}

// Work whose signal the device has reached but whose handler has not run yet
// is read now; at shut-down, work that never completed is written untimed.
void Tracker::Impl::drainLocked(bool runtimeEnding) {
  if (!canTime) return;
  collectAllLocked();
  if (runtimeEnding)
    for (auto& [handle, q] : queues) {
      for (Timed& t : q->inFlight) {
        t.rec.note = "the runtime shut down before it completed";
        out.ops.push_back(std::move(t.rec));
      }
      q->inFlight.clear();
    }
  std::vector<Pending*> done;
  for (Pending* p : outstanding)
    if (signalValue(p->mine) == 0 || runtimeEnding) done.push_back(p);
  for (Pending* p : done) {
    if (p->finished.exchange(true)) continue;
    outstanding.erase(p);
    if (signalValue(p->mine) == 0) {
      Timed copy = *p;  // the handler may recycle `p` as soon as it runs
      mu.unlock();
      completeCopy(copy);
      mu.lock();
    } else {
      p->rec.note = "the runtime shut down before it completed";
      out.ops.push_back(std::move(p->rec));
    }
    // The handler may still run (or the runtime is gone): the entry is not reused.
  }
}

// --- objects ----------------------------------------------------------------------

uint64_t Tracker::Impl::objectLocked(schema::ObjectKind kind, uint64_t handle, uint32_t device, uint64_t parent,
                                     std::string name, uint32_t thread, core::profile::ObjectRecord extras) {
  extras.id = core::profile::nextObjectId();
  extras.kind = kind;
  extras.handle = handle;
  extras.device = device;
  extras.parent = parent;
  extras.name = std::move(name);
  extras.ticks = core::nowTicks();
  extras.thread = thread;
  uint64_t id = extras.id;
  out.created.push_back(std::move(extras));
  return id;
}

// --- queues and packets ------------------------------------------------------------

hsa_status_t Tracker::createQueue(core::RealCall<decltype(&::hsa_queue_create)>& real, hsa_agent_t agent,
                                  uint32_t size, hsa_queue_type32_t type,
                                  void (*callback)(hsa_status_t, hsa_queue_t*, void*), void* data,
                                  uint32_t privateSegmentSize, uint32_t groupSegmentSize, hsa_queue_t** queue,
                                  const core::CallScope& scope) {
  Impl& m = *impl_;
  bool intercept;
  {
    std::lock_guard<std::mutex> lock(m.mu);
    intercept = recordKernels() && m.canTime && m.loaded && scope.thread();
  }
  // Made before the queue, which lives as long as the process (a late packet
  // may still name it): once the runtime has made the queue, nothing that can
  // fail comes before its packet handler is registered.
  auto made = std::make_unique<QueueInfo>();
  hsa_status_t status = HSA_STATUS_ERROR;
  if (intercept) {
    status = GTAP_HSA_REAL(hsa_amd_queue_intercept_create)(agent, size, type, callback, data, privateSegmentSize,
                                                            groupSegmentSize, queue);
    if (status == HSA_STATUS_SUCCESS) {
      real.made(status);  // the program's queue: hsa_queue_create is not to be called after this
    } else {
      // What the program asked for, as it asked: its own call decides.
      intercept = false;
      std::lock_guard<std::mutex> lock(m.mu);
      if (!m.warnedIntercept) {
        m.warnedIntercept = true;
        core::logLine("the HSA runtime refused an intercept queue (status 0x%x); packets on such queues are not seen",
                      static_cast<unsigned>(status));
      }
    }
  }
  if (!intercept) status = real(agent, size, type, callback, data, privateSegmentSize, groupSegmentSize, queue);
  if (status != HSA_STATUS_SUCCESS || !queue || !*queue) return status;
  QueueInfo* info = made.release();
  info->agent = agent;
  info->queue = *queue;
  if (intercept) {
    if (GTAP_HSA_REAL(hsa_amd_queue_intercept_register)(*queue, &Impl::interceptHandler, info) != HSA_STATUS_SUCCESS)
      core::logLine("the HSA runtime refused gtap's packet handler; packets on queue %p are not seen",
                    static_cast<void*>(*queue));
    GTAP_HSA_REAL(hsa_amd_profiling_set_profiler_enabled)(*queue, 1);
  }
  std::lock_guard<std::mutex> lock(m.mu);
  info->device = m.deviceOf(agent);
  core::profile::ObjectRecord extras;
  extras.properties.emplace_back("size", std::to_string((*queue)->size));
  extras.properties.emplace_back("intercepted", intercept ? "yes" : "no");
  info->id = m.objectLocked(schema::ObjectKind::COMMAND_QUEUE, reinterpret_cast<uint64_t>(*queue), info->device, 0,
                            "", threadIdOf(scope), std::move(extras));
  m.queues[*queue] = info;
  return status;
}

void Tracker::queueDestroying(hsa_queue_t* queue) {
  Impl& m = *impl_;
  std::lock_guard<std::mutex> lock(m.mu);
  auto it = m.queues.find(queue);
  if (it == m.queues.end()) return;
  QueueInfo& q = *it->second;
  if (m.loaded) m.collectLocked(q);
  for (Timed& t : q.inFlight) {
    t.rec.note = "its queue was destroyed before it completed";
    m.out.ops.push_back(std::move(t.rec));
  }
  q.inFlight.clear();
  m.out.destroyed.emplace_back(q.id, core::nowTicks());
  m.queues.erase(it);
}

hsa_signal_t Tracker::Impl::acquirePacketSignalLocked() {
  if (!freePacketSignals.empty()) {
    hsa_signal_t s = freePacketSignals.back();
    freePacketSignals.pop_back();
    return s;
  }
  // Only the device waits on it (the host just loads it): no interrupt, which
  // on ROCr would take one of the process's limited kernel events.
  hsa_signal_t s{};
  if (GTAP_HSA_CALL(hsa_amd_signal_create, 1, 0, nullptr, HSA_AMD_SIGNAL_AMD_GPU_ONLY, &s) == HSA_STATUS_SUCCESS)
    return s;
  if (GTAP_HSA_REAL(hsa_signal_create)(1, 0, nullptr, &s) != HSA_STATUS_SUCCESS) return hsa_signal_t{0};
  return s;
}

void Tracker::Impl::collectLocked(QueueInfo& q) {
  while (!q.inFlight.empty()) {
    Timed& t = q.inFlight.front();
    if (signalValue(t.mine) != 0) break;
    core::profile::OpRecord& rec = t.rec;
    rec.completedNs = core::monotonicNs();
    hsa_amd_profiling_dispatch_time_t time{};
    if (GTAP_HSA_REAL(hsa_amd_profiling_get_dispatch_time)(t.agent, t.mine, &time) == HSA_STATUS_SUCCESS) {
      rec.timed = true;
      rec.start = time.start;
      rec.end = time.end;
      if (t.program.handle) programTimes[t.program.handle] = {false, time.start, time.end};
    } else {
      rec.note = "the runtime gave no dispatch time";
      if (t.program.handle) programTimes.erase(t.program.handle);
    }
    GTAP_HSA_REAL(hsa_signal_store_relaxed)(t.mine, 1);
    freePacketSignals.push_back(t.mine);
    if (uint32_t dev = rec.device; dev < devices.size()) {
      DeviceInfo& d = devices[dev];
      if (rec.completedNs - d.lastSampleNs > kClockSampleIntervalNs) sampleClockLocked(d);
    }
    out.ops.push_back(std::move(rec));
    q.inFlight.pop_front();
  }
}

hsa_signal_t Tracker::Impl::acquireSignalLocked() {
  if (!freeSignals.empty()) {
    hsa_signal_t s = freeSignals.back();
    freeSignals.pop_back();
    return s;
  }
  hsa_signal_t s{};
  if (GTAP_HSA_REAL(hsa_signal_create)(1, 0, nullptr, &s) != HSA_STATUS_SUCCESS) return hsa_signal_t{0};
  return s;
}

Pending* Tracker::Impl::acquirePendingLocked() {
  if (freePending.empty()) return new Pending();
  Pending* p = freePending.back();
  freePending.pop_back();
  return p;
}

bool Tracker::Impl::armLocked(Pending* p) {
  p->mine = acquireSignalLocked();
  if (!p->mine.handle) return false;
  p->finished.store(false, std::memory_order_relaxed);
  outstanding.insert(p);
  if (GTAP_HSA_REAL(hsa_amd_signal_async_handler)(p->mine, HSA_SIGNAL_CONDITION_EQ, 0, &Impl::onSignalled, p) !=
      HSA_STATUS_SUCCESS) {
    outstanding.erase(p);
    freeSignals.push_back(p->mine);
    p->mine = hsa_signal_t{0};
    return false;
  }
  return true;
}

// The runtime's async handler thread, once gtap's signal reached 0.
bool Tracker::Impl::onSignalled(hsa_signal_value_t, void* arg) {
  auto* p = static_cast<Pending*>(arg);
  Impl& m = *Tracker::get().impl_;
  uint8_t saved = core::t_guard;
  core::t_guard = static_cast<uint8_t>(saved | core::kGuardHsa);
  if (!p->finished.exchange(true)) {
    {
      std::lock_guard<std::mutex> lock(m.mu);
      m.outstanding.erase(p);
    }
    m.completeCopy(*p);
  }
  // Read (here or by a drain): the signal and the entry can be used again.
  GTAP_HSA_REAL(hsa_signal_store_relaxed)(p->mine, 1);
  // On the runtime's thread: gtap's failure costs the entry, nothing more.
  try {
    std::lock_guard<std::mutex> lock(m.mu);
    if (m.loaded) m.freeSignals.push_back(p->mine);
    p->rec = core::profile::OpRecord{};
    m.freePending.push_back(p);
  } GTAP_CATCH_INTERNAL {
    core::stopAfterInternalError("the HSA copy completion handler");
  }
  core::t_guard = saved;
  return false;  // once
}

// Never throws: whatever gtap fails at here, the program's signal completes.
void Tracker::Impl::completeCopy(Timed& work) {
  Timed* p = &work;
  core::profile::OpRecord& rec = p->rec;
  try {
    rec.completedNs = core::monotonicNs();
    hsa_amd_profiling_async_copy_time_t t{};
    if (GTAP_HSA_REAL(hsa_amd_profiling_get_async_copy_time)(p->mine, &t) == HSA_STATUS_SUCCESS) {
      rec.timed = true;
      rec.start = t.start;
      rec.end = t.end;
    } else {
      rec.note = "the runtime gave no copy time";
    }
    if (p->program.handle) {
      // The program's signal completes as it would have: after the work, by
      // one. Its raw profiling fields (amd_signal_t) and gtap's answer to its
      // own profiling queries carry the times the work had.
      auto* from = reinterpret_cast<amd_signal_t*>(p->mine.handle);
      auto* to = reinterpret_cast<amd_signal_t*>(p->program.handle);
      to->start_ts = from->start_ts;
      to->end_ts = from->end_ts;
      std::lock_guard<std::mutex> lock(mu);
      if (rec.timed)
        programTimes[p->program.handle] = {true, rec.start, rec.end};
      else
        programTimes.erase(p->program.handle);
    }
  } GTAP_CATCH_INTERNAL {
    core::stopAfterInternalError("the HSA copy completion handler");
  }
  if (p->program.handle) GTAP_HSA_REAL(hsa_signal_subtract_screlease)(p->program, 1);
  try {
    std::lock_guard<std::mutex> lock(mu);
    if (uint32_t dev = rec.device; dev < devices.size()) {
      DeviceInfo& d = devices[dev];
      if (rec.completedNs - d.lastSampleNs > kClockSampleIntervalNs) sampleClockLocked(d);
    }
    out.ops.push_back(std::move(rec));
  } GTAP_CATCH_INTERNAL {
    core::stopAfterInternalError("the HSA copy completion handler");
  }
}

// Called by the runtime on the thread that rang the program's doorbell, for
// the packets that doorbell published. Each kernel dispatch and barrier packet
// goes on to the device as written, but for its completion signal: gtap's,
// which the device decrements when the packet is done (with its start and end
// times, profiling being on). When the program gave a signal of its own, a
// barrier-AND packet that waits for gtap's follows and completes the
// program's: the device hands over the completion, so the program sees it as
// soon as it would have, with no host thread in between. gtap reads the times
// later, off the program's path (collectLocked).
void Tracker::Impl::interceptHandler(const void* packets, uint64_t count, uint64_t userIndex, void* data,
                                     hsa_amd_queue_intercept_packet_writer writer) {
  auto* queue = static_cast<QueueInfo*>(data);
  // After an internal error the packets go on as the program wrote them.
  if (core::stoppedAfterInternalError()) return writer(packets, count);
  size_t kept = ~size_t{0};
  bool written = false;
  try {
    interceptPackets(queue, packets, count, userIndex, writer, kept, written);
  } GTAP_CATCH_INTERNAL {
    if (written) throw;  // the runtime's own, from its packet writer
    core::stopAfterInternalError("the HSA packet handler");
    // This doorbell's packets go on as written: gtap's signals for them will
    // never be reached, so they are not waited for.
    try {
      Impl& m = *Tracker::get().impl_;
      std::lock_guard<std::mutex> lock(m.mu);
      while (kept != ~size_t{0} && queue->inFlight.size() > kept) {
        m.freePacketSignals.push_back(queue->inFlight.back().mine);
        queue->inFlight.pop_back();
      }
    } catch (...) {
    }
    writer(packets, count);
  }
}

void Tracker::Impl::interceptPackets(QueueInfo* queue, const void* packets, uint64_t count, uint64_t userIndex,
                                     hsa_amd_queue_intercept_packet_writer writer, size_t& kept, bool& written) {
  Impl& m = *Tracker::get().impl_;
  constexpr size_t kLocal = 32;
  hsa_kernel_dispatch_packet_t local[kLocal];
  std::vector<hsa_kernel_dispatch_packet_t> heap;
  hsa_kernel_dispatch_packet_t* outPackets = local;
  if (2 * count > kLocal) {
    heap.resize(2 * count);
    outPackets = heap.data();
  }
  const auto* in = static_cast<const hsa_kernel_dispatch_packet_t*>(packets);
  uint64_t ticks = core::nowTicks();
  uint32_t thread = core::currentThreadId();
  core::ThreadState* state = core::t_state;
  uint64_t appendIndex = state && core::g_recordApi && state->produced ? state->produced - 1 : ~uint64_t{0};
  std::vector<uint64_t> stack;
  if (recordStacks()) stack = doorbellStack(m.stackDepth);
  size_t n = 0;
  std::lock_guard<std::mutex> lock(m.mu);
  if (m.loaded) m.collectLocked(*queue);
  kept = queue->inFlight.size();
  for (uint64_t i = 0; i < count; ++i) {
    hsa_kernel_dispatch_packet_t& pkt = outPackets[n++];
    pkt = in[i];
    uint16_t header = pkt.header;
    uint16_t type = packetType(header);
    if (type != HSA_PACKET_TYPE_KERNEL_DISPATCH && type != HSA_PACKET_TYPE_BARRIER_AND &&
        type != HSA_PACKET_TYPE_BARRIER_OR)
      continue;  // vendor-specific and agent packets pass as written
    Timed t;
    core::profile::OpRecord& rec = t.rec;
    rec.device = queue->device;
    rec.queue = queue->id;
    rec.thread = rec.submitThread = thread;
    rec.appendIndex = appendIndex;
    rec.recordedBy = schema::Api::HSA;
    rec.appendTicks = rec.submitTicks = ticks;
    rec.packetHeader = header;
    rec.queueIndex = userIndex + i;
    rec.stack = stack;
    hsa_signal_t* completion;
    if (type == HSA_PACKET_TYPE_KERNEL_DISPATCH) {
      // A dispatch the filters leave out goes on exactly as the program wrote
      // it; the program's own profiling queries on its signal then reach the
      // runtime, not times gtap kept from an earlier packet.
      auto k = m.kernels.find(pkt.kernel_object);
      bool wanted = k != m.kernels.end() ? k->second.wanted : core::config().kernelFilter.empty();
      if (!core::dispatchNumberWanted(m.dispatches++) || !wanted) {
        if (pkt.completion_signal.handle) m.programTimes.erase(pkt.completion_signal.handle);
        continue;
      }
      rec.kind = schema::DeviceOpKind::KERNEL;
      rec.gridSize = {pkt.grid_size_x, pkt.grid_size_y, pkt.grid_size_z};
      uint32_t wg[3] = {pkt.workgroup_size_x, pkt.workgroup_size_y, pkt.workgroup_size_z};
      for (int d = 0; d < 3; ++d) {
        rec.groupSize[d] = wg[d];
        rec.groupCount[d] = wg[d] ? (rec.gridSize[d] + wg[d] - 1) / wg[d] : 0;
      }
      completion = &pkt.completion_signal;
      if (k != m.kernels.end()) {
        rec.kernel = k->second.id;
        uint32_t size = std::min(k->second.kernargSize, kMaxKernargBytes);
        if (pkt.kernarg_address && size) {
          auto* a = static_cast<const uint8_t*>(pkt.kernarg_address);
          rec.arguments.assign(a, a + size);
        }
      } else {
        char note[96];
        std::snprintf(note, sizeof note, "kernel object 0x%llx is not from an executable gtap saw frozen",
                      static_cast<unsigned long long>(pkt.kernel_object));
        rec.note = note;
      }
    } else {
      rec.kind = schema::DeviceOpKind::BARRIER;
      completion = &reinterpret_cast<hsa_barrier_and_packet_t*>(&pkt)->completion_signal;
    }
    t.program = *completion;
    t.agent = queue->agent;
    t.mine = m.loaded && m.canTime ? m.acquirePacketSignalLocked() : hsa_signal_t{0};
    if (!t.mine.handle) {
      if (rec.note.empty()) rec.note = "gtap could not time it";
      m.out.ops.push_back(std::move(rec));
      continue;
    }
    *completion = t.mine;
    if (t.program.handle) {
      hsa_barrier_and_packet_t forward{};
      uint16_t releaseScope = (header >> HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE) &
                              ((1u << HSA_PACKET_HEADER_WIDTH_SCRELEASE_FENCE_SCOPE) - 1);
      forward.header = static_cast<uint16_t>(
          (HSA_PACKET_TYPE_BARRIER_AND << HSA_PACKET_HEADER_TYPE) |
          (HSA_FENCE_SCOPE_NONE << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE) |
          (releaseScope << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE));
      forward.dep_signal[0] = t.mine;
      forward.completion_signal = t.program;
      static_assert(sizeof forward == sizeof outPackets[0]);
      std::memcpy(&outPackets[n++], &forward, sizeof forward);
    }
    queue->inFlight.push_back(std::move(t));
    core::testThrowPoint(core::TestSite::hsaPacket);
  }
  written = true;
  writer(outPackets, n);
}

// --- code objects and executables ------------------------------------------------------

void Tracker::readerFromMemory(hsa_code_object_reader_t reader, const void* data, size_t size) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->readers[reader.handle] = {data, size, {}};
}

void Tracker::readerFromFile(hsa_code_object_reader_t reader, hsa_file_t file) {
  // The runtime has read the file (from its start) by now; gtap reads the same
  // bytes with pread, leaving the descriptor's offset as the runtime left it.
  ReaderInfo info;
  struct stat st {};
  if (fstat(file, &st) == 0 && st.st_size > 0) {
    info.owned.resize(static_cast<size_t>(st.st_size));
    size_t got = 0;
    while (got < info.owned.size()) {
      ssize_t n = pread(file, info.owned.data() + got, info.owned.size() - got, static_cast<off_t>(got));
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    info.owned.resize(got);
  }
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->readers[reader.handle] = std::move(info);
}

void Tracker::readerDestroyed(hsa_code_object_reader_t reader) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->readers.erase(reader.handle);
}

void Tracker::executableCreated(hsa_executable_t executable, const core::CallScope& scope) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  ExecutableInfo& e = impl_->executables[executable.handle];
  e = ExecutableInfo{};
  e.id = impl_->objectLocked(schema::ObjectKind::EXECUTABLE, executable.handle, kNoDevice, 0, "", threadIdOf(scope));
}

void Tracker::codeObjectLoaded(hsa_executable_t executable, hsa_agent_t agent, hsa_code_object_reader_t reader,
                               const core::CallScope& scope) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto e = impl_->executables.find(executable.handle);
  auto r = impl_->readers.find(reader.handle);
  if (e == impl_->executables.end()) return;
  ModuleInfo mod;
  mod.agent = agent;
  if (r != impl_->readers.end()) {
    const ReaderInfo& ri = r->second;
    if (!ri.owned.empty())
      mod.bytes = ri.owned;
    else if (ri.data && ri.size)
      mod.bytes.assign(static_cast<const uint8_t*>(ri.data), static_cast<const uint8_t*>(ri.data) + ri.size);
  }
  core::profile::ObjectRecord extras;
  extras.binary = mod.bytes;
  bool elf = mod.bytes.size() >= sizeof(Elf64_Ehdr) && std::memcmp(mod.bytes.data(), ELFMAG, SELFMAG) == 0;
  uint16_t machine = 0;
  if (elf) std::memcpy(&machine, mod.bytes.data() + offsetof(Elf64_Ehdr, e_machine), sizeof machine);
  extras.binaryFormat = !elf ? "unknown" : machine == 224 /* EM_AMDGPU */ ? "amdgpu" : "elf";
  mod.id = impl_->objectLocked(schema::ObjectKind::MODULE, reader.handle, impl_->deviceOf(agent), e->second.id, "",
                               threadIdOf(scope), std::move(extras));
  e->second.modules.push_back(std::move(mod));
}

namespace {

struct SymbolWalk {
  std::vector<hsa_executable_symbol_t> kernels;
};

// Which of the executable's code objects holds `name`: the one whose bytes
// contain it as a string (its symbol or metadata), else the last one loaded
// for the agent.
uint64_t moduleFor(const ExecutableInfo& e, hsa_agent_t agent, const std::string& name) {
  uint64_t fallback = 0;
  for (const ModuleInfo& m : e.modules) {
    if (m.agent.handle != agent.handle) continue;
    fallback = m.id;
    std::string needle = name;
    needle.push_back('\0');
    if (std::search(m.bytes.begin(), m.bytes.end(), needle.begin(), needle.end()) != m.bytes.end()) return m.id;
  }
  return fallback ? fallback : (e.modules.empty() ? e.id : e.modules.back().id);
}

}  // namespace

void Tracker::executableFrozen(hsa_executable_t executable, const core::CallScope& scope) {
  core::testThrowPoint(core::TestSite::hsaHook);
  SymbolWalk walk;
  GTAP_HSA_CALL(hsa_executable_iterate_symbols, 
      executable,
      [](hsa_executable_t, hsa_executable_symbol_t s, void* v) {
        hsa_symbol_kind_t kind{};
        if (GTAP_HSA_CALL(hsa_executable_symbol_get_info, s, HSA_EXECUTABLE_SYMBOL_INFO_TYPE, &kind) ==
                HSA_STATUS_SUCCESS &&
            kind == HSA_SYMBOL_KIND_KERNEL)
          static_cast<SymbolWalk*>(v)->kernels.push_back(s);
        return HSA_STATUS_SUCCESS;
      },
      &walk);
  uint32_t thread = threadIdOf(scope);
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto e = impl_->executables.find(executable.handle);
  if (e == impl_->executables.end()) return;
  for (hsa_executable_symbol_t s : walk.kernels) {
    auto info = [&](hsa_executable_symbol_info_t attribute, auto& value) {
      return GTAP_HSA_CALL(hsa_executable_symbol_get_info, s, attribute, &value) == HSA_STATUS_SUCCESS;
    };
    uint32_t nameLength = 0, kernarg = 0, group = 0, priv = 0;
    uint64_t object = 0;
    hsa_agent_t agent{};
    if (!info(HSA_EXECUTABLE_SYMBOL_INFO_NAME_LENGTH, nameLength) ||
        !info(HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, object))
      continue;
    std::string name(nameLength, '\0');
    if (GTAP_HSA_CALL(hsa_executable_symbol_get_info, s, HSA_EXECUTABLE_SYMBOL_INFO_NAME, name.data()) !=
        HSA_STATUS_SUCCESS)
      continue;
    name.resize(std::strlen(name.c_str()));
    info(HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE, kernarg);
    info(HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE, group);
    info(HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE, priv);
    info(HSA_EXECUTABLE_SYMBOL_INFO_AGENT, agent);
    // Code object v3+ kernel symbols are "<name>.kd" (the kernel descriptor).
    std::string kernelName = name;
    if (kernelName.size() > 3 && kernelName.compare(kernelName.size() - 3, 3, ".kd") == 0)
      kernelName.resize(kernelName.size() - 3);
    core::profile::ObjectRecord extras;
    extras.properties.emplace_back("symbol", name);
    extras.properties.emplace_back("kernargSegmentSize", std::to_string(kernarg));
    extras.properties.emplace_back("groupSegmentSize", std::to_string(group));
    extras.properties.emplace_back("privateSegmentSize", std::to_string(priv));
    extras.properties.emplace_back("executable", std::to_string(e->second.id));
    uint64_t parent = moduleFor(e->second, agent, kernelName);
    uint64_t id = impl_->objectLocked(schema::ObjectKind::KERNEL, object, impl_->deviceOf(agent), parent, kernelName,
                                      thread, std::move(extras));
    impl_->kernels[object] = {id, kernarg, core::kernelNameWanted(kernelName)};
    e->second.kernelObjects.push_back(object);
  }
  // The bytes are in the records; the search above was their last use.
  for (ModuleInfo& m : e->second.modules) std::vector<uint8_t>().swap(m.bytes);
}

void Tracker::executableDestroyed(hsa_executable_t executable) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto e = impl_->executables.find(executable.handle);
  if (e == impl_->executables.end()) return;
  uint64_t now = core::nowTicks();
  for (uint64_t object : e->second.kernelObjects) {
    auto k = impl_->kernels.find(object);
    if (k == impl_->kernels.end()) continue;
    impl_->out.destroyed.emplace_back(k->second.id, now);
    impl_->kernels.erase(k);
  }
  for (const ModuleInfo& m : e->second.modules) impl_->out.destroyed.emplace_back(m.id, now);
  impl_->out.destroyed.emplace_back(e->second.id, now);
  impl_->executables.erase(e);
}

// --- memory -------------------------------------------------------------------------------

void Tracker::allocatedFromPool(uint64_t pool, void* address, size_t size, const core::CallScope& scope) {
  std::vector<uint64_t> stack;
  if (recordStacks() && recordMemory()) stack = core::captureStack(impl_->stackDepth);
  uint32_t thread = threadIdOf(scope);
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto owner = impl_->pools.find(pool);
  Allocation a;
  a.size = size;
  if (owner != impl_->pools.end()) {
    a.kind = owner->second.first;
    a.device = owner->second.second;
  }
  impl_->allocations[reinterpret_cast<uint64_t>(address)] = a;
  if (recordMemory())
    impl_->out.memory.push_back({false, a.kind, a.device, reinterpret_cast<uint64_t>(address), size, 0,
                                 core::nowTicks(), thread, std::move(stack)});
}

void Tracker::freeing(void* address, const core::CallScope& scope) {
  uint32_t thread = threadIdOf(scope);
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto it = impl_->allocations.find(reinterpret_cast<uint64_t>(address));
  if (it == impl_->allocations.end()) return;
  if (recordMemory())
    impl_->out.memory.push_back({true, it->second.kind, it->second.device, it->first, it->second.size, 0,
                                 core::nowTicks(), thread, {}});
  impl_->allocations.erase(it);
}

void Tracker::locked(void* host, size_t size, void*, const core::CallScope& scope) {
  std::vector<uint64_t> stack;
  if (recordStacks() && recordMemory()) stack = core::captureStack(impl_->stackDepth);
  uint32_t thread = threadIdOf(scope);
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->lockedRanges[reinterpret_cast<uint64_t>(host)] = size;
  if (recordMemory())
    impl_->out.memory.push_back({false, schema::MemoryKind::LOCKED, kNoDevice, reinterpret_cast<uint64_t>(host),
                                 size, 0, core::nowTicks(), thread, std::move(stack)});
}

void Tracker::unlocking(void* host, const core::CallScope& scope) {
  uint32_t thread = threadIdOf(scope);
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto it = impl_->lockedRanges.find(reinterpret_cast<uint64_t>(host));
  if (it == impl_->lockedRanges.end()) return;
  if (recordMemory())
    impl_->out.memory.push_back({true, schema::MemoryKind::LOCKED, kNoDevice, it->first, it->second, 0,
                                 core::nowTicks(), thread, {}});
  impl_->lockedRanges.erase(it);
}

schema::CopyDirection Tracker::Impl::directionOf(const void* dst, const void* src) {
  // Only the GPU's pools are device memory; system pools are host memory.
  return core::profile::copyDirection(allocations, dst, src,
                                      [](schema::MemoryKind k) { return k == schema::MemoryKind::DEVICE; });
}

// --- copies --------------------------------------------------------------------------------

hsa_signal_t Tracker::asyncCopyStarting(hsa_signal_t program, const void* dst, hsa_agent_t dstAgent,
                                        const void* src, hsa_agent_t srcAgent, size_t size,
                                        const core::CallScope& scope, void*& token) {
  token = nullptr;
  if (!recordKernels() || !impl_->canTime) return program;
  std::vector<uint64_t> stack;
  if (recordStacks()) stack = core::captureStack(impl_->stackDepth);
  uint64_t ticks = core::nowTicks();
  uint32_t thread = threadIdOf(scope);
  Impl& m = *impl_;
  std::lock_guard<std::mutex> lock(m.mu);
  if (!m.loaded) return program;
  Pending* p = m.acquirePendingLocked();
  core::profile::OpRecord& rec = p->rec;
  rec.kind = schema::DeviceOpKind::COPY;
  rec.bytes = size;
  rec.direction = m.directionOf(dst, src);
  // The GPU agent the copy involves, for its clock and its copy-engine track.
  uint32_t dev = kNoDevice;
  for (hsa_agent_t a : {dstAgent, srcAgent}) {
    uint32_t d = m.deviceOf(a);
    if (d < m.devices.size() && m.devices[d].gpu) {
      dev = d;
      break;
    }
  }
  if (dev == kNoDevice)
    for (const DeviceInfo& d : m.devices)
      if (d.gpu) {
        dev = d.id;
        break;
      }
  rec.device = dev;
  if (dev < m.devices.size()) {
    DeviceInfo& d = m.devices[dev];
    if (!d.copyQueue) {
      core::profile::ObjectRecord extras;
      extras.properties.emplace_back("engine", "asynchronous copies");
      d.copyQueue = m.objectLocked(schema::ObjectKind::COMMAND_QUEUE, 0, dev, 0, "copy engine", thread,
                                   std::move(extras));
    }
    rec.queue = d.copyQueue;
  }
  rec.thread = rec.submitThread = thread;
  rec.appendIndex = scope.beginIndex();
  rec.recordedBy = schema::Api::HSA;
  rec.appendTicks = rec.submitTicks = ticks;
  rec.stack = std::move(stack);
  p->program = program;
  if (!m.armLocked(p)) {
    p->rec = core::profile::OpRecord{};
    m.freePending.push_back(p);
    return program;
  }
  token = p;
  return p->mine;
}

void Tracker::asyncCopyFailed(void* token) {
  if (!token) return;
  auto* p = static_cast<Pending*>(token);
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->outstanding.erase(p);
  }
  // Nothing will reach gtap's signal: release the handler, which then only
  // recycles the entry.
  p->finished.store(true);
  GTAP_HSA_REAL(hsa_signal_store_screlease)(p->mine, 0);
}

void Tracker::synchronousOp(bool fill, const void* dst, const void* src, size_t size, uint64_t beginTicks,
                            const core::CallScope& scope) {
  if (!recordKernels()) return;
  core::profile::OpRecord rec;
  rec.kind = fill ? schema::DeviceOpKind::FILL : schema::DeviceOpKind::COPY;
  rec.bytes = size;
  rec.thread = rec.submitThread = threadIdOf(scope);
  rec.appendIndex = scope.beginIndex();
  rec.recordedBy = schema::Api::HSA;
  rec.appendTicks = rec.submitTicks = beginTicks;
  rec.note = fill ? "hsa_amd_memory_fill is synchronous: no device time" : "hsa_memory_copy is synchronous: no device time";
  if (recordStacks()) rec.stack = core::captureStack(impl_->stackDepth);
  std::lock_guard<std::mutex> lock(impl_->mu);
  rec.direction = fill ? schema::CopyDirection::UNKNOWN : impl_->directionOf(dst, src);
  for (const DeviceInfo& d : impl_->devices)
    if (d.gpu) {
      rec.device = d.id;
      break;
    }
  rec.completedNs = core::monotonicNs();
  impl_->out.ops.push_back(std::move(rec));
}

// --- the program's own profiling queries ------------------------------------------------------

bool Tracker::programTimes(hsa_signal_t signal, bool copy, uint64_t& start, uint64_t& end) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  // The program has seen its signal complete: gtap's packet before it is done.
  if (impl_->loaded && !copy) impl_->collectAllLocked();
  auto it = impl_->programTimes.find(signal.handle);
  if (it == impl_->programTimes.end() || it->second.copy != copy) return false;
  start = it->second.start;
  end = it->second.end;
  return true;
}

void Tracker::programSignalDestroyed(hsa_signal_t signal) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->programTimes.erase(signal.handle);
}

// --- the writer's side ------------------------------------------------------------------------

void Tracker::takeRecords(core::profile::Outbox& out) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (impl_->loaded) impl_->collectAllLocked();
  std::swap(out, impl_->out);
  // The writer's emptied vectors from the last flush: their capacity (and
  // pages) are reused, so a busy queue does not regrow them every flush.
  std::swap(impl_->out, impl_->spare);
}

void Tracker::returnRecords(core::profile::Outbox& out) {
  out.devices.clear();
  out.samples.clear();
  out.created.clear();
  out.destroyed.clear();
  out.ops.clear();
  out.memory.clear();
  std::lock_guard<std::mutex> lock(impl_->mu);
  std::swap(impl_->spare, out);
}

namespace {

void exitWork() { Tracker::get().processExiting(); }

void produceChunks(core::ChunkSink& sink, bool) {
  core::profile::Outbox out;
  Tracker::get().takeRecords(out);
  core::profile::writeProfileRecords(sink, out);
  Tracker::get().returnRecords(out);
}

__attribute__((constructor(103))) void registerTracker() {
  core::registerChunkProducer(&produceChunks);
  core::registerExitWork(&exitWork);
}

}  // namespace

}  // namespace gtap::hsa
