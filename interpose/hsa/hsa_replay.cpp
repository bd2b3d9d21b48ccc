#include "hsa_replay.h"

#include <hsa/amd_hsa_queue.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "chunk_producer.h"
#include "clock.h"
#include "gtap/readers/code_object.h"
#include "host_memory.h"
#include "hsa_tables.h"
#include "internal_error.h"
#include "log.h"

namespace gtap::hsa {

namespace replay = core::replay;

namespace {

uint32_t threadOf(const core::CallScope& scope) {
  return scope.thread() ? scope.thread()->id : core::currentThreadId();
}

uint64_t u(const void* p) { return reinterpret_cast<uint64_t>(p); }

void setDim3(schema::Dim3::Builder d, uint64_t x, uint64_t y, uint64_t z) {
  d.setX(x);
  d.setY(y);
  d.setZ(z);
}

uint16_t packetType(uint16_t header) {
  return (header >> HSA_PACKET_HEADER_TYPE) & ((1u << HSA_PACKET_HEADER_WIDTH_TYPE) - 1);
}

bool conditionHolds(hsa_signal_condition_t condition, hsa_signal_value_t value, hsa_signal_value_t compare) {
  switch (condition) {
    case HSA_SIGNAL_CONDITION_EQ: return value == compare;
    case HSA_SIGNAL_CONDITION_NE: return value != compare;
    case HSA_SIGNAL_CONDITION_LT: return value < compare;
    case HSA_SIGNAL_CONDITION_GTE: return value >= compare;
  }
  return false;
}

// An agent as replay matches it.
struct AgentDescription {
  uint32_t index = 0;
  uint32_t type = 0;
  std::string name, isa, vendor, product;
  uint32_t chip = 0, computeUnits = 0, wavefront = 0;
};

AgentDescription describeAgent(hsa_agent_t agent) {
  AgentDescription d;
  struct Walk {
    hsa_agent_t wanted;
    uint32_t index = 0;
    bool found = false;
  } walk{agent};
  GTAP_HSA_CALL(hsa_iterate_agents,
                [](hsa_agent_t a, void* v) {
                  auto* w = static_cast<Walk*>(v);
                  if (a.handle == w->wanted.handle) {
                    w->found = true;
                    return HSA_STATUS_INFO_BREAK;
                  }
                  ++w->index;
                  return HSA_STATUS_SUCCESS;
                },
                &walk);
  d.index = walk.index;
  hsa_device_type_t type{};
  GTAP_HSA_CALL(hsa_agent_get_info, agent, HSA_AGENT_INFO_DEVICE, &type);
  d.type = static_cast<uint32_t>(type);
  d.name = agentString(agent, HSA_AGENT_INFO_NAME, 64);
  d.vendor = agentString(agent, HSA_AGENT_INFO_VENDOR_NAME, 64);
  d.product = agentString(agent, amdAgentInfo(HSA_AMD_AGENT_INFO_PRODUCT_NAME), 64);
  GTAP_HSA_CALL(hsa_agent_get_info, agent, amdAgentInfo(HSA_AMD_AGENT_INFO_CHIP_ID), &d.chip);
  GTAP_HSA_CALL(hsa_agent_get_info, agent, amdAgentInfo(HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT),
                &d.computeUnits);
  GTAP_HSA_CALL(hsa_agent_get_info, agent, HSA_AGENT_INFO_WAVEFRONT_SIZE, &d.wavefront);
  hsa_isa_t isa{};
  GTAP_HSA_CALL(hsa_agent_iterate_isas, agent,
                [](hsa_isa_t i, void* v) {
                  *static_cast<hsa_isa_t*>(v) = i;
                  return HSA_STATUS_INFO_BREAK;
                },
                &isa);
  uint32_t length = 0;
  if (isa.handle && GTAP_HSA_CALL(hsa_isa_get_info_alt, isa, HSA_ISA_INFO_NAME_LENGTH, &length) == HSA_STATUS_SUCCESS &&
      length && length < 4096) {
    std::vector<char> buf(length + 1, '\0');
    if (GTAP_HSA_CALL(hsa_isa_get_info_alt, isa, HSA_ISA_INFO_NAME, buf.data()) == HSA_STATUS_SUCCESS)
      d.isa = buf.data();
  }
  return d;
}

// A pool as replay finds it: the agent whose pools list it, its segment and
// flags, and its place among that agent's pools of the same kind.
struct PoolDescription {
  bool found = false;
  hsa_agent_t agent{};
  uint32_t segment = 0, flags = 0, ordinal = 0;
  uint64_t size = 0;
  bool hostAccessible = false;
};

PoolDescription describePool(uint64_t handle) {
  struct Walk {
    uint64_t wanted;
    PoolDescription d;
    hsa_agent_t agent{};
    std::vector<std::pair<uint32_t, uint32_t>> seen;  // segment, flags of the agent's pools so far
  } walk{handle, {}, {}, {}};
  GTAP_HSA_CALL(hsa_iterate_agents,
                [](hsa_agent_t a, void* v) {
                  auto* w = static_cast<Walk*>(v);
                  w->agent = a;
                  w->seen.clear();
                  GTAP_HSA_CALL(hsa_amd_agent_iterate_memory_pools, a,
                                [](hsa_amd_memory_pool_t p, void* v2) {
                                  auto* w2 = static_cast<Walk*>(v2);
                                  hsa_amd_segment_t segment{};
                                  uint32_t flags = 0;
                                  GTAP_HSA_CALL(hsa_amd_memory_pool_get_info, p, HSA_AMD_MEMORY_POOL_INFO_SEGMENT,
                                                &segment);
                                  if (segment == HSA_AMD_SEGMENT_GLOBAL)
                                    GTAP_HSA_CALL(hsa_amd_memory_pool_get_info, p,
                                                  HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, &flags);
                                  auto key = std::make_pair(static_cast<uint32_t>(segment), flags);
                                  if (p.handle == w2->wanted) {
                                    w2->d.found = true;
                                    w2->d.agent = w2->agent;
                                    w2->d.segment = key.first;
                                    w2->d.flags = flags;
                                    w2->d.ordinal = static_cast<uint32_t>(
                                        std::count(w2->seen.begin(), w2->seen.end(), key));
                                    size_t size = 0;
                                    GTAP_HSA_CALL(hsa_amd_memory_pool_get_info, p, HSA_AMD_MEMORY_POOL_INFO_SIZE,
                                                  &size);
                                    w2->d.size = size;
                                    return HSA_STATUS_INFO_BREAK;
                                  }
                                  w2->seen.push_back(key);
                                  return HSA_STATUS_SUCCESS;
                                },
                                w);
                  return w->d.found ? HSA_STATUS_INFO_BREAK : HSA_STATUS_SUCCESS;
                },
                &walk);
  if (walk.d.found) {
    hsa_device_type_t type{};
    GTAP_HSA_CALL(hsa_agent_get_info, walk.d.agent, HSA_AGENT_INFO_DEVICE, &type);
    walk.d.hostAccessible = type == HSA_DEVICE_TYPE_CPU;
  }
  return walk.d;
}

// A page hash no page has (in practice): the page is recorded at the next
// submission whatever it holds.
constexpr uint64_t kUnknownPage = 0;

// Host memory whose pages replay restores: host-accessible allocations and
// locked ranges.
struct Memory {
  uint64_t id = 0;
  uint64_t size = 0;
  bool host = false;               // its pages are recorded
  uint64_t agentAddress = 0;       // locked ranges: where the agents reach it
  replay::PageHashes recorded;     // as last written to hostData
  replay::PageHashes readBack;     // as last written to readBack
};

struct Signal {
  uint64_t id = 0;
  hsa_signal_value_t last = 0;  // the value last recorded or seen
  bool device = false;          // a packet or copy completes it
};

struct Kernel {
  uint64_t id = 0;
  std::string name;
  uint32_t kernargSize = 0;
  std::shared_ptr<const readers::CodeObjectInfo> code;  // null without metadata
  const readers::KernelInfo* meta = nullptr;
};

struct CodeObject {
  uint64_t id = 0;
  std::shared_ptr<const readers::CodeObjectInfo> info;  // null without metadata
};

struct Executable {
  uint64_t id = 0;
  std::vector<std::pair<hsa_agent_t, uint64_t>> loaded;  // agent, code object id
  std::vector<uint64_t> kernelObjects;
};

// Host memory the device may be writing until the program sees the work
// done: a copy's destination, or a range a dispatch's kernarg points into.
struct InFlight {
  uint64_t copySeq = 0;   // copies: the copy's record
  uint64_t signal = 0;    // the completion signal's handle (0: none)
  uint64_t dst = 0, size = 0;
  bool readBack = false;  // outside every recorded range: a read-back of the copy itself
  uint64_t queue = 0;     // packets: the queue (id), and their place in it
  uint64_t order = 0;
};

// The last packet that completes a signal: when the program sees it done,
// so is every packet before it on its queue if it had the barrier bit.
struct LastPacket {
  uint64_t queue = 0, order = 0;
  bool barrier = false;
  std::vector<uint64_t> deps;  // the signals it waited for (barrier packets and copies): done before it
};

// Work in flight kept track of at most: beyond it the oldest is taken as
// done (a program that never waits for its work).
constexpr size_t kMaxInFlight = 1 << 14;

}  // namespace

struct ReplayRecorder::Impl {
  std::mutex mu;
  std::unordered_map<uint64_t, uint64_t> agents;  // handle -> id
  std::unordered_map<uint64_t, std::pair<uint64_t, bool>> pools;  // handle -> id, host accessible
  std::map<uint64_t, Memory> memory;       // allocations and locked ranges, by (host) address
  std::map<uint64_t, uint64_t> agentRanges;  // locked ranges' agent addresses -> host address
  std::unordered_map<uint64_t, Signal> signals;
  std::unordered_map<uint64_t, std::vector<hsa_signal_t>> groups;
  std::unordered_map<uint64_t, uint64_t> queues;  // hsa_queue_t address -> id
  std::unordered_map<uint64_t, CodeObject> codeObjects;  // reader handle
  std::unordered_map<uint64_t, Executable> executables;
  std::unordered_map<uint64_t, Kernel> kernels;  // kernel object
  std::vector<InFlight> inFlight;
  std::unordered_map<uint64_t, LastPacket> lastPacket;  // by completion signal handle
  uint64_t packetOrder = 0;
  replay::HostBytes hostBytes;
  uint64_t dispatches = 0;

  void addInFlight(InFlight f) {
    if (inFlight.size() >= kMaxInFlight) inFlight.erase(inFlight.begin());
    inFlight.push_back(f);
  }
  // Work handed to queue `queue` (0: a copy) that completes `signal` once
  // the signals `deps` are satisfied.
  void packetSent(uint64_t queue, uint16_t header, hsa_signal_t signal, std::vector<uint64_t> deps = {}) {
    ++packetOrder;
    if (signal.handle)
      lastPacket[signal.handle] = {queue, packetOrder, ((header >> HSA_PACKET_HEADER_BARRIER) & 1) != 0,
                                   std::move(deps)};
  }
  // Everything the program knows is done once it sees `signal` satisfied:
  // what completes it, what that work waited for, and, for a packet with
  // the barrier bit, everything before it on its queue.
  std::vector<InFlight> takeCompleted(hsa_signal_t signal) {
    std::vector<InFlight> completed;
    if (!signal.handle) return completed;
    std::vector<uint64_t> work{signal.handle};
    std::unordered_set<uint64_t> seen;
    while (!work.empty()) {
      uint64_t s = work.back();
      work.pop_back();
      if (!s || !seen.insert(s).second) continue;
      LastPacket last;
      if (auto it = lastPacket.find(s); it != lastPacket.end()) last = it->second;
      std::erase_if(inFlight, [&](const InFlight& f) {
        bool done = f.signal == s || (last.barrier && last.queue && f.queue == last.queue && f.order <= last.order);
        if (done) {
          completed.push_back(f);
          if (f.signal) work.push_back(f.signal);
        }
        return done;
      });
      work.insert(work.end(), last.deps.begin(), last.deps.end());
    }
    return completed;
  }

  replay::Record record(uint64_t seq, uint32_t thread, uint32_t function) {
    replay::Record r;
    r.seq = seq;
    r.thread = thread;
    r.function = function;
    r.ticks = core::nowTicks();
    return r;
  }
  replay::Record record(uint64_t seq, const core::CallScope& scope) {
    return record(seq, threadOf(scope), scope.function());
  }

  // The id of `agent`, recorded the first time.
  uint64_t agentLocked(hsa_agent_t agent, uint32_t thread) {
    if (!agent.handle) return 0;
    if (auto it = agents.find(agent.handle); it != agents.end()) return it->second;
    AgentDescription d = describeAgent(agent);
    uint64_t id = replay::newId();
    agents[agent.handle] = id;
    auto r = record(replay::nextSeq(), thread, replay::kNoFunction);
    auto a = r.fields().initHsaAgent();
    a.setAgent(id);
    a.setIndex(d.index);
    a.setDeviceType(d.type);
    a.setName(d.name);
    a.setIsa(d.isa);
    a.setVendor(d.vendor);
    a.setProductName(d.product);
    a.setChipId(d.chip);
    a.setComputeUnits(d.computeUnits);
    a.setWavefrontSize(d.wavefront);
    replay::add(std::move(r));
    return id;
  }

  // The id of a pool (0 when no agent lists it), recorded the first time.
  std::pair<uint64_t, bool> poolLocked(uint64_t handle, uint32_t thread) {
    if (auto it = pools.find(handle); it != pools.end()) return it->second;
    PoolDescription d = describePool(handle);
    if (!d.found) return {0, false};
    uint64_t agent = agentLocked(d.agent, thread);
    uint64_t id = replay::newId();
    pools[handle] = {id, d.hostAccessible};
    auto r = record(replay::nextSeq(), thread, replay::kNoFunction);
    auto p = r.fields().initHsaPool();
    p.setPool(id);
    p.setAgent(agent);
    p.setSegment(d.segment);
    p.setGlobalFlags(d.flags);
    p.setSize(d.size);
    p.setOrdinal(d.ordinal);
    replay::add(std::move(r));
    return pools[handle];
  }

  // The recorded range holding [address, address + size): its host address
  // and entry, whether through its host or (locked) agent address.
  std::pair<uint64_t, Memory*> memoryAt(uint64_t address, uint64_t size = 1) {
    auto inside = [&](std::map<uint64_t, Memory>::iterator it, uint64_t base) {
      return address >= base && address - base < it->second.size && size <= it->second.size - (address - base);
    };
    auto it = memory.upper_bound(address);
    if (it != memory.begin()) {
      --it;
      if (inside(it, it->first)) return {it->first, &it->second};
    }
    auto a = agentRanges.upper_bound(address);
    if (a != agentRanges.begin()) {
      --a;
      auto m = memory.find(a->second);
      if (m != memory.end() && inside(m, a->first)) return {m->first, &m->second};
    }
    return {0, nullptr};
  }

  uint64_t signalLocked(hsa_signal_t s) const {
    auto it = signals.find(s.handle);
    return it == signals.end() ? 0 : it->second.id;
  }

  bool pageInFlight(uint64_t base, size_t page) const {
    uint64_t first = base + page * replay::kPage, last = first + replay::kPage;
    for (const InFlight& f : inFlight)
      if (f.dst < last && first < f.dst + f.size) return true;
    return false;
  }

  // Host memory the program changed since it was last recorded: hostData
  // records, before work that may read it.
  void recordHostChanges(uint32_t thread) {
    for (auto& [address, m] : memory) {
      if (!m.host) continue;
      m.recorded.changedRuns(
          reinterpret_cast<const uint8_t*>(address), m.size,
          [&](size_t i) { return !inFlight.empty() && pageInFlight(address, i); },
          [&](uint64_t offset, uint64_t length) { replay::addAllocationData(thread, m.id, address, offset, length); });
    }
  }

  // After a wait: host memory the completed work could reach that changed
  // since the program last wrote it, and the destinations of copies the
  // wait completed, become read-backs (what the program can now read). Only
  // that memory: other threads' host writes not yet submitted are theirs.
  // `also`: a range a synchronous copy just wrote.
  void recordDeviceWrites(uint32_t thread, hsa_signal_t signal, uint64_t also = 0) {
    // The work the signal completes is no longer in flight: what completes
    // it, and, when its last packet had the barrier bit, everything before
    // that packet on its queue.
    std::vector<InFlight> completed = takeCompleted(signal);
    std::unordered_set<uint64_t> reached;
    if (also) reached.insert(memoryAt(also).first);
    for (const InFlight& f : completed)
      if (auto [base, m] = memoryAt(f.dst); m) reached.insert(base);
    for (auto& [address, m] : memory) {
      if (!m.host || !reached.count(address)) continue;
      auto* base = reinterpret_cast<const uint8_t*>(address);
      m.recorded.ensure(m.size);
      m.readBack.ensure(m.size);
      size_t pages = m.recorded.hashes.size(), runStart = pages;
      auto flush = [&](size_t end) {
        if (runStart == pages) return;
        uint64_t offset = runStart * replay::kPage;
        uint64_t length = std::min<uint64_t>(end * replay::kPage, m.size) - offset;
        auto r = record(replay::nextSeq(), thread, replay::kNoFunction);
        auto b = r.fields().initReadBack();
        b.setAllocation(m.id);
        b.setOffset(offset);
        b.setDst(address + offset);
        r.payload = replay::blobPayload(base + offset, length);
        replay::add(std::move(r));
        runStart = pages;
      };
      for (size_t i = 0; i < pages; ++i) {
        size_t len = static_cast<size_t>(std::min<uint64_t>(replay::kPage, m.size - i * replay::kPage));
        uint64_t h = replay::pageHash(base + i * replay::kPage, len);
        // Pages a copy still in flight writes are left for its own wait.
        bool changed = h != m.recorded.hashes[i] && !(!inFlight.empty() && pageInFlight(address, i));
        // Whatever a page the device changed holds at the next submission
        // is recorded again: the program may write back bytes it had
        // recorded before the device changed them, which replay must
        // restore too.
        if (changed) m.recorded.hashes[i] = kUnknownPage;
        // Read back unless the last read-back saw these very bytes.
        if (changed && h != m.readBack.hashes[i]) {
          m.readBack.hashes[i] = h;
          if (runStart == pages) runStart = i;
        } else {
          flush(i);
        }
      }
      flush(pages);
    }
    // Copies into ordinary host memory: their own read-backs.
    for (const InFlight& f : completed) {
      {
        if (!f.readBack) continue;
        auto r = record(replay::nextSeq(), thread, replay::kNoFunction);
        auto b = r.fields().initReadBack();
        b.setCopy(f.copySeq);
        b.setOffset(0);
        b.setDst(f.dst);
        r.payload = replay::blobPayload(reinterpret_cast<const void*>(f.dst), f.size);
        replay::add(std::move(r));
      }
    }
  }

  void unsupportedLocked(uint32_t thread, uint32_t function, const std::string& reason) {
    auto r = record(replay::nextSeq(), thread, function);
    r.fields().initUnsupported().setReason(reason);
    replay::add(std::move(r));
  }

  // `more`: the program had written packets past this one when it rang.
  void dispatch(const hsa_kernel_dispatch_packet_t& p, uint64_t queueId, uint64_t index, bool more, uint32_t thread);
  void barrier(const hsa_barrier_and_packet_t& p, bool any, uint64_t queueId, uint64_t index, bool more,
               uint32_t thread);
};

bool replaying(const core::CallScope& scope) {
  return !scope.nested() && core::replay::enabled() && threadOf(scope) != ~0u;
}

ReplayRecorder& ReplayRecorder::get() {
  static ReplayRecorder* r = new ReplayRecorder();  // used until the very end of the process
  return *r;
}

ReplayRecorder::ReplayRecorder() : impl_(std::make_unique<Impl>()) {}

// --- memory ---------------------------------------------------------------------------

void ReplayRecorder::allocated(const core::CallScope& scope, uint64_t poolHandle, void* ptr, size_t size,
                               uint32_t flags) {
  uint32_t thread = threadOf(scope);
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto [pool, host] = impl_->poolLocked(poolHandle, thread);
  if (!pool) {
    impl_->unsupportedLocked(thread, scope.function(),
                             "an allocation from a pool or region no agent lists (handle " +
                                 std::to_string(poolHandle) + ")");
    return;
  }
  uint64_t id = replay::newId();
  auto r = impl_->record(replay::nextSeq(), scope);
  auto a = r.fields().initHsaAllocate();
  a.setAllocation(id);
  a.setPool(pool);
  a.setSize(size);
  a.setFlags(flags);
  a.setAddress(u(ptr));
  a.setHostAccessible(host);
  replay::add(std::move(r));
  Memory m;
  m.id = id;
  m.size = size;
  m.host = host;
  impl_->memory[u(ptr)] = std::move(m);
}

uint64_t ReplayRecorder::freeing(const core::CallScope& scope, void* ptr) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto it = impl_->memory.find(u(ptr));
  if (it == impl_->memory.end() || it->second.agentAddress) return 0;
  uint64_t seq = begin();
  auto r = impl_->record(seq, scope);
  auto f = r.fields().initHsaFree();
  f.setAllocation(it->second.id);
  f.setAddress(u(ptr));
  replay::add(std::move(r));
  impl_->memory.erase(it);
  return seq;
}

void ReplayRecorder::allowedAccess(const core::CallScope& scope, uint32_t count, const hsa_agent_t* agents,
                                   const void* ptr) {
  uint32_t thread = threadOf(scope);
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto [base, m] = impl_->memoryAt(u(ptr));
  if (!m) {
    impl_->unsupportedLocked(thread, scope.function(),
                             "hsa_amd_agents_allow_access on memory the capture did not see allocated");
    return;
  }
  std::vector<uint64_t> ids;
  for (uint32_t i = 0; agents && i < count; ++i) ids.push_back(impl_->agentLocked(agents[i], thread));
  auto r = impl_->record(replay::nextSeq(), scope);
  auto a = r.fields().initHsaAllowAccess();
  a.setAllocation(m->id);
  auto list = a.initAgents(static_cast<unsigned>(ids.size()));
  for (size_t i = 0; i < ids.size(); ++i) list.set(static_cast<unsigned>(i), ids[i]);
  a.setAddress(u(ptr));
  replay::add(std::move(r));
}

void ReplayRecorder::locked(const core::CallScope& scope, void* host, size_t size, const hsa_agent_t* agents,
                            int count, uint64_t poolHandle, uint32_t flags, void* agentPtr) {
  uint32_t thread = threadOf(scope);
  std::lock_guard<std::mutex> lock(impl_->mu);
  std::vector<uint64_t> ids;
  for (int i = 0; agents && i < count; ++i) ids.push_back(impl_->agentLocked(agents[i], thread));
  uint64_t pool = poolHandle ? impl_->poolLocked(poolHandle, thread).first : 0;
  uint64_t id = replay::newId();
  auto r = impl_->record(replay::nextSeq(), scope);
  auto l = r.fields().initHsaLock();
  l.setLock(id);
  l.setAddress(u(host));
  l.setSize(size);
  l.setAgentAddress(u(agentPtr));
  auto list = l.initAgents(static_cast<unsigned>(ids.size()));
  for (size_t i = 0; i < ids.size(); ++i) list.set(static_cast<unsigned>(i), ids[i]);
  l.setPool(pool);
  l.setFlags(flags);
  replay::add(std::move(r));
  Memory m;
  m.id = id;
  m.size = size;
  m.host = true;
  m.agentAddress = agentPtr ? u(agentPtr) : u(host);
  if (m.agentAddress != u(host)) impl_->agentRanges[m.agentAddress] = u(host);
  impl_->memory[u(host)] = std::move(m);
}

uint64_t ReplayRecorder::unlocking(const core::CallScope& scope, void* host) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto it = impl_->memory.find(u(host));
  if (it == impl_->memory.end() || !it->second.agentAddress) return 0;
  uint64_t seq = begin();
  auto r = impl_->record(seq, scope);
  r.fields().initHsaUnlock().setLock(it->second.id);
  replay::add(std::move(r));
  impl_->agentRanges.erase(it->second.agentAddress);
  impl_->memory.erase(it);
  return seq;
}

// --- signals --------------------------------------------------------------------------

void ReplayRecorder::signalCreated(const core::CallScope& scope, hsa_signal_t signal, hsa_signal_value_t initial,
                                   uint32_t count, const hsa_agent_t* consumers, uint64_t attributes) {
  uint32_t thread = threadOf(scope);
  std::lock_guard<std::mutex> lock(impl_->mu);
  std::vector<uint64_t> ids;
  for (uint32_t i = 0; consumers && i < count; ++i) ids.push_back(impl_->agentLocked(consumers[i], thread));
  uint64_t id = replay::newId();
  auto r = impl_->record(replay::nextSeq(), scope);
  auto s = r.fields().initHsaSignalCreate();
  s.setSignal(id);
  s.setInitialValue(initial);
  auto list = s.initConsumers(static_cast<unsigned>(ids.size()));
  for (size_t i = 0; i < ids.size(); ++i) list.set(static_cast<unsigned>(i), ids[i]);
  s.setAttributes(attributes);
  replay::add(std::move(r));
  impl_->signals[signal.handle] = {id, initial, false};
}

uint64_t ReplayRecorder::signalDestroyed(const core::CallScope& scope, hsa_signal_t signal) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto it = impl_->signals.find(signal.handle);
  if (it == impl_->signals.end()) return 0;
  uint64_t seq = begin();
  auto r = impl_->record(seq, scope);
  r.fields().initHsaSignalDestroy().setSignal(it->second.id);
  replay::add(std::move(r));
  impl_->signals.erase(it);
  std::erase_if(impl_->inFlight, [&](const InFlight& f) { return f.signal == signal.handle; });
  impl_->lastPacket.erase(signal.handle);
  return seq;
}

uint64_t ReplayRecorder::opBegin(hsa_signal_t signal) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->signals.count(signal.handle) ? begin() : 0;
}

void ReplayRecorder::opDone(uint64_t seq, const core::CallScope& scope, hsa_signal_t signal, uint8_t op,
                            hsa_signal_value_t value, hsa_signal_value_t expected) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto it = impl_->signals.find(signal.handle);
  if (it == impl_->signals.end()) return;
  auto r = impl_->record(seq, scope);
  auto o = r.fields().initHsaSignalOp();
  o.setSignal(it->second.id);
  o.setOp(op);
  o.setValue(value);
  o.setExpected(expected);
  replay::add(std::move(r));
  it->second.last = GTAP_HSA_REAL(hsa_signal_load_relaxed)(signal);
}

void ReplayRecorder::waited(const core::CallScope& scope, uint8_t kind, uint32_t count, const hsa_signal_t* signals,
                            const hsa_signal_condition_t* conditions, const hsa_signal_value_t* values,
                            uint32_t index, hsa_signal_value_t observed) {
  if (!signals || !conditions || !values || index >= count) return;
  if (!conditionHolds(conditions[index], observed, values[index])) return;
  uint32_t thread = threadOf(scope);
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto it = impl_->signals.find(signals[index].handle);
  if (it == impl_->signals.end()) return;
  auto r = impl_->record(replay::nextSeq(), scope);
  auto w = r.fields().initHsaSignalWait();
  auto ids = w.initSignals(count);
  auto conds = w.initConditions(count);
  auto vals = w.initValues(count);
  for (uint32_t i = 0; i < count; ++i) {
    ids.set(i, impl_->signalLocked(signals[i]));
    conds.set(i, static_cast<uint32_t>(conditions[i]));
    vals.set(i, values[i]);
  }
  w.setSatisfied(index);
  w.setObserved(observed);
  w.setKind(kind);
  replay::add(std::move(r));
  it->second.last = observed;
  impl_->recordDeviceWrites(thread, signals[index]);
}

void ReplayRecorder::loaded(const core::CallScope& scope, hsa_signal_t signal, hsa_signal_value_t value) {
  uint32_t thread = threadOf(scope);
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto it = impl_->signals.find(signal.handle);
  // Only a fall the device made: a polling loop's other loads say nothing new.
  if (it == impl_->signals.end() || !it->second.device || value >= it->second.last) return;
  auto r = impl_->record(replay::nextSeq(), scope);
  auto w = r.fields().initHsaSignalWait();
  w.initSignals(1).set(0, it->second.id);
  w.initConditions(1).set(0, static_cast<uint32_t>(HSA_SIGNAL_CONDITION_LT));
  w.initValues(1).set(0, value + 1);
  w.setSatisfied(0);
  w.setObserved(value);
  w.setKind(2);
  replay::add(std::move(r));
  it->second.last = value;
  impl_->recordDeviceWrites(thread, signal);
}

void ReplayRecorder::groupCreated(hsa_signal_group_t group, uint32_t count, const hsa_signal_t* signals) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->groups[group.handle].assign(signals, signals + (signals ? count : 0));
}

void ReplayRecorder::groupWaited(const core::CallScope& scope, hsa_signal_group_t group,
                                 const hsa_signal_condition_t* conditions, const hsa_signal_value_t* values,
                                 hsa_signal_t signal, hsa_signal_value_t observed) {
  std::vector<hsa_signal_t> members;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    auto it = impl_->groups.find(group.handle);
    if (it == impl_->groups.end()) return;
    members = it->second;
  }
  for (uint32_t i = 0; i < members.size(); ++i)
    if (members[i].handle == signal.handle)
      return waited(scope, 1, static_cast<uint32_t>(members.size()), members.data(), conditions, values, i, observed);
}

// --- queues and packets ---------------------------------------------------------------

void ReplayRecorder::queueCreated(const core::CallScope& scope, hsa_queue_t* queue, hsa_agent_t agent, uint32_t size,
                                  hsa_queue_type32_t type, uint32_t privateSegmentSize, uint32_t groupSegmentSize) {
  uint32_t thread = threadOf(scope);
  std::lock_guard<std::mutex> lock(impl_->mu);
  uint64_t agentId = impl_->agentLocked(agent, thread);
  uint64_t id = replay::newId();
  auto r = impl_->record(replay::nextSeq(), scope);
  auto q = r.fields().initHsaQueueCreate();
  q.setQueue(id);
  q.setAgent(agentId);
  q.setSize(size);
  q.setType(static_cast<uint32_t>(type));
  q.setPrivateSegmentSize(privateSegmentSize);
  q.setGroupSegmentSize(groupSegmentSize);
  q.setAddress(u(queue));
  replay::add(std::move(r));
  impl_->queues[u(queue)] = id;
}

uint64_t ReplayRecorder::queueDestroyed(const core::CallScope& scope, hsa_queue_t* queue) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto it = impl_->queues.find(u(queue));
  if (it == impl_->queues.end()) return 0;
  uint64_t seq = begin();
  auto r = impl_->record(seq, scope);
  r.fields().initHsaQueueDestroy().setQueue(it->second);
  replay::add(std::move(r));
  impl_->queues.erase(it);
  return seq;
}

void ReplayRecorder::Impl::dispatch(const hsa_kernel_dispatch_packet_t& p, uint64_t queueId, uint64_t index,
                                    bool more, uint32_t thread) {
  auto k = kernels.find(p.kernel_object);
  std::string where = "the kernel dispatch packet at index " + std::to_string(index) + " of queue " +
                      std::to_string(queueId);
  if (k == kernels.end())
    return unsupportedLocked(thread, replay::kNoFunction,
                             where + ": its kernel object is not from an executable the capture saw frozen");
  const Kernel& kernel = k->second;
  where += " (" + kernel.name + ")";
  if (!kernel.meta)
    return unsupportedLocked(thread, replay::kNoFunction,
                             where + ": its code object has no argument metadata, so the addresses its kernarg "
                                     "segment holds cannot be found");
  uint64_t completion = signalLocked(p.completion_signal);
  if (p.completion_signal.handle && !completion)
    return unsupportedLocked(thread, replay::kNoFunction,
                             where + ": its completion signal was not created by the program while recorded");
  std::vector<uint8_t> kernarg;
  if (kernel.kernargSize) {
    if (!p.kernarg_address)
      return unsupportedLocked(thread, replay::kNoFunction, where + ": it has no kernarg segment");
    auto* a = static_cast<const uint8_t*>(p.kernarg_address);
    kernarg.assign(a, a + kernel.kernargSize);
  }
  std::vector<std::string> problems;
  auto addresses = readers::kernargAddresses(*kernel.meta, kernarg.data(), kernarg.size(), problems);
  if (!problems.empty()) return unsupportedLocked(thread, replay::kNoFunction, where + ": " + problems.front());
  struct Pointer {
    uint32_t offset;
    uint8_t size, kind;
    uint64_t queue;
  };
  std::vector<Pointer> pointers;
  for (const auto& a : addresses) {
    Pointer ptr{a.offset, static_cast<uint8_t>(a.size), 2, 0};
    if (a.value && (a.kind == readers::KernargAddressKind::programMemory ||
                    a.kind == readers::KernargAddressKind::runtimeOwned)) {
      if (memoryAt(a.value).second) {
        ptr.kind = 0;
      } else {
        for (const auto& [address, id] : queues)
          if (a.value >= address && a.value - address < sizeof(amd_queue_t)) {
            ptr.kind = 1;
            ptr.queue = id;
          }
        if (ptr.kind != 1) {
          const auto& arg = kernel.meta->args[a.arg];
          char value[32];
          std::snprintf(value, sizeof value, "0x%llx", static_cast<unsigned long long>(a.value));
          return unsupportedLocked(thread, replay::kNoFunction,
                                   where + ": argument " + (arg.name.empty() ? std::to_string(a.arg) : arg.name) +
                                       " (offset " + std::to_string(a.offset) + ", " + arg.valueKind + ") holds " +
                                       value + ", which points into no memory the capture recorded");
        }
      }
    }
    pointers.push_back(ptr);
  }
  uint64_t number = dispatches++;
  replay::dispatchesStarting(number, 1, thread);
  auto r = record(replay::nextSeq(), thread, replay::kNoFunction);
  auto d = r.fields().initHsaDispatch();
  d.setQueue(queueId);
  d.setIndex(index);
  d.setHeader(p.header);
  d.setSetup(p.setup);
  setDim3(d.initWorkgroup(), p.workgroup_size_x, p.workgroup_size_y, p.workgroup_size_z);
  setDim3(d.initGrid(), p.grid_size_x, p.grid_size_y, p.grid_size_z);
  d.setPrivateSegmentSize(p.private_segment_size);
  d.setGroupSegmentSize(p.group_segment_size);
  d.setKernel(kernel.id);
  d.setKernargAddress(u(p.kernarg_address));
  d.setSignal(completion);
  d.setDispatch(number);
  auto list = d.initPointers(static_cast<unsigned>(pointers.size()));
  for (size_t i = 0; i < pointers.size(); ++i) {
    auto e = list[static_cast<unsigned>(i)];
    e.setOffset(pointers[i].offset);
    e.setSize(pointers[i].size);
    e.setKind(pointers[i].kind);
    e.setQueue(pointers[i].queue);
  }
  d.setMore(more);
  r.payload = replay::inlinePayload(kernarg.data(), kernarg.size());
  replay::add(std::move(r));
  replay::dispatchesDone(number, 1, thread);
  if (completion) signals[p.completion_signal.handle].device = true;
  packetSent(queueId, p.header, p.completion_signal);
  // The host memory it can reach may change under the program until it sees
  // the dispatch done: not recorded as the program's meanwhile.
  for (const auto& a : addresses) {
    if (!a.value) continue;
    auto [base, m] = memoryAt(a.value);
    if (m && m->host) addInFlight({0, p.completion_signal.handle, base, m->size, false, queueId, packetOrder});
  }
}

void ReplayRecorder::Impl::barrier(const hsa_barrier_and_packet_t& p, bool any, uint64_t queueId, uint64_t index,
                                   bool more, uint32_t thread) {
  std::string where = std::string("the barrier-") + (any ? "OR" : "AND") + " packet at index " +
                      std::to_string(index) + " of queue " + std::to_string(queueId);
  uint64_t deps[5];
  for (int i = 0; i < 5; ++i) {
    deps[i] = signalLocked(p.dep_signal[i]);
    if (p.dep_signal[i].handle && !deps[i])
      return unsupportedLocked(thread, replay::kNoFunction,
                               where + ": dependency signal " + std::to_string(i) +
                                   " was not created by the program while recorded");
  }
  uint64_t completion = signalLocked(p.completion_signal);
  if (p.completion_signal.handle && !completion)
    return unsupportedLocked(thread, replay::kNoFunction,
                             where + ": its completion signal was not created by the program while recorded");
  auto r = record(replay::nextSeq(), thread, replay::kNoFunction);
  auto b = r.fields().initHsaBarrier();
  b.setQueue(queueId);
  b.setIndex(index);
  b.setHeader(p.header);
  b.setAny(any);
  auto list = b.initDependencies(5);
  for (unsigned i = 0; i < 5; ++i) list.set(i, deps[i]);
  b.setSignal(completion);
  b.setMore(more);
  replay::add(std::move(r));
  if (completion) signals[p.completion_signal.handle].device = true;
  std::vector<uint64_t> handles;
  for (const hsa_signal_t& d : p.dep_signal)
    if (d.handle) handles.push_back(d.handle);
  packetSent(queueId, p.header, p.completion_signal, std::move(handles));
}

void ReplayRecorder::packets(hsa_queue_t* queue, const void* packets, uint64_t count, uint64_t firstIndex) {
  uint32_t thread = core::currentThreadId();
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto q = impl_->queues.find(u(queue));
  if (q == impl_->queues.end()) return;
  impl_->hostBytes.newSubmission();
  impl_->recordHostChanges(thread);
  const auto* in = static_cast<const hsa_kernel_dispatch_packet_t*>(packets);
  // Packets the program wrote past these before ringing: replay rings once
  // for them all, as the program did.
  uint64_t written = GTAP_HSA_REAL(hsa_queue_load_write_index_relaxed)
                         ? GTAP_HSA_REAL(hsa_queue_load_write_index_relaxed)(queue)
                         : 0;
  for (uint64_t i = 0; i < count; ++i) {
    bool more = firstIndex + i + 1 < written;
    hsa_kernel_dispatch_packet_t p;
    std::memcpy(&p, &in[i], sizeof p);
    uint16_t type = packetType(p.header);
    if (type == HSA_PACKET_TYPE_KERNEL_DISPATCH) {
      impl_->dispatch(p, q->second, firstIndex + i, more, thread);
    } else if (type == HSA_PACKET_TYPE_BARRIER_AND || type == HSA_PACKET_TYPE_BARRIER_OR) {
      hsa_barrier_and_packet_t b;
      std::memcpy(&b, &in[i], sizeof b);
      impl_->barrier(b, type == HSA_PACKET_TYPE_BARRIER_OR, q->second, firstIndex + i, more, thread);
    } else if (type != HSA_PACKET_TYPE_INVALID) {
      impl_->unsupportedLocked(thread, replay::kNoFunction,
                               "the packet at index " + std::to_string(firstIndex + i) + " of queue " +
                                   std::to_string(q->second) + " is of type " + std::to_string(type) +
                                   (type == HSA_PACKET_TYPE_VENDOR_SPECIFIC ? " (vendor-specific)"
                                                                            : " (agent dispatch)") +
                                   ", which replay does not reproduce");
    }
  }
}

// --- code objects, executables, kernels -----------------------------------------------

void ReplayRecorder::codeObject(const core::CallScope& scope, hsa_code_object_reader_t reader, const void* data,
                                size_t size) {
  std::shared_ptr<const readers::CodeObjectInfo> info;
  try {
    info = std::make_shared<readers::CodeObjectInfo>(readers::parseCodeObjectMetadata(data, size));
  } catch (const std::exception&) {
    // Without metadata its dispatches are refused, naming why.
  }
  std::lock_guard<std::mutex> lock(impl_->mu);
  uint64_t id = replay::newId();
  auto r = impl_->record(replay::nextSeq(), scope);
  auto c = r.fields().initHsaCodeObject();
  c.setCodeObject(id);
  if (info) c.setTarget(info->target);
  r.payload = replay::blobPayload(data, size);
  replay::add(std::move(r));
  impl_->codeObjects[reader.handle] = {id, std::move(info)};
}

uint64_t ReplayRecorder::codeObjectDestroyed(const core::CallScope& scope, hsa_code_object_reader_t reader) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto it = impl_->codeObjects.find(reader.handle);
  if (it == impl_->codeObjects.end()) return 0;
  uint64_t seq = begin();
  auto r = impl_->record(seq, scope);
  r.fields().initHsaCodeObjectDestroy().setCodeObject(it->second.id);
  replay::add(std::move(r));
  impl_->codeObjects.erase(it);
  return seq;
}

void ReplayRecorder::executableCreated(const core::CallScope& scope, hsa_executable_t executable,
                                       hsa_profile_t profile, hsa_default_float_rounding_mode_t rounding,
                                       const char* options) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  uint64_t id = replay::newId();
  auto r = impl_->record(replay::nextSeq(), scope);
  auto e = r.fields().initHsaExecutableCreate();
  e.setExecutable(id);
  e.setProfile(static_cast<uint32_t>(profile));
  e.setRoundingMode(static_cast<uint32_t>(rounding));
  if (options) e.setOptions(options);
  replay::add(std::move(r));
  impl_->executables[executable.handle] = Executable{id, {}, {}};
}

void ReplayRecorder::codeObjectLoaded(const core::CallScope& scope, hsa_executable_t executable, hsa_agent_t agent,
                                      hsa_code_object_reader_t reader, const char* options) {
  uint32_t thread = threadOf(scope);
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto e = impl_->executables.find(executable.handle);
  auto c = impl_->codeObjects.find(reader.handle);
  if (e == impl_->executables.end() || c == impl_->codeObjects.end())
    return impl_->unsupportedLocked(thread, scope.function(),
                                    "a code object loaded into an executable or from a reader made before recording");
  uint64_t agentId = impl_->agentLocked(agent, thread);
  auto r = impl_->record(replay::nextSeq(), scope);
  auto l = r.fields().initHsaExecutableLoad();
  l.setExecutable(e->second.id);
  l.setAgent(agentId);
  l.setCodeObject(c->second.id);
  if (options) l.setOptions(options);
  replay::add(std::move(r));
  e->second.loaded.emplace_back(agent, c->second.id);
}

void ReplayRecorder::executableFrozen(const core::CallScope& scope, hsa_executable_t executable) {
  struct Symbol {
    std::string name;
    hsa_agent_t agent{};
    uint64_t object = 0;
    uint32_t kernarg = 0, kernargAlign = 0, group = 0, priv = 0;
  };
  std::vector<hsa_executable_symbol_t> found;
  GTAP_HSA_CALL(hsa_executable_iterate_symbols, executable,
                [](hsa_executable_t, hsa_executable_symbol_t s, void* v) {
                  hsa_symbol_kind_t kind{};
                  if (GTAP_HSA_CALL(hsa_executable_symbol_get_info, s, HSA_EXECUTABLE_SYMBOL_INFO_TYPE, &kind) ==
                          HSA_STATUS_SUCCESS &&
                      kind == HSA_SYMBOL_KIND_KERNEL)
                    static_cast<std::vector<hsa_executable_symbol_t>*>(v)->push_back(s);
                  return HSA_STATUS_SUCCESS;
                },
                &found);
  std::vector<Symbol> symbols;
  for (hsa_executable_symbol_t s : found) {
    auto info = [&](hsa_executable_symbol_info_t attribute, auto& value) {
      return GTAP_HSA_CALL(hsa_executable_symbol_get_info, s, attribute, &value) == HSA_STATUS_SUCCESS;
    };
    Symbol sym;
    uint32_t length = 0;
    if (!info(HSA_EXECUTABLE_SYMBOL_INFO_NAME_LENGTH, length) || !info(HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, sym.object))
      continue;
    sym.name.assign(length, '\0');
    if (GTAP_HSA_CALL(hsa_executable_symbol_get_info, s, HSA_EXECUTABLE_SYMBOL_INFO_NAME, sym.name.data()) !=
        HSA_STATUS_SUCCESS)
      continue;
    sym.name.resize(std::strlen(sym.name.c_str()));
    info(HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE, sym.kernarg);
    info(HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_ALIGNMENT, sym.kernargAlign);
    info(HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE, sym.group);
    info(HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE, sym.priv);
    info(HSA_EXECUTABLE_SYMBOL_INFO_AGENT, sym.agent);
    symbols.push_back(std::move(sym));
  }
  uint32_t thread = threadOf(scope);
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto e = impl_->executables.find(executable.handle);
  if (e == impl_->executables.end()) return;
  auto r = impl_->record(replay::nextSeq(), scope);
  r.fields().initHsaExecutableFreeze().setExecutable(e->second.id);
  replay::add(std::move(r));
  for (const Symbol& sym : symbols) {
    // The code object loaded for the agent whose metadata names the symbol.
    Kernel kernel;
    kernel.id = replay::newId();
    kernel.name = sym.name;
    if (kernel.name.size() > 3 && kernel.name.compare(kernel.name.size() - 3, 3, ".kd") == 0)
      kernel.name.resize(kernel.name.size() - 3);
    kernel.kernargSize = sym.kernarg;
    uint64_t codeObjectId = 0;
    for (const auto& [agent, codeId] : e->second.loaded) {
      if (agent.handle != sym.agent.handle) continue;
      for (const auto& [handle, c] : impl_->codeObjects) {
        if (c.id != codeId || !c.info) continue;
        for (const auto& k : c.info->kernels)
          if (k.symbol == sym.name || k.name == kernel.name) {
            codeObjectId = codeId;
            kernel.code = c.info;
            kernel.meta = &k;
          }
      }
    }
    auto k = impl_->record(replay::nextSeq(), thread, replay::kNoFunction);
    auto f = k.fields().initHsaKernel();
    f.setKernel(kernel.id);
    f.setExecutable(e->second.id);
    f.setAgent(impl_->agentLocked(sym.agent, thread));
    f.setCodeObject(codeObjectId);
    f.setSymbol(sym.name);
    f.setObject(sym.object);
    f.setKernargSize(sym.kernarg);
    f.setKernargAlignment(sym.kernargAlign);
    f.setGroupSegmentSize(sym.group);
    f.setPrivateSegmentSize(sym.priv);
    replay::add(std::move(k));
    impl_->kernels[sym.object] = std::move(kernel);
    e->second.kernelObjects.push_back(sym.object);
  }
}

uint64_t ReplayRecorder::executableDestroyed(const core::CallScope& scope, hsa_executable_t executable) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto e = impl_->executables.find(executable.handle);
  if (e == impl_->executables.end()) return 0;
  uint64_t seq = begin();
  auto r = impl_->record(seq, scope);
  r.fields().initHsaExecutableDestroy().setExecutable(e->second.id);
  replay::add(std::move(r));
  for (uint64_t object : e->second.kernelObjects) impl_->kernels.erase(object);
  impl_->executables.erase(e);
  return seq;
}

// --- copies and fills -----------------------------------------------------------------

uint64_t ReplayRecorder::copying(const core::CallScope& scope, void* dst, hsa_agent_t dstAgent, const void* src,
                                 hsa_agent_t srcAgent, size_t size, uint32_t numDeps, const hsa_signal_t* deps,
                                 hsa_signal_t signal, bool synchronous) {
  uint32_t thread = threadOf(scope);
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->hostBytes.newSubmission();
  impl_->recordHostChanges(thread);
  std::vector<uint64_t> depIds;
  for (uint32_t i = 0; deps && i < numDeps; ++i) {
    depIds.push_back(impl_->signalLocked(deps[i]));
    if (deps[i].handle && !depIds.back()) {
      impl_->unsupportedLocked(thread, scope.function(),
                               "an async copy depends on a signal the program did not create while recorded");
      return 0;
    }
  }
  uint64_t completion = impl_->signalLocked(signal);
  if (!synchronous && signal.handle && !completion) {
    impl_->unsupportedLocked(thread, scope.function(),
                             "an async copy completes a signal the program did not create while recorded");
    return 0;
  }
  uint64_t seq = begin();
  auto r = impl_->record(seq, scope);
  bool hostSource = size && !impl_->memoryAt(u(src), size).second;
  if (hostSource) {
    std::string refusal;
    r.payload = impl_->hostBytes.read(src, size, refusal);
    if (!refusal.empty()) {
      r.payload = {};
      r.fields().initUnsupported().setReason(refusal);
      replay::add(std::move(r));
      return seq;
    }
  }
  auto c = r.fields().initHsaCopy();
  c.setDst(u(dst));
  c.setDstAgent(impl_->agentLocked(dstAgent, thread));
  c.setSrc(u(src));
  c.setSrcAgent(impl_->agentLocked(srcAgent, thread));
  c.setSize(size);
  auto list = c.initDependencies(static_cast<unsigned>(depIds.size()));
  for (size_t i = 0; i < depIds.size(); ++i) list.set(static_cast<unsigned>(i), depIds[i]);
  c.setSignal(completion);
  c.setSynchronous(synchronous);
  replay::add(std::move(r));
  if (synchronous || !size) return seq;
  std::vector<uint64_t> handles;
  for (uint32_t i = 0; deps && i < numDeps; ++i)
    if (deps[i].handle) handles.push_back(deps[i].handle);
  impl_->packetSent(0, 0, signal, std::move(handles));
  Memory* m = impl_->memoryAt(u(dst), size).second;
  if (!m || m->host) impl_->addInFlight({seq, signal.handle, u(dst), size, !m, 0, 0});
  if (completion) impl_->signals[signal.handle].device = true;
  return seq;
}

void ReplayRecorder::copiedSynchronously(const core::CallScope& scope, uint64_t seq, void* dst, size_t size) {
  uint32_t thread = threadOf(scope);
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (impl_->memoryAt(u(dst), size).second) {
    impl_->recordDeviceWrites(thread, hsa_signal_t{}, u(dst));
    return;
  }
  auto r = impl_->record(replay::nextSeq(), thread, replay::kNoFunction);
  auto b = r.fields().initReadBack();
  b.setCopy(seq);
  b.setOffset(0);
  b.setDst(u(dst));
  r.payload = replay::blobPayload(dst, size);
  replay::add(std::move(r));
}

uint64_t ReplayRecorder::filling(const core::CallScope& scope, void* dst, uint32_t value, size_t count) {
  uint32_t thread = threadOf(scope);
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (!impl_->memoryAt(u(dst), count * 4).second) {
    impl_->unsupportedLocked(thread, scope.function(), "hsa_amd_memory_fill on memory the capture did not see allocated");
    return 0;
  }
  impl_->hostBytes.newSubmission();
  impl_->recordHostChanges(thread);
  uint64_t seq = begin();
  auto r = impl_->record(seq, scope);
  auto f = r.fields().initHsaFill();
  f.setDst(u(dst));
  f.setValue(value);
  f.setCount(count);
  replay::add(std::move(r));
  return seq;
}

void ReplayRecorder::unsupported(const core::CallScope& scope, std::string reason) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->unsupportedLocked(threadOf(scope), scope.function(), reason);
}

void ReplayRecorder::failed(uint64_t seq, const core::CallScope& scope) {
  if (!seq || replay::retract(seq)) return;
  unsupported(scope, "record " + std::to_string(seq) + " was written before its call failed");
}

void replayUnsupportedCall(const core::CallScope& scope, const char* name) {
  if (!replaying(scope)) return;
  try {
    ReplayRecorder::get().unsupported(scope, std::string(name) + " is not replayed");
  } GTAP_CATCH_INTERNAL {
    core::stopAfterInternalError("recording an HSA call for replay");
  }
}

}  // namespace gtap::hsa

// --- the generic wrapper's recording (replay_calls.h) ----------------------------------

namespace gtap::hsa::replaycalls {

// gtap's failure while recording leaves the program's call as it was and
// stops gtap (internal_error.h).
template <typename F>
void guarded(F&& f) {
  try {
    f();
  } GTAP_CATCH_INTERNAL {
    core::stopAfterInternalError("recording an HSA call for replay");
  }
}

bool on(const core::CallScope& scope) { return replaying(scope) && !core::stoppedAfterInternalError(); }

void signalCreated(const core::CallScope& scope, hsa_status_t status, hsa_signal_value_t initial, uint32_t count,
                   const hsa_agent_t* consumers, uint64_t attributes, const hsa_signal_t* signal) {
  if (status != HSA_STATUS_SUCCESS || !signal) return;
  guarded([&] { ReplayRecorder::get().signalCreated(scope, *signal, initial, count, consumers, attributes); });
}

uint64_t opBegin(const core::CallScope&, hsa_signal_t signal) {
  uint64_t seq = 0;
  guarded([&] { seq = ReplayRecorder::get().opBegin(signal); });
  return seq;
}

void opDone(uint64_t seq, const core::CallScope& scope, hsa_signal_t signal, uint8_t op, hsa_signal_value_t value,
            hsa_signal_value_t expected) {
  guarded([&] { ReplayRecorder::get().opDone(seq, scope, signal, op, value, expected); });
}

void loaded(const core::CallScope& scope, hsa_signal_t signal, hsa_signal_value_t value) {
  guarded([&] { ReplayRecorder::get().loaded(scope, signal, value); });
}

hsa_signal_value_t load(hsa_signal_t signal) { return GTAP_HSA_REAL(hsa_signal_load_relaxed)(signal); }

void waited(const core::CallScope& scope, uint32_t count, const hsa_signal_t* signals,
            const hsa_signal_condition_t* conditions, const hsa_signal_value_t* values, uint32_t index,
            hsa_signal_value_t observed, uint8_t kind) {
  guarded([&] { ReplayRecorder::get().waited(scope, kind, count, signals, conditions, values, index, observed); });
}

void groupCreated(const core::CallScope&, hsa_status_t status, uint32_t count, const hsa_signal_t* signals,
                  const hsa_signal_group_t* group) {
  if (status != HSA_STATUS_SUCCESS || !group) return;
  guarded([&] { ReplayRecorder::get().groupCreated(*group, count, signals); });
}

void groupWaited(const core::CallScope& scope, hsa_status_t status, hsa_signal_group_t group,
                 const hsa_signal_condition_t* conditions, const hsa_signal_value_t* values,
                 const hsa_signal_t* signal, const hsa_signal_value_t* value) {
  if (status != HSA_STATUS_SUCCESS || !signal || !value) return;
  guarded([&] { ReplayRecorder::get().groupWaited(scope, group, conditions, values, *signal, *value); });
}

void unsupported(const core::CallScope& scope, const char* name) { replayUnsupportedCall(scope, name); }

}  // namespace gtap::hsa::replaycalls
