#include "hsa_session.h"

#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <thread>

namespace gtap::replay {

namespace {

using O = readers::ReplayOp;
using readers::ReplayError;
using readers::ReplayRecord;

// Cleanup waits at most this long for work still queued: after a failure,
// some may wait on signals that will never be set.
constexpr uint64_t kCleanupTimeoutNs = 10'000'000'000;
// Waits block in slices this long, between which queue errors are checked.
constexpr uint64_t kWaitSliceNs = 100'000'000;
// Replay-owned kernarg memory is taken from the kernarg pool this much at a time.
constexpr uint64_t kKernargChunk = uint64_t{1} << 20;
constexpr size_t kPacketBytes = 64;
// More host memory than a 47-bit user address space holds: no program locked it.
constexpr uint64_t kMaxHostBytes = uint64_t{1} << 47;

uint64_t nowNs() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string seconds(uint64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g s", static_cast<double>(ns) / 1e9);
  return buf;
}

const char* conditionText(uint32_t c) {
  switch (c) {
    case HSA_SIGNAL_CONDITION_EQ: return "==";
    case HSA_SIGNAL_CONDITION_NE: return "!=";
    case HSA_SIGNAL_CONDITION_LT: return "<";
    case HSA_SIGNAL_CONDITION_GTE: return ">=";
    default: return "?";
  }
}

bool holds(hsa_signal_condition_t c, hsa_signal_value_t v, hsa_signal_value_t against) {
  switch (c) {
    case HSA_SIGNAL_CONDITION_EQ: return v == against;
    case HSA_SIGNAL_CONDITION_NE: return v != against;
    case HSA_SIGNAL_CONDITION_LT: return v < against;
    case HSA_SIGNAL_CONDITION_GTE: return v >= against;
  }
  return false;
}

uint64_t pageRound(uint64_t size) {
  uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  return (std::max<uint64_t>(size, 1) + page - 1) / page * page;
}

// Zeroed, page-aligned host memory of the replay's own (null on failure).
void* mapHost(uint64_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

void queueError(hsa_status_t status, hsa_queue_t*, void* data) {
  auto* error = static_cast<std::atomic<hsa_status_t>*>(data);
  hsa_status_t expected = HSA_STATUS_SUCCESS;
  error->compare_exchange_strong(expected, status);
}

uint16_t packetType(uint16_t header) {
  return static_cast<uint16_t>((header >> HSA_PACKET_HEADER_TYPE) & ((1u << HSA_PACKET_HEADER_WIDTH_TYPE) - 1));
}

// What synchronizeAll and cleanup append to a queue: a barrier-AND that
// waits for everything before it.
constexpr uint16_t kSyncBarrierHeader =
    (HSA_PACKET_TYPE_BARRIER_AND << HSA_PACKET_HEADER_TYPE) | (1 << HSA_PACKET_HEADER_BARRIER) |
    (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE) |
    (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE);

}  // namespace

HsaSession::HsaSession(const ReplaySetup& setup, readers::ReplayResult& result)
    : setup_(setup), hsa_(*setup.hsa), result_(result) {}

HsaSession::~HsaSession() { cleanup(); }

void HsaSession::check(const ReplayRecord& r, hsa_status_t status, const char* function) {
  if (status != HSA_STATUS_SUCCESS)
    throw ReplayError(where(r) + ": " + function + " returned " + hsaStatusName(hsa_, status));
}

void HsaSession::checkQueues(const std::string& at) {
  for (const auto& [id, q] : queues_) {
    hsa_status_t s = q->error.load();
    if (s != HSA_STATUS_SUCCESS)
      throw ReplayError(at + ": queue " + std::to_string(id) + " stopped: the runtime reported " +
                        hsaStatusName(hsa_, s) + " for a packet it ran");
  }
}

hsa_agent_t HsaSession::agent(const ReplayRecord& r, uint64_t id, const char* role) {
  auto it = setup_.hsaAgents.agents.find(id);
  if (it == setup_.hsaAgents.agents.end())
    throw ReplayError(where(r) + ": " + role + " id " + std::to_string(id) + " has no hsaAgent record");
  return it->second;
}

std::vector<hsa_agent_t> HsaSession::agents(const ReplayRecord& r, capnp::List<uint64_t>::Reader ids,
                                            const char* role) {
  std::vector<hsa_agent_t> out;
  for (uint64_t id : ids) out.push_back(agent(r, id, role));
  return out;
}

hsa_signal_t HsaSession::signal(const ReplayRecord& r, uint64_t id, const char* role, bool optional) {
  if (id == 0 && optional) return hsa_signal_t{0};
  auto it = signals_.find(id);
  if (it == signals_.end())
    throw ReplayError(where(r) + ": " + role + " id " + std::to_string(id) +
                      " is not a live signal (never created, or already destroyed)");
  return it->second;
}

HsaSession::Queue& HsaSession::queue(const ReplayRecord& r, uint64_t id) {
  auto it = queues_.find(id);
  if (it == queues_.end())
    throw ReplayError(where(r) + ": queue id " + std::to_string(id) +
                      " is not a live queue (never created, or already destroyed)");
  return *it->second;
}

HsaSession::Memory& HsaSession::memory(const ReplayRecord& r, uint64_t id, const char* role) {
  auto it = memory_.find(id);
  if (it == memory_.end())
    throw ReplayError(where(r) + ": " + role + " id " + std::to_string(id) +
                      " is not a live allocation or locked range (never made, or already freed)");
  return it->second;
}

uint8_t* HsaSession::translate(const ReplayRecord& r, uint64_t address, uint64_t size, const char* role) {
  auto hit = addresses_.find(address);
  if (!hit) return nullptr;
  if (size > hit->range->size - hit->offset)
    throw ReplayError(where(r) + ": " + role + " " + hex(address) + " + " + std::to_string(size) +
                      " bytes runs past the end of allocation " + std::to_string(hit->range->id) + " (" +
                      std::to_string(hit->range->size) + " bytes)");
  return hit->replay();
}

// --- the records ----------------------------------------------------------------------

void HsaSession::perform(const ReplayRecord& r, size_t index) {
  if (!queues_.empty()) checkQueues(where(r));
  if (r.op != O::HSA_DISPATCH && r.op != O::HSA_BARRIER) ringDoorbells();
  switch (r.op) {
    case O::HSA_AGENT:
    case O::HSA_POOL: return;  // found by prepare()
    case O::HSA_ALLOCATE:
    case O::HSA_FREE:
    case O::HSA_ALLOW_ACCESS:
    case O::HSA_LOCK:
    case O::HSA_UNLOCK:
    case O::HSA_FILL: return performMemory(r, index);
    case O::HSA_SIGNAL_CREATE:
    case O::HSA_SIGNAL_DESTROY:
    case O::HSA_SIGNAL_OP:
    case O::HSA_SIGNAL_WAIT: return performSignal(r);
    case O::HSA_QUEUE_CREATE:
    case O::HSA_QUEUE_DESTROY:
    case O::HSA_CODE_OBJECT:
    case O::HSA_CODE_OBJECT_DESTROY:
    case O::HSA_EXECUTABLE_CREATE:
    case O::HSA_EXECUTABLE_LOAD:
    case O::HSA_EXECUTABLE_FREEZE:
    case O::HSA_EXECUTABLE_DESTROY:
    case O::HSA_KERNEL: return performObject(r, index);
    case O::HSA_DISPATCH: return performDispatch(r, index);
    case O::HSA_BARRIER: return performBarrier(r);
    case O::HSA_COPY: return performCopy(r, index);
    case O::HOST_DATA: return performHostData(r, index);
    case O::READ_BACK: return performReadBack(r, index);
    default: throw ReplayError(where(r) + ": not an HSA operation: " + readers::replayOpName(r.op));
  }
}

void HsaSession::performMemory(const ReplayRecord& r, size_t) {
  const auto f = r.fields;
  switch (r.op) {
    case O::HSA_ALLOCATE: {
      auto a = f.getHsaAllocate();
      uint64_t id = a.getAllocation();
      if (id == 0 || memory_.count(id))
        throw ReplayError(where(r) + ": allocation id " + std::to_string(id) + (id ? " is already live" : " is not valid"));
      auto pool = setup_.hsaAgents.pools.find(a.getPool());
      if (pool == setup_.hsaAgents.pools.end())
        throw ReplayError(where(r) + ": pool id " + std::to_string(a.getPool()) + " has no hsaPool record");
      if (a.getAddress() == 0) throw ReplayError(where(r) + ": expected the captured address");
      void* ptr = nullptr;
      check(r, hsa_.hsa_amd_memory_pool_allocate(pool->second, a.getSize(), a.getFlags(), &ptr),
            "hsa_amd_memory_pool_allocate");
      Memory m;
      m.replay = ptr;
      m.size = a.getSize();
      m.captured = a.getAddress();
      m.hostAccessible = a.getHostAccessible();
      // The capture records only the host pages that differ from zeros.
      if (m.hostAccessible) std::memset(ptr, 0, m.size);
      memory_[id] = m;
      addresses_.add(m.captured, {m.size, static_cast<uint8_t*>(ptr), id});
      liveBytes_ += m.size;
      return;
    }
    case O::HSA_FREE: {
      uint64_t id = f.getHsaFree().getAllocation();
      Memory& m = memory(r, id, "allocation");
      if (m.kind != Memory::Kind::allocation)
        throw ReplayError(where(r) + ": id " + std::to_string(id) + " is a locked range, not an allocation");
      check(r, hsa_.hsa_amd_memory_pool_free(m.replay), "hsa_amd_memory_pool_free");
      addresses_.remove(m.captured, id);
      liveBytes_ -= m.size;
      overlays_.erase(overlays_.lower_bound({id, 0}), overlays_.lower_bound({id + 1, 0}));
      memory_.erase(id);
      return;
    }
    case O::HSA_ALLOW_ACCESS: {
      auto a = f.getHsaAllowAccess();
      auto list = agents(r, a.getAgents(), "agent");
      uint8_t* ptr = translate(r, a.getAddress(), 1, "address");
      if (!ptr)
        throw ReplayError(where(r) + ": address " + hex(a.getAddress()) +
                          " lies in no live captured allocation or locked range");
      check(r, hsa_.hsa_amd_agents_allow_access(static_cast<uint32_t>(list.size()), list.data(), nullptr, ptr),
            "hsa_amd_agents_allow_access");
      return;
    }
    case O::HSA_LOCK: {
      auto l = f.getHsaLock();
      uint64_t id = l.getLock();
      if (id == 0 || memory_.count(id))
        throw ReplayError(where(r) + ": lock id " + std::to_string(id) + (id ? " is already live" : " is not valid"));
      if (l.getSize() == 0 || l.getAddress() == 0)
        throw ReplayError(where(r) + ": expected the captured address and a size");
      if (l.getSize() > kMaxHostBytes)
        throw ReplayError(where(r) + ": " + std::to_string(l.getSize()) +
                          " bytes of locked memory is more than a process can map");
      auto list = agents(r, l.getAgents(), "agent");
      Memory m;
      m.kind = Memory::Kind::lock;
      m.size = l.getSize();
      m.mappedBytes = pageRound(m.size);
      m.captured = l.getAddress();
      m.capturedAgent = l.getAgentAddress();
      m.hostAccessible = true;
      m.replay = mapHost(m.mappedBytes);
      if (!m.replay)
        throw ReplayError(where(r) + ": cannot map " + std::to_string(m.size) + " bytes of host memory to lock: " +
                          std::strerror(errno));
      hsa_status_t s;
      const char* function;
      if (l.getPool()) {
        auto pool = setup_.hsaAgents.pools.find(l.getPool());
        if (pool == setup_.hsaAgents.pools.end()) {
          munmap(m.replay, m.mappedBytes);
          throw ReplayError(where(r) + ": pool id " + std::to_string(l.getPool()) + " has no hsaPool record");
        }
        function = "hsa_amd_memory_lock_to_pool";
        s = hsa_.hsa_amd_memory_lock_to_pool(m.replay, m.size, list.empty() ? nullptr : list.data(),
                                             static_cast<int>(list.size()), pool->second, l.getFlags(), &m.agent);
      } else {
        function = "hsa_amd_memory_lock";
        s = hsa_.hsa_amd_memory_lock(m.replay, m.size, list.empty() ? nullptr : list.data(),
                                     static_cast<int>(list.size()), &m.agent);
      }
      if (s != HSA_STATUS_SUCCESS) {
        munmap(m.replay, m.mappedBytes);
        check(r, s, function);
      }
      if (!m.agent) m.agent = m.replay;
      memory_[id] = m;
      addresses_.add(m.captured, {m.size, static_cast<uint8_t*>(m.replay), id});
      if (m.capturedAgent && m.capturedAgent != m.captured)
        addresses_.add(m.capturedAgent, {m.size, static_cast<uint8_t*>(m.agent), id});
      liveBytes_ += m.size;
      return;
    }
    case O::HSA_UNLOCK: {
      uint64_t id = f.getHsaUnlock().getLock();
      Memory& m = memory(r, id, "lock");
      if (m.kind != Memory::Kind::lock)
        throw ReplayError(where(r) + ": id " + std::to_string(id) + " is an allocation, not a locked range");
      check(r, hsa_.hsa_amd_memory_unlock(m.replay), "hsa_amd_memory_unlock");
      munmap(m.replay, m.mappedBytes);
      addresses_.remove(m.captured, id);
      if (m.capturedAgent && m.capturedAgent != m.captured) addresses_.remove(m.capturedAgent, id);
      liveBytes_ -= m.size;
      overlays_.erase(overlays_.lower_bound({id, 0}), overlays_.lower_bound({id + 1, 0}));
      memory_.erase(id);
      return;
    }
    case O::HSA_FILL: {
      auto fill = f.getHsaFill();
      uint64_t bytes;
      if (__builtin_mul_overflow(fill.getCount(), uint64_t{4}, &bytes))
        throw ReplayError(where(r) + ": a fill of " + std::to_string(fill.getCount()) + " words overflows");
      uint8_t* dst = translate(r, fill.getDst(), bytes, "destination");
      if (!dst)
        throw ReplayError(where(r) + ": the fill's destination " + hex(fill.getDst()) +
                          " lies in no live captured allocation or locked range");
      check(r, hsa_.hsa_amd_memory_fill(dst, fill.getValue(), fill.getCount()), "hsa_amd_memory_fill");
      return;
    }
    default: return;
  }
}

void HsaSession::performSignal(const ReplayRecord& r) {
  const auto f = r.fields;
  switch (r.op) {
    case O::HSA_SIGNAL_CREATE: {
      auto c = f.getHsaSignalCreate();
      uint64_t id = c.getSignal();
      if (id == 0 || signals_.count(id))
        throw ReplayError(where(r) + ": signal id " + std::to_string(id) + (id ? " is already live" : " is not valid"));
      auto consumers = agents(r, c.getConsumers(), "consumer agent");
      hsa_signal_t s{};
      auto n = static_cast<uint32_t>(consumers.size());
      const hsa_agent_t* list = consumers.empty() ? nullptr : consumers.data();
      if (c.getAttributes() == 0)
        check(r, hsa_.hsa_signal_create(c.getInitialValue(), n, list, &s), "hsa_signal_create");
      else
        check(r, hsa_.hsa_amd_signal_create(c.getInitialValue(), n, list, c.getAttributes(), &s),
              "hsa_amd_signal_create");
      signals_[id] = s;
      return;
    }
    case O::HSA_SIGNAL_DESTROY: {
      uint64_t id = f.getHsaSignalDestroy().getSignal();
      hsa_signal_t s = signal(r, id, "signal");
      std::erase_if(outstanding_, [&](const Outstanding& o) { return o.signalId == id; });
      check(r, hsa_.hsa_signal_destroy(s), "hsa_signal_destroy");
      signals_.erase(id);
      return;
    }
    case O::HSA_SIGNAL_OP: {
      auto o = f.getHsaSignalOp();
      hsa_signal_t s = signal(r, o.getSignal(), "signal");
      hsa_signal_value_t v = o.getValue();
      // Copies still due to decrement the signal: an add or subtract moves
      // the value they will leave; any other change means the program knew
      // they were done (it reuses the signal).
      for (Outstanding& out : outstanding_) {
        if (out.signalId != o.getSignal()) continue;
        if (o.getOp() == 1) out.below += v;
        else if (o.getOp() == 2) out.below -= v;
      }
      if (o.getOp() != 1 && o.getOp() != 2)
        std::erase_if(outstanding_, [&](const Outstanding& out) { return out.signalId == o.getSignal(); });
      switch (o.getOp()) {
        case 0: hsa_.hsa_signal_store_screlease(s, v); return;
        case 1: hsa_.hsa_signal_add_scacq_screl(s, v); return;
        case 2: hsa_.hsa_signal_subtract_scacq_screl(s, v); return;
        case 3: hsa_.hsa_signal_and_scacq_screl(s, v); return;
        case 4: hsa_.hsa_signal_or_scacq_screl(s, v); return;
        case 5: hsa_.hsa_signal_xor_scacq_screl(s, v); return;
        case 6: hsa_.hsa_signal_exchange_scacq_screl(s, v); return;
        case 7: hsa_.hsa_signal_cas_scacq_screl(s, o.getExpected(), v); return;
        default:
          throw ReplayError(where(r) + ": unknown signal operation " + std::to_string(o.getOp()) +
                            " (0 store .. 7 compare-and-swap)");
      }
    }
    case O::HSA_SIGNAL_WAIT: {
      auto w = f.getHsaSignalWait();
      uint32_t i = w.getSatisfied();
      if (i >= w.getSignals().size() || i >= w.getConditions().size() || i >= w.getValues().size())
        throw ReplayError(where(r) + ": satisfied index " + std::to_string(i) + " but " +
                          std::to_string(w.getSignals().size()) + " signals, " +
                          std::to_string(w.getConditions().size()) + " conditions and " +
                          std::to_string(w.getValues().size()) + " values");
      uint64_t id = w.getSignals()[i];
      hsa_signal_t s = signal(r, id, "signal");
      uint32_t condition = w.getConditions()[i];
      if (condition > HSA_SIGNAL_CONDITION_GTE)
        throw ReplayError(where(r) + ": unknown signal condition " + std::to_string(condition));
      hsa_signal_value_t value = w.getValues()[i], last = 0;
      uint64_t timeout = setup_.options.waitTimeoutNs;
      if (!waitFor(s, static_cast<hsa_signal_condition_t>(condition), value, timeout, last)) {
        checkQueues(where(r));
        throw ReplayError(where(r) + ": signal " + std::to_string(id) + " still holds " + std::to_string(last) +
                          " after " + seconds(timeout) + " waiting for it to be " + conditionText(condition) + " " +
                          std::to_string(value) + " (the program saw " + std::to_string(w.getObserved()) +
                          "); the work that sets it did not finish, or depends on something the replay lacks");
      }
      std::erase_if(outstanding_, [&](const Outstanding& o) {
        return o.signalId == id && hsa_.hsa_signal_load_scacquire(o.signal) < o.below;
      });
      return;
    }
    default: return;
  }
}

bool HsaSession::waitFor(hsa_signal_t s, hsa_signal_condition_t condition, hsa_signal_value_t value,
                         uint64_t timeoutNs, hsa_signal_value_t& last) {
  uint64_t deadline = nowNs() + timeoutNs;
  for (;;) {
    uint64_t now = nowNs();
    uint64_t slice = now >= deadline ? 0 : std::min(kWaitSliceNs, deadline - now);
    last = hsa_.hsa_signal_wait_scacquire(s, condition, value, slice, HSA_WAIT_STATE_BLOCKED);
    if (holds(condition, last, value)) return true;
    if (nowNs() >= deadline) return false;
    for (const auto& [id, q] : queues_)
      if (q->error.load() != HSA_STATUS_SUCCESS) return false;
  }
}

void HsaSession::performObject(const ReplayRecord& r, size_t index) {
  const auto f = r.fields;
  switch (r.op) {
    case O::HSA_QUEUE_CREATE: {
      auto c = f.getHsaQueueCreate();
      uint64_t id = c.getQueue();
      if (id == 0 || queues_.count(id))
        throw ReplayError(where(r) + ": queue id " + std::to_string(id) + (id ? " is already live" : " is not valid"));
      auto q = std::make_unique<Queue>();
      q->captured = c.getAddress();
      q->id = id;
      check(r,
            hsa_.hsa_queue_create(agent(r, c.getAgent(), "agent"), c.getSize(),
                                  static_cast<hsa_queue_type32_t>(c.getType()), queueError, &q->error,
                                  c.getPrivateSegmentSize(), c.getGroupSegmentSize(), &q->queue),
            "hsa_queue_create");
      queues_[id] = std::move(q);
      return;
    }
    case O::HSA_QUEUE_DESTROY: {
      uint64_t id = f.getHsaQueueDestroy().getQueue();
      Queue& q = queue(r, id);
      check(r, hsa_.hsa_queue_destroy(q.queue), "hsa_queue_destroy");
      queues_.erase(id);
      return;
    }
    case O::HSA_CODE_OBJECT: {
      uint64_t id = f.getHsaCodeObject().getCodeObject();
      if (id == 0 || codeObjects_.count(id))
        throw ReplayError(where(r) + ": code object id " + std::to_string(id) +
                          (id ? " is already live" : " is not valid"));
      auto sub = setup_.codeObjectBinaries.find(id);
      CodeObject c;
      c.bytes = sub != setup_.codeObjectBinaries.end() ? sub->second : setup_.payloads.of(index);
      if (!c.bytes.data || c.bytes.size == 0) throw ReplayError(where(r) + ": the code object has no bytes");
      check(r, hsa_.hsa_code_object_reader_create_from_memory(c.bytes.data, c.bytes.size, &c.reader),
            "hsa_code_object_reader_create_from_memory");
      codeObjects_[id] = std::move(c);
      return;
    }
    case O::HSA_CODE_OBJECT_DESTROY: {
      uint64_t id = f.getHsaCodeObjectDestroy().getCodeObject();
      auto it = codeObjects_.find(id);
      if (it == codeObjects_.end())
        throw ReplayError(where(r) + ": code object id " + std::to_string(id) + " is not live");
      check(r, hsa_.hsa_code_object_reader_destroy(it->second.reader), "hsa_code_object_reader_destroy");
      codeObjects_.erase(it);
      return;
    }
    case O::HSA_EXECUTABLE_CREATE: {
      auto c = f.getHsaExecutableCreate();
      uint64_t id = c.getExecutable();
      if (id == 0 || executables_.count(id))
        throw ReplayError(where(r) + ": executable id " + std::to_string(id) +
                          (id ? " is already live" : " is not valid"));
      hsa_executable_t e{};
      std::string options = c.getOptions();
      check(r,
            hsa_.hsa_executable_create_alt(static_cast<hsa_profile_t>(c.getProfile()),
                                           static_cast<hsa_default_float_rounding_mode_t>(c.getRoundingMode()),
                                           options.empty() ? nullptr : options.c_str(), &e),
            "hsa_executable_create_alt");
      executables_[id] = e;
      return;
    }
    case O::HSA_EXECUTABLE_LOAD:
    case O::HSA_EXECUTABLE_FREEZE:
    case O::HSA_EXECUTABLE_DESTROY: {
      uint64_t id = r.op == O::HSA_EXECUTABLE_LOAD     ? f.getHsaExecutableLoad().getExecutable()
                    : r.op == O::HSA_EXECUTABLE_FREEZE ? f.getHsaExecutableFreeze().getExecutable()
                                                       : f.getHsaExecutableDestroy().getExecutable();
      auto e = executables_.find(id);
      if (e == executables_.end())
        throw ReplayError(where(r) + ": executable id " + std::to_string(id) + " is not live");
      if (r.op == O::HSA_EXECUTABLE_LOAD) {
        auto l = f.getHsaExecutableLoad();
        auto c = codeObjects_.find(l.getCodeObject());
        if (c == codeObjects_.end())
          throw ReplayError(where(r) + ": code object id " + std::to_string(l.getCodeObject()) + " is not live");
        std::string options = l.getOptions();
        check(r,
              hsa_.hsa_executable_load_agent_code_object(e->second, agent(r, l.getAgent(), "agent"), c->second.reader,
                                                         options.empty() ? nullptr : options.c_str(), nullptr),
              "hsa_executable_load_agent_code_object");
      } else if (r.op == O::HSA_EXECUTABLE_FREEZE) {
        check(r, hsa_.hsa_executable_freeze(e->second, ""), "hsa_executable_freeze");
      } else {
        check(r, hsa_.hsa_executable_destroy(e->second), "hsa_executable_destroy");
        executables_.erase(e);
        std::erase_if(kernels_, [&](const auto& k) { return k.second.executable == id; });
      }
      return;
    }
    case O::HSA_KERNEL: {
      auto k = f.getHsaKernel();
      uint64_t id = k.getKernel();
      if (id == 0 || kernels_.count(id))
        throw ReplayError(where(r) + ": kernel id " + std::to_string(id) + (id ? " is already live" : " is not valid"));
      auto e = executables_.find(k.getExecutable());
      if (e == executables_.end())
        throw ReplayError(where(r) + ": executable id " + std::to_string(k.getExecutable()) + " is not live");
      hsa_agent_t a = agent(r, k.getAgent(), "agent");
      std::string symbol = k.getSymbol();
      // Kernels of a substituted code object that the stream never
      // dispatches were not checked: the replacement need not have them.
      bool unchecked = setup_.uncheckedKernels.count(id) != 0;
      hsa_executable_symbol_t s{};
      hsa_status_t status = hsa_.hsa_executable_get_symbol_by_name(e->second, symbol.c_str(), &a, &s);
      if (status != HSA_STATUS_SUCCESS && unchecked) return;
      if (status != HSA_STATUS_SUCCESS)
        throw ReplayError(where(r) + ": the executable has no kernel symbol " + symbol + " for the agent (" +
                          "hsa_executable_get_symbol_by_name returned " + hsaStatusName(hsa_, status) + ")");
      Kernel kernel;
      kernel.executable = k.getExecutable();
      kernel.symbol = symbol;
      uint32_t kernargSize = 0;
      check(r, hsa_.hsa_executable_symbol_get_info(s, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, &kernel.object),
            "hsa_executable_symbol_get_info(KERNEL_OBJECT)");
      check(r,
            hsa_.hsa_executable_symbol_get_info(s, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE,
                                                &kernargSize),
            "hsa_executable_symbol_get_info(KERNEL_KERNARG_SEGMENT_SIZE)");
      if (!setup_.checkedKernels.count(id) && !unchecked && kernargSize != k.getKernargSize())
        throw ReplayError(where(r) + ": kernel " + symbol + " takes a " + std::to_string(kernargSize) +
                          "-byte kernarg segment here, " + std::to_string(k.getKernargSize()) +
                          " bytes when captured: not the code the program ran");
      kernel.kernargAlignment = k.getKernargAlignment();
      kernels_[id] = kernel;
      return;
    }
    default: return;
  }
}

// --- packets ----------------------------------------------------------------------------

void* HsaSession::reserve(const ReplayRecord& r, Queue& q, uint64_t& index) {
  // Only the next packet of a batch may follow a doorbell left for later.
  for (auto& [id, other] : queues_)
    if (other.get() != &q && other->doorbellDue) ringDoorbells();
  index = hsa_.hsa_queue_add_write_index_scacq_screl(q.queue, 1);
  uint64_t deadline = nowNs() + setup_.options.waitTimeoutNs;
  // A full ring: wait for the packet processor to free the slot (after
  // telling it about the packets of the batch so far).
  if (index - hsa_.hsa_queue_load_read_index_scacquire(q.queue) >= q.queue->size) ringDoorbells();
  while (index - hsa_.hsa_queue_load_read_index_scacquire(q.queue) >= q.queue->size) {
    checkQueues(where(r));
    if (nowNs() >= deadline)
      throw ReplayError(where(r) + ": queue " + std::to_string(q.id) + " stayed full for " +
                        seconds(setup_.options.waitTimeoutNs) + " (its packets do not complete)");
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  return static_cast<uint8_t*>(q.queue->base_address) + (index % q.queue->size) * kPacketBytes;
}

void HsaSession::publish(Queue& q, void* slot, uint64_t index, uint16_t header, uint16_t setup, bool more) {
  // The body is in place; the header makes the packet valid, released with
  // it, and the doorbell tells the packet processor.
  __atomic_store_n(static_cast<uint32_t*>(slot), static_cast<uint32_t>(header) | (static_cast<uint32_t>(setup) << 16),
                   __ATOMIC_RELEASE);
  q.doorbellDue = more;
  q.doorbellIndex = index;
  if (!more) hsa_.hsa_signal_store_screlease(q.queue->doorbell_signal, static_cast<hsa_signal_value_t>(index));
}

void HsaSession::ringDoorbells() {
  for (auto& [id, q] : queues_) {
    if (!q->doorbellDue) continue;
    q->doorbellDue = false;
    hsa_.hsa_signal_store_screlease(q->queue->doorbell_signal, static_cast<hsa_signal_value_t>(q->doorbellIndex));
  }
}

uint8_t* HsaSession::kernargSpace(const ReplayRecord& r, uint64_t size, uint64_t alignment) {
  if (!setup_.hsaAgents.kernargPool.handle)
    throw ReplayError(where(r) + ": the kernarg segment lies outside every captured allocation and this HSA runtime "
                                 "has no kernarg pool on a CPU agent to put it in");
  alignment = std::max<uint64_t>(alignment, 16);
  if (alignment & (alignment - 1) || alignment > 4096)
    throw ReplayError(where(r) + ": kernarg alignment " + std::to_string(alignment) + " is not a power of two up to 4096");
  uint64_t at = (kernargUsed_ + alignment - 1) & ~(alignment - 1);
  if (kernargChunks_.empty() || at + size > kernargChunkSize_) {
    uint64_t chunk = std::max<uint64_t>(kKernargChunk, pageRound(size));
    void* p = nullptr;
    check(r, hsa_.hsa_amd_memory_pool_allocate(setup_.hsaAgents.kernargPool, chunk, 0, &p),
          "hsa_amd_memory_pool_allocate (kernarg memory)");
    kernargChunks_.push_back(p);
    kernargChunkSize_ = chunk;
    at = 0;
  }
  kernargUsed_ = at + size;
  return static_cast<uint8_t*>(kernargChunks_.back()) + at;
}

void HsaSession::performDispatch(const ReplayRecord& r, size_t index) {
  auto d = r.fields.getHsaDispatch();
  Queue& q = queue(r, d.getQueue());
  auto k = kernels_.find(d.getKernel());
  if (k == kernels_.end())
    throw ReplayError(where(r) + ": kernel id " + std::to_string(d.getKernel()) + " is not a live kernel");
  if (packetType(d.getHeader()) != HSA_PACKET_TYPE_KERNEL_DISPATCH)
    throw ReplayError(where(r) + ": header " + hex(d.getHeader()) + " is not a kernel dispatch packet's");
  const Bytes& payload = setup_.payloads.of(index);
  std::vector<uint8_t> bytes(payload.data, payload.data + payload.size);
  for (auto p : d.getPointers()) {
    uint32_t offset = p.getOffset(), size = p.getSize();
    if ((size != 4 && size != 8) || offset > bytes.size() || size > bytes.size() - offset)
      throw ReplayError(where(r) + ": kernarg pointer at offset " + std::to_string(offset) + " (" +
                        std::to_string(size) + " bytes) does not fit the " + std::to_string(bytes.size()) +
                        "-byte kernarg segment");
    uint64_t value = 0, replayed = 0;
    std::memcpy(&value, bytes.data() + offset, size);
    switch (p.getKind()) {
      case 0: {
        auto hit = addresses_.find(value);
        if (!hit)
          throw ReplayError(where(r) + ": the kernarg segment holds " + hex(value) + " at offset " +
                            std::to_string(offset) + ", which lies in no live captured allocation or locked range");
        replayed = reinterpret_cast<uint64_t>(hit->replay());
        break;
      }
      case 1: {
        auto it = queues_.find(p.getQueue());
        if (it == queues_.end())
          throw ReplayError(where(r) + ": the kernarg segment points at queue " + std::to_string(p.getQueue()) +
                            " at offset " + std::to_string(offset) + ", which is not live");
        if (value < it->second->captured || value - it->second->captured >= 4096)
          throw ReplayError(where(r) + ": the kernarg segment holds " + hex(value) + " at offset " +
                            std::to_string(offset) + ", not inside queue " + std::to_string(p.getQueue()) +
                            " (captured at " + hex(it->second->captured) + ")");
        replayed = reinterpret_cast<uint64_t>(it->second->queue) + (value - it->second->captured);
        break;
      }
      case 2: continue;
      default:
        throw ReplayError(where(r) + ": kernarg pointer at offset " + std::to_string(offset) + " has unknown kind " +
                          std::to_string(p.getKind()));
    }
    if (size == 4 && replayed > UINT32_MAX)
      throw ReplayError(where(r) + ": the 4-byte kernarg pointer at offset " + std::to_string(offset) +
                        " translates to " + hex(replayed) + ", which does not fit");
    std::memcpy(bytes.data() + offset, &replayed, size);
  }
  // Where the segment goes: the captured memory the program put it in (the
  // host's view of it), else kernarg memory of the replay's own.
  uint8_t* kernarg = nullptr;
  if (!bytes.empty()) {
    auto hit = addresses_.find(d.getKernargAddress());
    if (hit && bytes.size() <= hit->range->size - hit->offset && memory_.at(hit->range->id).hostAccessible) {
      Memory& m = memory_.at(hit->range->id);
      std::memcpy(static_cast<uint8_t*>(m.replay) + hit->offset, bytes.data(), bytes.size());
      kernarg = hit->replay();
      KernargOverlay& o = overlays_[{hit->range->id, hit->offset}];
      o.captured.assign(payload.data, payload.data + payload.size);
      o.translated = bytes;
      longestOverlay_ = std::max<uint64_t>(longestOverlay_, bytes.size());
    } else {
      kernarg = kernargSpace(r, bytes.size(), k->second.kernargAlignment);
      std::memcpy(kernarg, bytes.data(), bytes.size());
    }
  } else if (d.getKernargAddress()) {
    kernarg = translate(r, d.getKernargAddress(), 0, "kernarg address");
  }
  auto wg = d.getWorkgroup();
  auto grid = d.getGrid();
  if (wg.getX() > UINT16_MAX || wg.getY() > UINT16_MAX || wg.getZ() > UINT16_MAX || grid.getX() > UINT32_MAX ||
      grid.getY() > UINT32_MAX || grid.getZ() > UINT32_MAX)
    throw ReplayError(where(r) + ": a work-group or grid size does not fit the packet's fields");
  hsa_kernel_dispatch_packet_t packet{};
  packet.workgroup_size_x = static_cast<uint16_t>(wg.getX());
  packet.workgroup_size_y = static_cast<uint16_t>(wg.getY());
  packet.workgroup_size_z = static_cast<uint16_t>(wg.getZ());
  packet.grid_size_x = static_cast<uint32_t>(grid.getX());
  packet.grid_size_y = static_cast<uint32_t>(grid.getY());
  packet.grid_size_z = static_cast<uint32_t>(grid.getZ());
  packet.private_segment_size = d.getPrivateSegmentSize();
  packet.group_segment_size = d.getGroupSegmentSize();
  packet.kernel_object = k->second.object;
  packet.kernarg_address = kernarg;
  packet.completion_signal = signal(r, d.getSignal(), "completion signal", true);
  uint64_t slotIndex = 0;
  void* slot = reserve(r, q, slotIndex);
  std::memcpy(static_cast<uint8_t*>(slot) + 4, reinterpret_cast<const uint8_t*>(&packet) + 4, kPacketBytes - 4);
  publish(q, slot, slotIndex, d.getHeader(), d.getSetup(), d.getMore());
  ++result_.kernels;
}

void HsaSession::performBarrier(const ReplayRecord& r) {
  auto b = r.fields.getHsaBarrier();
  Queue& q = queue(r, b.getQueue());
  uint16_t type = packetType(b.getHeader());
  uint16_t expected = b.getAny() ? HSA_PACKET_TYPE_BARRIER_OR : HSA_PACKET_TYPE_BARRIER_AND;
  if (type != expected)
    throw ReplayError(where(r) + ": header " + hex(b.getHeader()) + " is not a barrier-" +
                      (b.getAny() ? "OR" : "AND") + " packet's");
  auto deps = b.getDependencies();
  if (deps.size() > 5)
    throw ReplayError(where(r) + ": " + std::to_string(deps.size()) + " dependency signals, a packet holds 5");
  hsa_barrier_and_packet_t packet{};
  for (unsigned i = 0; i < deps.size(); ++i) packet.dep_signal[i] = signal(r, deps[i], "dependency signal", true);
  packet.completion_signal = signal(r, b.getSignal(), "completion signal", true);
  uint64_t slotIndex = 0;
  void* slot = reserve(r, q, slotIndex);
  std::memcpy(static_cast<uint8_t*>(slot) + 4, reinterpret_cast<const uint8_t*>(&packet) + 4, kPacketBytes - 4);
  publish(q, slot, slotIndex, b.getHeader(), 0, b.getMore());
}

// --- copies, host data, read-backs --------------------------------------------------------

HsaSession::Staging HsaSession::stage(const ReplayRecord& r, uint64_t size, const char* role) {
  Staging s;
  s.size = size;
  s.mappedBytes = pageRound(size);
  s.host = mapHost(s.mappedBytes);
  if (!s.host)
    throw ReplayError(where(r) + ": cannot map " + std::to_string(size) + " bytes for the copy's " + role + ": " +
                      std::strerror(errno));
  hsa_status_t status = hsa_.hsa_amd_memory_lock(s.host, s.mappedBytes, nullptr, 0, &s.agent);
  if (status != HSA_STATUS_SUCCESS) {
    munmap(s.host, s.mappedBytes);
    throw ReplayError(where(r) + ": hsa_amd_memory_lock (the copy's " + role + ") returned " +
                      hsaStatusName(hsa_, status));
  }
  if (!s.agent) s.agent = s.host;
  return s;
}

void HsaSession::release(Staging& s) noexcept {
  if (!s.host) return;
  hsa_.hsa_amd_memory_unlock(s.host);
  munmap(s.host, s.mappedBytes);
  s = {};
}

void HsaSession::performCopy(const ReplayRecord& r, size_t index) {
  auto c = r.fields.getHsaCopy();
  uint64_t size = c.getSize();
  uint8_t* dst = translate(r, c.getDst(), size, "destination");
  uint8_t* src = translate(r, c.getSrc(), size, "source");
  const Bytes& payload = setup_.payloads.of(index);
  // The replay's own buffers for ends outside every captured range are
  // bounded by what the file holds or what the replay already allocated for
  // the program, never by a size field alone.
  uint64_t limit = std::max<uint64_t>(payload.size, liveBytes_);
  if ((!dst || !src) && size > limit)
    throw ReplayError(where(r) + ": the copy's " + (!dst ? "destination" : "source") + " of " + std::to_string(size) +
                      " bytes lies outside every live captured allocation and locked range and exceeds both its "
                      "payload (" + std::to_string(payload.size) + " bytes) and all live memory together (" +
                      std::to_string(liveBytes_) + " bytes)");
  if (copies_.count(r.seq)) throw ReplayError(where(r) + ": a copy with this seq was already performed");
  CopyBuffers& buffers = copies_[r.seq];
  if (!dst) {
    buffers.destination = stage(r, size, "destination");
    dst = static_cast<uint8_t*>(buffers.destination.agent);
    buffers.readBackBase = static_cast<uint8_t*>(buffers.destination.host);
    buffers.readBackSize = size;
  }
  if (!src) {
    buffers.source = stage(r, size, "source");
    if (payload.data) std::memcpy(buffers.source.host, payload.data, std::min<uint64_t>(payload.size, size));
    src = static_cast<uint8_t*>(buffers.source.agent);
  }
  if (c.getSynchronous()) {
    check(r, hsa_.hsa_memory_copy(dst, src, size), "hsa_memory_copy");
    return;
  }
  hsa_agent_t dstAgent = agent(r, c.getDstAgent(), "destination agent");
  hsa_agent_t srcAgent = agent(r, c.getSrcAgent(), "source agent");
  std::vector<hsa_signal_t> deps;
  for (uint64_t id : c.getDependencies()) deps.push_back(signal(r, id, "dependency signal"));
  Outstanding done;
  done.signalId = c.getSignal();
  if (done.signalId) {
    done.signal = signal(r, done.signalId, "completion signal");
  } else {
    // The runtime needs a completion signal; the replay waits for this one.
    check(r, hsa_.hsa_signal_create(1, 0, nullptr, &done.signal), "hsa_signal_create (a copy's completion)");
    ownSignals_.push_back(done.signal);
  }
  done.below = hsa_.hsa_signal_load_scacquire(done.signal);
  check(r,
        hsa_.hsa_amd_memory_async_copy(dst, dstAgent, src, srcAgent, size, static_cast<uint32_t>(deps.size()),
                                       deps.empty() ? nullptr : deps.data(), done.signal),
        "hsa_amd_memory_async_copy");
  outstanding_.push_back(done);
}

void HsaSession::performHostData(const ReplayRecord& r, size_t index) {
  const Bytes& payload = setup_.payloads.of(index);
  auto h = r.fields.getHostData();
  uint64_t offset = h.getOffset();
  uint8_t* base = nullptr;
  uint64_t size = 0, id = 0;
  if (h.isAllocation()) {
    id = h.getAllocation();
    Memory& m = memory(r, id, "allocation");
    if (!m.hostAccessible)
      throw ReplayError(where(r) + ": host data for allocation " + std::to_string(id) +
                        ", which the host cannot reach (its pool is not a CPU agent's)");
    base = static_cast<uint8_t*>(m.replay);
    size = m.size;
  } else {
    auto it = copies_.find(h.getCopy());
    if (it == copies_.end() || !it->second.source.host)
      throw ReplayError(where(r) + ": copy seq " + std::to_string(h.getCopy()) +
                        " has no source buffer of the replay's own (no such copy, or its source is captured memory)");
    base = static_cast<uint8_t*>(it->second.source.host);
    size = it->second.source.size;
  }
  if (offset > size || payload.size > size - offset)
    throw ReplayError(where(r) + ": bytes " + std::to_string(offset) + "+" + std::to_string(payload.size) +
                      " lie outside the " + std::to_string(size) + "-byte target");
  if (payload.size == 0) return;
  // Kernarg segments the bytes cover: where they hold the program's segment
  // (its untranslated addresses), the translated one the device may be
  // reading right now stays; other bytes mean the program wrote a new
  // segment, which its own dispatch will translate. Merged before anything
  // is written, so a running dispatch never sees the untranslated bytes.
  std::vector<uint8_t> merged;
  uint64_t end = offset + payload.size;
  auto it = id ? overlays_.lower_bound({id, offset > longestOverlay_ ? offset - longestOverlay_ : 0}) : overlays_.end();
  while (it != overlays_.end() && it->first.first == id && it->first.second < end) {
    uint64_t at = it->first.second, len = it->second.captured.size();
    uint64_t from = std::max(at, offset), to = std::min(at + len, end);
    if (from >= to) {
      ++it;
      continue;
    }
    if (std::memcmp(payload.data + (from - offset), it->second.captured.data() + (from - at), to - from) == 0) {
      if (merged.empty()) merged.assign(payload.data, payload.data + payload.size);
      std::memcpy(merged.data() + (from - offset), it->second.translated.data() + (from - at), to - from);
      ++it;
    } else {
      it = overlays_.erase(it);
    }
  }
  std::memcpy(base + offset, merged.empty() ? payload.data : merged.data(), payload.size);
}

void HsaSession::performReadBack(const ReplayRecord& r, size_t index) {
  if (!setup_.options.verify) return;
  auto b = r.fields.getReadBack();
  const uint8_t* base = nullptr;
  uint64_t size = 0;
  std::string target;
  if (b.getAllocation()) {
    Memory& m = memory(r, b.getAllocation(), "allocation");
    if (!m.hostAccessible)
      throw ReplayError(where(r) + ": read-back of allocation " + std::to_string(b.getAllocation()) +
                        ", which the host cannot reach");
    base = static_cast<const uint8_t*>(m.replay);
    size = m.size;
    target = "allocation " + std::to_string(b.getAllocation());
  } else {
    auto it = copies_.find(b.getCopy());
    if (it == copies_.end() || !it->second.readBackBase)
      throw ReplayError(where(r) + ": read-back of copy seq " + std::to_string(b.getCopy()) +
                        ", which this replay has not performed into a buffer of its own");
    base = it->second.readBackBase;
    size = it->second.readBackSize;
    target = "copy seq " + std::to_string(b.getCopy()) + "'s destination";
  }
  const Bytes& expected = setup_.payloads.of(index);
  uint64_t offset = b.getOffset();
  if (offset > size || expected.size > size - offset)
    throw ReplayError(where(r) + ": read-back bytes " + std::to_string(offset) + "+" + std::to_string(expected.size) +
                      " lie outside " + target + " (" + std::to_string(size) + " bytes)");
  const uint8_t* actual = base + offset;
  ++result_.readBacks;
  readers::ReadBackMismatch m{r.seq, b.getCopy(), 0, 0, expected.size};
  m.allocation = b.getAllocation();
  m.offset = offset;
  for (uint64_t i = 0; i < expected.size; ++i) {
    if (actual[i] != expected.data[i]) {
      if (!m.differing) m.firstOffset = i;
      ++m.differing;
    }
  }
  if (m.differing) result_.mismatches.push_back(m);
}

// --- waiting and cleaning up ------------------------------------------------------------

bool HsaSession::drain(Queue& q, uint64_t timeoutNs) {
  if (!syncSignal_.handle && hsa_.hsa_signal_create(1, 0, nullptr, &syncSignal_) != HSA_STATUS_SUCCESS) return false;
  hsa_.hsa_signal_store_screlease(syncSignal_, 1);
  uint64_t deadline = nowNs() + timeoutNs;
  uint64_t index = hsa_.hsa_queue_add_write_index_scacq_screl(q.queue, 1);
  while (index - hsa_.hsa_queue_load_read_index_scacquire(q.queue) >= q.queue->size) {
    if (nowNs() >= deadline || q.error.load() != HSA_STATUS_SUCCESS) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  void* slot = static_cast<uint8_t*>(q.queue->base_address) + (index % q.queue->size) * kPacketBytes;
  hsa_barrier_and_packet_t packet{};
  packet.completion_signal = syncSignal_;
  std::memcpy(static_cast<uint8_t*>(slot) + 4, reinterpret_cast<const uint8_t*>(&packet) + 4, kPacketBytes - 4);
  publish(q, slot, index, kSyncBarrierHeader, 0);
  uint64_t now = nowNs();
  hsa_signal_value_t last = 0;
  return waitFor(syncSignal_, HSA_SIGNAL_CONDITION_EQ, 0, deadline > now ? deadline - now : 0, last);
}

void HsaSession::synchronizeAll() {
  ringDoorbells();
  uint64_t timeout = setup_.options.waitTimeoutNs;
  std::string at = setup_.capture->path() + ": waiting for all HSA work";
  for (auto& [id, q] : queues_) {
    if (drain(*q, timeout)) continue;
    checkQueues(at);
    throw ReplayError(at + ": queue " + std::to_string(id) + "'s work did not finish within " + seconds(timeout) +
                      " (a packet waits for a signal nothing sets, or runs that long)");
  }
  for (const Outstanding& o : outstanding_) {
    hsa_signal_value_t last = 0;
    if (!waitFor(o.signal, HSA_SIGNAL_CONDITION_LT, o.below, timeout, last))
      throw ReplayError(at + ": a copy completing " +
                        (o.signalId ? "signal " + std::to_string(o.signalId) : std::string("a signal of the replay's own")) +
                        " did not finish within " + seconds(timeout) + " (the signal holds " + std::to_string(last) +
                        ")");
  }
  outstanding_.clear();
}

void HsaSession::cleanup() noexcept {
  ringDoorbells();
  // Let queued work finish (bounded: after a failure some may never run).
  for (auto& [id, q] : queues_)
    if (q->error.load() == HSA_STATUS_SUCCESS) drain(*q, kCleanupTimeoutNs);
  for (const Outstanding& o : outstanding_) {
    hsa_signal_value_t last = 0;
    waitFor(o.signal, HSA_SIGNAL_CONDITION_LT, o.below, kCleanupTimeoutNs, last);
  }
  outstanding_.clear();
  // Users before what they use.
  for (auto& [id, q] : queues_) hsa_.hsa_queue_destroy(q->queue);
  queues_.clear();
  kernels_.clear();
  for (auto& [id, e] : executables_) hsa_.hsa_executable_destroy(e);
  executables_.clear();
  for (auto& [id, c] : codeObjects_) hsa_.hsa_code_object_reader_destroy(c.reader);
  codeObjects_.clear();
  for (auto& [id, s] : signals_) hsa_.hsa_signal_destroy(s);
  signals_.clear();
  for (hsa_signal_t s : ownSignals_) hsa_.hsa_signal_destroy(s);
  ownSignals_.clear();
  if (syncSignal_.handle) hsa_.hsa_signal_destroy(syncSignal_);
  syncSignal_ = {};
  for (auto& [seq, c] : copies_) {
    release(c.source);
    release(c.destination);
  }
  copies_.clear();
  for (auto& [id, m] : memory_) {
    if (m.kind == Memory::Kind::allocation) {
      hsa_.hsa_amd_memory_pool_free(m.replay);
    } else {
      hsa_.hsa_amd_memory_unlock(m.replay);
      munmap(m.replay, m.mappedBytes);
    }
  }
  memory_.clear();
  for (void* chunk : kernargChunks_) hsa_.hsa_amd_memory_pool_free(chunk);
  kernargChunks_.clear();
  kernargUsed_ = kernargChunkSize_ = 0;
  overlays_.clear();
  addresses_.clear();
  liveBytes_ = 0;
}

}  // namespace gtap::replay
