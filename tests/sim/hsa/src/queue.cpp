// Queues: creation, destruction, indices, and the packet processor.
#include "queue.h"

#include "aqlprofile.h"
#include "agent.h"
#include "api.h"
#include "clock.h"
#include "runtime.h"
#include "signal.h"

#include <sys/mman.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <new>

namespace sim_hsa {

namespace {

constexpr uint16_t kInvalidHeader = HSA_PACKET_TYPE_INVALID << HSA_PACKET_HEADER_TYPE;

std::atomic_ref<uint64_t> writeIndex(amd_queue_t* q) {
  return std::atomic_ref<uint64_t>(*const_cast<uint64_t*>(&q->write_dispatch_id));
}
std::atomic_ref<uint64_t> readIndex(amd_queue_t* q) {
  return std::atomic_ref<uint64_t>(*const_cast<uint64_t*>(&q->read_dispatch_id));
}
std::atomic_ref<uint16_t> headerOf(AqlPacket& p) { return std::atomic_ref<uint16_t>(*reinterpret_cast<uint16_t*>(p.bytes)); }

// The program-visible hsa_queue_t is the first member of the amd_queue_t.
amd_queue_t* abiOf(const hsa_queue_t* queue) { return reinterpret_cast<amd_queue_t*>(const_cast<hsa_queue_t*>(queue)); }

uint16_t headerField(uint16_t header, int offset, int width) { return uint16_t((header >> offset) & ((1u << width) - 1)); }

hsa_signal_t completionOf(const AqlPacket& p) {
  hsa_signal_t s;
  std::memcpy(&s, p.bytes + 56, sizeof s);
  return s;
}

struct Registry {
  std::mutex lock;
  std::map<const hsa_queue_t*, std::shared_ptr<Queue>> queues;
};

Registry& registry() {
  static auto* r = new Registry;  // never destroyed: queues may outlive exit
  return *r;
}

bool isPowerOfTwo(uint32_t v) { return v != 0 && (v & (v - 1)) == 0; }

}  // namespace

// --- Queue memory -----------------------------------------------------------

Queue::Queue(uint32_t size, hsa_queue_type32_t type, uint32_t features, uint64_t id) {
  abi_ = new amd_queue_t{};
  size_t bytes = size_t(size) * sizeof(AqlPacket);
  void* ring = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (ring == MAP_FAILED) {
    delete abi_;
    throw std::bad_alloc();
  }
  // The runtime hands out rings whose packets are all INVALID.
  auto* packets = static_cast<AqlPacket*>(ring);
  for (uint32_t i = 0; i < size; ++i) headerOf(packets[i]).store(kInvalidHeader, std::memory_order_relaxed);
  hsa_queue_t& q = abi_->hsa_queue;
  q.type = type;
  q.features = features;
  q.base_address = ring;
  q.size = size;
  q.id = id;
  abi_->queue_properties = AMD_QUEUE_PROPERTIES_IS_PTR64;
}

Queue::~Queue() {
  munmap(abi_->hsa_queue.base_address, size_t(size()) * sizeof(AqlPacket));
  delete abi_;
}

void Queue::setProfiling(bool enable) {
  auto props = std::atomic_ref<uint32_t>(abi_->queue_properties);
  if (enable) {
    props.fetch_or(AMD_QUEUE_PROPERTIES_ENABLE_PROFILING);
  } else {
    props.fetch_and(~uint32_t(AMD_QUEUE_PROPERTIES_ENABLE_PROFILING));
  }
}

uint64_t nextQueueId() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1);
}

SoftQueue::SoftQueue(uint32_t size, hsa_queue_type32_t type, uint32_t features, hsa_signal_t doorbell)
    : Queue(size, type, features, nextQueueId()) {
  handle()->doorbell_signal = doorbell;
}

// --- The packet processor ---------------------------------------------------

AqlQueue::AqlQueue(Agent* agent, uint32_t size, hsa_queue_type32_t type, QueueErrorCallback callback, void* data)
    : Queue(size, type, HSA_QUEUE_FEATURE_KERNEL_DISPATCH, nextQueueId()),
      agent_(agent),
      doorbell_(newSignal(0, /*runtime_owned=*/true)),
      callback_(callback),
      callback_data_(data),
      report_as_(handle()) {
  if (doorbell_ == nullptr) throw std::bad_alloc();
  handle()->doorbell_signal = toHandle(doorbell_);
}

AqlQueue::~AqlQueue() {
  shutdown();
  deleteSignal(doorbell_);
}

bool inlineProcessing() {
  static const bool on = [] {
    const char* v = std::getenv("GTAP_SIM_INLINE");
    return v && std::strcmp(v, "1") == 0;
  }();
  return on;
}

void AqlQueue::start() {
  inline_ = inlineProcessing();
  if (inline_) {
    doorbell_->listener.store(this, std::memory_order_release);
    return;
  }
  startProcessor();
}

void AqlQueue::startProcessor() {
  processor_ = std::thread([self = shared_from_this()] { self->run(); });
}

void AqlQueue::doorbellRung() {
  if (handed_off_.load(std::memory_order_acquire)) return;
  // One thread runs packets at a time; a ring while it does is its to pick up.
  rescan_.store(true);
  while (!busy_.exchange(true)) {
    rescan_.store(false, std::memory_order_relaxed);
    AqlPacket* packets = ring();
    const uint64_t mask = size() - 1;
    for (;;) {
      if (stop_.load(std::memory_order_acquire) || inactive_.load(std::memory_order_acquire)) break;
      AqlPacket& slot = packets[next_ & mask];
      uint16_t header = headerOf(slot).load(std::memory_order_acquire);
      if (headerField(header, HSA_PACKET_HEADER_TYPE, HSA_PACKET_HEADER_WIDTH_TYPE) == HSA_PACKET_TYPE_INVALID) break;
      if (!readyToRun(slot)) {
        // It would wait: a thread of its own waits, and runs the queue from here on.
        handed_off_.store(true, std::memory_order_release);
        doorbell_->listener.store(nullptr, std::memory_order_release);
        startProcessor();
        busy_.store(false, std::memory_order_release);
        return;
      }
      bool stop = false;
      step(stop);
      if (stop) break;
    }
    busy_.store(false);
    if (!rescan_.load()) return;
  }
}

bool AqlQueue::readyToRun(const AqlPacket& packet) {
  uint16_t header;
  std::memcpy(&header, packet.bytes, sizeof header);
  const auto type = headerField(header, HSA_PACKET_HEADER_TYPE, HSA_PACKET_HEADER_WIDTH_TYPE);
  if (type == HSA_PACKET_TYPE_BARRIER_AND || type == HSA_PACKET_TYPE_BARRIER_OR) {
    hsa_barrier_and_packet_t barrier;
    std::memcpy(&barrier, &packet, sizeof barrier);
    int used = 0, done = 0;
    for (const hsa_signal_t& d : barrier.dep_signal) {
      if (d.handle == 0) continue;
      Signal* s = toSignal(d);
      if (s == nullptr) return true;  // an error the packet reports
      ++used;
      done += loadValue(s, std::memory_order_acquire) == 0 ? 1 : 0;
    }
    return used == 0 || (type == HSA_PACKET_TYPE_BARRIER_AND ? done == used : done > 0);
  }
  if (type == HSA_PACKET_TYPE_VENDOR_SPECIFIC) {
    hsa_amd_barrier_value_packet_t p;
    std::memcpy(&p, &packet, sizeof p);
    if (p.header.AmdFormat != HSA_AMD_PACKET_TYPE_BARRIER_VALUE || p.signal.handle == 0) return true;
    Signal* s = toSignal(p.signal);
    if (s == nullptr || p.cond > HSA_SIGNAL_CONDITION_GTE) return true;
    return conditionHolds(hsa_signal_condition_t(p.cond), loadValue(s, std::memory_order_acquire) & p.mask, p.value);
  }
  return true;
}

hsa_status_t AqlQueue::step(bool& stop) {
  AqlPacket* packets = ring();
  const uint64_t mask = size() - 1;
  AqlPacket packet;
  std::memcpy(&packet, &packets[next_ & mask], sizeof packet);
  // The slot is free again once the packet is taken, as on hardware: back
  // to INVALID, then the read index moves past it.
  headerOf(packets[next_ & mask]).store(kInvalidHeader, std::memory_order_release);
  readIndex(abi()).store(next_ + 1, std::memory_order_release);
  hsa_status_t status = execute(packet, next_);
  if (status == HSA_STATUS_INFO_BREAK) {  // destroyed mid-packet
    stop = true;
    return status;
  }
  if (status != HSA_STATUS_SUCCESS) raiseError(status);
  ++next_;
  // The error callback may have destroyed the queue (and its owner).
  if (stop_.load(std::memory_order_acquire)) {
    stop = true;
    return status;
  }
  if (on_progress_) on_progress_();
  return status;
}

void AqlQueue::setProfiling(bool enable) {
  Queue::setProfiling(enable);
  profiling_.store(enable, std::memory_order_release);
}

void AqlQueue::inactivate() {
  inactive_.store(true, std::memory_order_release);
  doorbell_->epoch.bump();
}

void AqlQueue::shutdown() {
  doorbell_->listener.store(nullptr, std::memory_order_release);
  stop_.store(true, std::memory_order_release);
  doorbell_->epoch.bump();
  anySignalChanged().bump();  // a barrier packet waiting on signals gives up
  if (!processor_.joinable()) return;
  // Destroyed from its own error callback: it cannot wait for itself.
  if (processor_.get_id() == std::this_thread::get_id()) {
    processor_.detach();
  } else {
    processor_.join();
  }
}

void AqlQueue::raiseError(hsa_status_t status) {
  inactive_.store(true, std::memory_order_release);
  if (callback_ != nullptr) {
    callback_(status, report_as_, callback_data_);
    return;
  }
  const char* text = "unknown error";
  sim_hsa::hsa_status_string(status, &text);
  warn("queue %llu stopped: %s", static_cast<unsigned long long>(handle()->id), text);
}

void AqlQueue::run() {
  AqlPacket* packets = ring();
  const uint64_t mask = size() - 1;
  for (;;) {
    // The producer writes the packet, then its header with a release store,
    // then rings the doorbell; the processor waits for a valid header.
    auto ready = [&] {
      if (stop_.load(std::memory_order_acquire)) return true;
      if (inactive_.load(std::memory_order_acquire)) return false;
      uint16_t header = headerOf(packets[next_ & mask]).load(std::memory_order_acquire);
      return headerField(header, HSA_PACKET_HEADER_TYPE, HSA_PACKET_HEADER_WIDTH_TYPE) != HSA_PACKET_TYPE_INVALID;
    };
    futex::waitUntil(doorbell_->epoch, UINT64_MAX, ready);
    if (stop_.load(std::memory_order_acquire)) return;
    bool stop = false;
    step(stop);
    if (stop) return;
  }
}

hsa_status_t AqlQueue::waitBarrier(const hsa_signal_t* dependencies, int count, bool all) {
  Signal* deps[5] = {};
  int used = 0;
  for (int i = 0; i < count; ++i) {
    if (dependencies[i].handle == 0) continue;  // a null handle is a satisfied dependency
    deps[used] = toSignal(dependencies[i]);
    SIM_CHECK(deps[used] != nullptr, HSA_STATUS_ERROR_INVALID_SIGNAL);
    ++used;
  }
  if (used == 0) return HSA_STATUS_SUCCESS;
  auto satisfied = [&] {
    if (stop_.load(std::memory_order_acquire)) return true;
    int done = 0;
    for (int i = 0; i < used; ++i) done += loadValue(deps[i], std::memory_order_acquire) == 0 ? 1 : 0;
    return all ? done == used : done > 0;
  };
  futex::waitUntil(anySignalChanged(), UINT64_MAX, satisfied);
  return stop_.load(std::memory_order_acquire) ? HSA_STATUS_INFO_BREAK : HSA_STATUS_SUCCESS;
}

hsa_status_t AqlQueue::waitBarrierValue(const AqlPacket& packet) {
  hsa_amd_barrier_value_packet_t p;
  std::memcpy(&p, &packet, sizeof p);
  if (p.signal.handle == 0) return HSA_STATUS_SUCCESS;
  Signal* s = toSignal(p.signal);
  SIM_CHECK(s != nullptr, HSA_STATUS_ERROR_INVALID_SIGNAL);
  SIM_CHECK(p.cond <= HSA_SIGNAL_CONDITION_GTE, HSA_STATUS_ERROR_INVALID_PACKET_FORMAT);
  auto satisfied = [&] {
    if (stop_.load(std::memory_order_acquire)) return true;
    int64_t v = loadValue(s, std::memory_order_acquire) & p.mask;
    return conditionHolds(hsa_signal_condition_t(p.cond), v, p.value);
  };
  futex::waitUntil(anySignalChanged(), UINT64_MAX, satisfied);
  return stop_.load(std::memory_order_acquire) ? HSA_STATUS_INFO_BREAK : HSA_STATUS_SUCCESS;
}

hsa_status_t AqlQueue::execute(const AqlPacket& packet, uint64_t index) {
  uint16_t header;
  std::memcpy(&header, packet.bytes, sizeof header);
  const auto type = headerField(header, HSA_PACKET_HEADER_TYPE, HSA_PACKET_HEADER_WIDTH_TYPE);
  const auto acquire = headerField(header, HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE,
                                   HSA_PACKET_HEADER_WIDTH_SCACQUIRE_FENCE_SCOPE);
  const auto release = headerField(header, HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE,
                                   HSA_PACKET_HEADER_WIDTH_SCRELEASE_FENCE_SCOPE);
  // Packets run one at a time, in order, so every packet behaves as if its
  // barrier bit were set. Fences: the CPU's own ordering is all there is;
  // agent and system scope are the same here.
  if (acquire != HSA_FENCE_SCOPE_NONE) std::atomic_thread_fence(std::memory_order_seq_cst);

  const uint64_t start = clock::deviceTicks();
  hsa_status_t status = HSA_STATUS_SUCCESS;
  switch (type) {
    case HSA_PACKET_TYPE_KERNEL_DISPATCH: {
      hsa_kernel_dispatch_packet_t dispatch;
      std::memcpy(&dispatch, &packet, sizeof dispatch);
      status = runKernelDispatch(dispatch, index);
      if (status == HSA_STATUS_SUCCESS) {
        busy_ticks_ += clock::deviceTicks() - start;
        waves_ += dispatchWaves(dispatch);
      }
      break;
    }
    case HSA_PACKET_TYPE_BARRIER_AND:
    case HSA_PACKET_TYPE_BARRIER_OR: {
      hsa_barrier_and_packet_t barrier;  // same layout as the OR packet
      std::memcpy(&barrier, &packet, sizeof barrier);
      status = waitBarrier(barrier.dep_signal, 5, type == HSA_PACKET_TYPE_BARRIER_AND);
      break;
    }
    case HSA_PACKET_TYPE_VENDOR_SPECIFIC: {
      hsa_amd_vendor_packet_header_t vendor;
      std::memcpy(&vendor, &packet, sizeof vendor);
      if (vendor.AmdFormat == HSA_AMD_PACKET_TYPE_BARRIER_VALUE) {
        status = waitBarrierValue(packet);
      } else if (isProfilePacket(packet)) {
        // The packets before this one: a start or stop does not count itself.
        status = runProfilePacket(packet, QueueCounters{busy_ticks_, cp_busy_ticks_, waves_});
      } else {
        status = HSA_STATUS_ERROR_INVALID_PACKET_FORMAT;
      }
      break;
    }
    default:  // agent dispatch packets are for agents that are not kernel agents
      status = HSA_STATUS_ERROR_INVALID_PACKET_FORMAT;
      break;
  }
  if (status != HSA_STATUS_SUCCESS) return status;
  const uint64_t end = clock::deviceTicks();
  cp_busy_ticks_ += end - start;

  if (release != HSA_FENCE_SCOPE_NONE) std::atomic_thread_fence(std::memory_order_seq_cst);
  hsa_signal_t completion = completionOf(packet);
  if (completion.handle == 0) return HSA_STATUS_SUCCESS;
  Signal* s = toSignal(completion);
  SIM_CHECK(s != nullptr, HSA_STATUS_ERROR_INVALID_SIGNAL);
  if (profiling_.load(std::memory_order_acquire)) {
    // Raw device ticks, as the command processor writes them;
    // hsa_amd_profiling_get_dispatch_time converts them.
    s->abi.start_ts = start;
    s->abi.end_ts = end;
  }
  subtractValue(s, 1, std::memory_order_release);
  return HSA_STATUS_SUCCESS;
}

// --- Registry ---------------------------------------------------------------

bool registerQueue(const std::shared_ptr<Queue>& queue) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.lock);
  if (r.queues.size() >= gpu::kQueuesMax) return false;
  r.queues.emplace(queue->handle(), queue);
  return true;
}

std::shared_ptr<Queue> findQueue(const hsa_queue_t* handle) {
  if (handle == nullptr) return nullptr;
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.lock);
  auto it = r.queues.find(handle);
  return it == r.queues.end() ? nullptr : it->second;
}

void destroyAllQueues() {
  std::map<const hsa_queue_t*, std::shared_ptr<Queue>> queues;
  {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.lock);
    queues.swap(r.queues);
  }
  for (auto& [handle, queue] : queues) queue->shutdown();
}

// --- The API ----------------------------------------------------------------

hsa_status_t hsa_queue_create(hsa_agent_t agent, uint32_t size, hsa_queue_type32_t type,
                              void (*callback)(hsa_status_t status, hsa_queue_t* source, void* data), void* data,
                              uint32_t private_segment_size, uint32_t group_segment_size, hsa_queue_t** queue) {
  SIM_OPEN();
  SIM_NOT_NULL(queue);
  Agent* a = toAgent(agent);
  SIM_CHECK(a != nullptr, HSA_STATUS_ERROR_INVALID_AGENT);
  SIM_CHECK(isPowerOfTwo(size), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  SIM_CHECK(type == HSA_QUEUE_TYPE_MULTI || type == HSA_QUEUE_TYPE_SINGLE || type == HSA_QUEUE_TYPE_COOPERATIVE,
            HSA_STATUS_ERROR_INVALID_ARGUMENT);
  // The CPU agent has no AQL queues; the GPU has no cooperative ones.
  SIM_CHECK(isGpu(a), HSA_STATUS_ERROR_INVALID_AGENT);
  SIM_CHECK(type != HSA_QUEUE_TYPE_COOPERATIVE, HSA_STATUS_ERROR_INVALID_QUEUE_CREATION);
  SIM_CHECK(size <= gpu::kQueueMaxSize, HSA_STATUS_ERROR_INVALID_QUEUE_CREATION);
  SIM_TRY
  auto q = std::make_shared<AqlQueue>(a, std::max(size, gpu::kQueueMinSize), type, callback, data);
  SIM_CHECK(registerQueue(q), HSA_STATUS_ERROR_OUT_OF_RESOURCES);
  q->start();
  *queue = q->handle();
  return HSA_STATUS_SUCCESS;
  SIM_CATCH
}

hsa_status_t hsa_soft_queue_create(hsa_region_t region, uint32_t size, hsa_queue_type32_t type, uint32_t features,
                                   hsa_signal_t doorbell_signal, hsa_queue_t** queue) {
  SIM_OPEN();
  SIM_NOT_NULL(queue);
  SIM_CHECK(isPowerOfTwo(size), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  SIM_CHECK(type == HSA_QUEUE_TYPE_MULTI || type == HSA_QUEUE_TYPE_SINGLE, HSA_STATUS_ERROR_INVALID_ARGUMENT);
  SIM_CHECK(features != 0 && (features & ~uint32_t(HSA_QUEUE_FEATURE_KERNEL_DISPATCH | HSA_QUEUE_FEATURE_AGENT_DISPATCH)) == 0,
            HSA_STATUS_ERROR_INVALID_ARGUMENT);
  SIM_CHECK(toSignal(doorbell_signal) != nullptr, HSA_STATUS_ERROR_INVALID_SIGNAL);
  SIM_TRY
  auto q = std::make_shared<SoftQueue>(size, type, features, doorbell_signal);
  SIM_CHECK(registerQueue(q), HSA_STATUS_ERROR_OUT_OF_RESOURCES);
  *queue = q->handle();
  return HSA_STATUS_SUCCESS;
  SIM_CATCH
}

hsa_status_t hsa_queue_destroy(hsa_queue_t* queue) {
  SIM_OPEN();
  SIM_NOT_NULL(queue);
  std::shared_ptr<Queue> q;
  {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.lock);
    auto it = r.queues.find(queue);
    SIM_CHECK(it != r.queues.end(), HSA_STATUS_ERROR_INVALID_QUEUE);
    q = std::move(it->second);
    r.queues.erase(it);
  }
  q->shutdown();
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_queue_inactivate(hsa_queue_t* queue) {
  SIM_OPEN();
  SIM_NOT_NULL(queue);
  auto q = findQueue(queue);
  SIM_CHECK(q != nullptr, HSA_STATUS_ERROR_INVALID_QUEUE);
  q->inactivate();
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_amd_profiling_set_profiler_enabled(hsa_queue_t* queue, int enable) {
  SIM_OPEN();
  SIM_NOT_NULL(queue);
  auto q = findQueue(queue);
  SIM_CHECK(q != nullptr, HSA_STATUS_ERROR_INVALID_QUEUE);
  q->setProfiling(enable != 0);
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_amd_queue_set_priority(hsa_queue_t* queue, hsa_amd_queue_priority_t priority) {
  SIM_OPEN();
  SIM_NOT_NULL(queue);
  SIM_CHECK(findQueue(queue) != nullptr, HSA_STATUS_ERROR_INVALID_QUEUE);
  SIM_CHECK(priority >= HSA_AMD_QUEUE_PRIORITY_LOW && priority <= HSA_AMD_QUEUE_PRIORITY_HIGH,
            HSA_STATUS_ERROR_INVALID_ARGUMENT);
  return HSA_STATUS_SUCCESS;  // one packet processor per queue: nothing to prioritise
}

// Indices: plain atomics on the amd_queue_t, as programs may also use them
// directly. No lookup, as in ROCr: these are on every dispatch's path.
uint64_t hsa_queue_load_read_index_scacquire(const hsa_queue_t* queue) {
  return queue ? readIndex(abiOf(queue)).load(std::memory_order_acquire) : 0;
}
uint64_t hsa_queue_load_read_index_relaxed(const hsa_queue_t* queue) {
  return queue ? readIndex(abiOf(queue)).load(std::memory_order_relaxed) : 0;
}
uint64_t hsa_queue_load_write_index_scacquire(const hsa_queue_t* queue) {
  return queue ? writeIndex(abiOf(queue)).load(std::memory_order_acquire) : 0;
}
uint64_t hsa_queue_load_write_index_relaxed(const hsa_queue_t* queue) {
  return queue ? writeIndex(abiOf(queue)).load(std::memory_order_relaxed) : 0;
}
void hsa_queue_store_write_index_relaxed(const hsa_queue_t* queue, uint64_t value) {
  if (queue) writeIndex(abiOf(queue)).store(value, std::memory_order_relaxed);
}
void hsa_queue_store_write_index_screlease(const hsa_queue_t* queue, uint64_t value) {
  if (queue) writeIndex(abiOf(queue)).store(value, std::memory_order_release);
}
void hsa_queue_store_read_index_relaxed(const hsa_queue_t* queue, uint64_t value) {
  if (queue) readIndex(abiOf(queue)).store(value, std::memory_order_relaxed);
}
void hsa_queue_store_read_index_screlease(const hsa_queue_t* queue, uint64_t value) {
  if (queue) readIndex(abiOf(queue)).store(value, std::memory_order_release);
}

#define GTAP_SIM_HSA_QUEUE_CAS(name, order, failure)                                          \
  uint64_t name(const hsa_queue_t* queue, uint64_t expected, uint64_t value) {                \
    if (!queue) return 0;                                                                     \
    writeIndex(abiOf(queue)).compare_exchange_strong(expected, value, order, failure);        \
    return expected;                                                                          \
  }
GTAP_SIM_HSA_QUEUE_CAS(hsa_queue_cas_write_index_scacq_screl, std::memory_order_acq_rel, std::memory_order_acquire)
GTAP_SIM_HSA_QUEUE_CAS(hsa_queue_cas_write_index_scacquire, std::memory_order_acquire, std::memory_order_acquire)
GTAP_SIM_HSA_QUEUE_CAS(hsa_queue_cas_write_index_relaxed, std::memory_order_relaxed, std::memory_order_relaxed)
GTAP_SIM_HSA_QUEUE_CAS(hsa_queue_cas_write_index_screlease, std::memory_order_release, std::memory_order_relaxed)
#undef GTAP_SIM_HSA_QUEUE_CAS

#define GTAP_SIM_HSA_QUEUE_ADD(name, order)                          \
  uint64_t name(const hsa_queue_t* queue, uint64_t value) {          \
    return queue ? writeIndex(abiOf(queue)).fetch_add(value, order) : 0; \
  }
GTAP_SIM_HSA_QUEUE_ADD(hsa_queue_add_write_index_scacq_screl, std::memory_order_acq_rel)
GTAP_SIM_HSA_QUEUE_ADD(hsa_queue_add_write_index_scacquire, std::memory_order_acquire)
GTAP_SIM_HSA_QUEUE_ADD(hsa_queue_add_write_index_relaxed, std::memory_order_relaxed)
GTAP_SIM_HSA_QUEUE_ADD(hsa_queue_add_write_index_screlease, std::memory_order_release)
#undef GTAP_SIM_HSA_QUEUE_ADD

}  // namespace sim_hsa
