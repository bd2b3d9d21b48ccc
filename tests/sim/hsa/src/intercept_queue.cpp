// Intercept queues (hsa_amd_queue_intercept_create / _register), following
// ROCr's contract (intercept_queue.cpp there):
//
// - The program gets a queue of its own: ring, indices and doorbell behave
//   like any queue's. Writing its doorbell signal processes, in the writing
//   thread, every new packet whose header is valid, one packet at a time.
// - Each packet goes to the handler registered last, with the packet's index
//   in the program's queue; a handler passes packets on (the same, rewritten,
//   more or fewer) with the writer it is given, which hands them to the
//   handler registered before it, and after the first-registered one to a
//   private queue whose packet processor runs them.
// - A consumed packet's slot goes back to INVALID and the read index moves
//   past it once the handlers have returned.
//
// Differences from ROCr, all more permissive: a handler may call the writer
// several times in one invocation; a handler that rings its own queue's
// doorbell has the new packets processed when it returns (ROCr defers them to
// its event thread); the private queue is twice the size of the program's,
// and when it is full, packets wait in an overflow list that its processor
// drains.
#include "agent.h"
#include "api.h"
#include "queue.h"
#include "signal.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

namespace sim_hsa {

namespace {

constexpr uint16_t kInvalidHeader = HSA_PACKET_TYPE_INVALID << HSA_PACKET_HEADER_TYPE;

std::atomic_ref<uint16_t> headerOf(AqlPacket& p) { return std::atomic_ref<uint16_t>(*reinterpret_cast<uint16_t*>(p.bytes)); }
std::atomic_ref<uint64_t> writeIndex(amd_queue_t* q) {
  return std::atomic_ref<uint64_t>(*const_cast<uint64_t*>(&q->write_dispatch_id));
}
std::atomic_ref<uint64_t> readIndex(amd_queue_t* q) {
  return std::atomic_ref<uint64_t>(*const_cast<uint64_t*>(&q->read_dispatch_id));
}

struct Handler {
  hsa_amd_queue_intercept_handler fn;
  void* data;
};

class InterceptQueue;

// The packet writer has no context argument: the thread's innermost handler
// call tells it where packets go, as in ROCr.
struct Frame {
  InterceptQueue* queue;
  uint64_t user_index;
  const std::vector<Handler>* handlers;  // as registered when the packet arrived
  size_t remaining;               // handlers not yet called for this packet
};
thread_local std::deque<Frame> t_frames;
thread_local std::vector<InterceptQueue*> t_processing;

class InterceptQueue final : public Queue, public DoorbellListener {
 public:
  InterceptQueue(std::shared_ptr<AqlQueue> lower, uint32_t size)
      : Queue(size, lower->handle()->type, lower->handle()->features, lower->handle()->id),
        lower_(std::move(lower)),
        doorbell_(newSignal(0, /*runtime_owned=*/true)) {
    if (doorbell_ == nullptr) throw std::bad_alloc();
    handle()->doorbell_signal = toHandle(doorbell_);
    lower_->reportErrorsAs(handle());
    lower_->onProgress([this] { drainOverflow(); });
  }

  ~InterceptQueue() override {
    shutdown();
    deleteSignal(doorbell_);
  }

  // After construction, once the object can take calls.
  void listen() { doorbell_->listener.store(this, std::memory_order_release); }

  bool isIntercept() const override { return true; }
  void setProfiling(bool enable) override {
    Queue::setProfiling(enable);
    lower_->setProfiling(enable);
  }
  void inactivate() override { lower_->inactivate(); }
  void shutdown() override {
    doorbell_->listener.store(nullptr, std::memory_order_release);
    lower_->shutdown();
  }

  // Packets read the handlers without a lock: each registration publishes a
  // new list, and earlier lists are kept for packets still going through them.
  void addHandler(hsa_amd_queue_intercept_handler fn, void* data) {
    std::lock_guard<std::mutex> lock(handlers_lock_);
    auto next = std::make_unique<std::vector<Handler>>(handlers_.empty() ? std::vector<Handler>{} : *handlers_.back());
    next->push_back({fn, data});
    handlers_.push_back(std::move(next));
    current_handlers_.store(handlers_.back().get(), std::memory_order_release);
  }

  void doorbellRung() override {
    if (std::find(t_processing.begin(), t_processing.end(), this) != t_processing.end()) {
      rescan_ = true;  // rung from one of our handlers: picked up when it returns
      return;
    }
    // One thread processes the queue at a time; a ring while it does is its
    // to pick up (rung_), as the doorbell is a request, not a rendezvous.
    rung_.store(true);
    while (!busy_.exchange(true)) {
      rung_.store(false);
      t_processing.push_back(this);
      AqlPacket* packets = ring();
      const uint64_t mask = size() - 1;
      do {
        rescan_ = false;
        const uint64_t end = writeIndex(abi()).load(std::memory_order_acquire);
        for (; next_ < end; ++next_) {
          AqlPacket& slot = packets[next_ & mask];
          const uint16_t header = headerOf(slot).load(std::memory_order_acquire);
          if (((header >> HSA_PACKET_HEADER_TYPE) & 0xff) == HSA_PACKET_TYPE_INVALID) break;
          AqlPacket packet;
          std::memcpy(&packet, &slot, sizeof packet);
          runHandlers(&packet, next_);
          headerOf(slot).store(kInvalidHeader, std::memory_order_release);
        }
        readIndex(abi()).store(next_, std::memory_order_release);
      } while (rescan_);
      t_processing.pop_back();
      ringDeferred();
      busy_.store(false);
      if (!rung_.load()) return;
    }
  }

  static void writer(const void* packets, uint64_t count) {
    if (t_frames.empty()) {
      warn("intercept queue packet writer called outside a handler; %llu packet(s) dropped",
           static_cast<unsigned long long>(count));
      return;
    }
    size_t depth = t_frames.size() - 1;
    t_frames[depth].queue->forward(depth, packets, count);
  }

 private:
  void runHandlers(const AqlPacket* packet, uint64_t index) {
    static const std::vector<Handler> kNone;
    const std::vector<Handler>* handlers = current_handlers_.load(std::memory_order_acquire);
    if (handlers == nullptr) handlers = &kNone;
    const size_t count = handlers->size();
    t_frames.push_back({this, index, handlers, count});
    forward(t_frames.size() - 1, packet, 1);
    t_frames.pop_back();
  }

  // Hands packets to the next handler down the chain, or to the private queue.
  void forward(size_t depth, const void* packets, uint64_t count) {
    if (t_frames[depth].remaining == 0) {
      submit(static_cast<const AqlPacket*>(packets), count);
      return;
    }
    // References into t_frames stay valid while nested frames come and go
    // (a deque only grows and shrinks at the end).
    Frame& frame = t_frames[depth];
    const Handler h = (*frame.handlers)[--frame.remaining];
    h.fn(packets, count, frame.user_index, h.data, &InterceptQueue::writer);
    ++t_frames[depth].remaining;
  }

  void submit(const AqlPacket* packets, uint64_t count) {
    if (count == 0) return;
    // Only the processing thread submits; with nothing waiting in the
    // overflow list and room in the private queue, the packets go straight in.
    if (!has_overflow_.load(std::memory_order_acquire) && writeDirect(packets, count)) return;
    std::lock_guard<std::mutex> lock(overflow_lock_);
    overflow_.insert(overflow_.end(), packets, packets + count);
    drainLocked();
  }

  void drainOverflow() {
    if (!has_overflow_.load(std::memory_order_acquire)) return;
    std::lock_guard<std::mutex> lock(overflow_lock_);
    drainLocked();
  }

  // Moves waiting packets into the private queue as far as it has room; only
  // this object writes to that queue.
  void drainLocked() {
    amd_queue_t* q = lower_->abi();
    AqlPacket* ring = lower_->ring();
    const uint64_t mask = lower_->size() - 1;
    while (!overflow_.empty()) {
      const uint64_t write = writeIndex(q).load(std::memory_order_relaxed);
      const uint64_t read = readIndex(q).load(std::memory_order_acquire);
      const uint64_t room = lower_->size() - (write - read);
      if (room == 0) break;
      const uint64_t n = std::min<uint64_t>(room, overflow_.size());
      for (uint64_t i = 0; i < n; ++i) {
        AqlPacket& slot = ring[(write + i) & mask];
        const AqlPacket& p = overflow_[i];
        // Body first, header last with a release store, as any producer must.
        std::memcpy(slot.bytes + 2, p.bytes + 2, sizeof p.bytes - 2);
        uint16_t header;
        std::memcpy(&header, p.bytes, sizeof header);
        headerOf(slot).store(header, std::memory_order_release);
      }
      writeIndex(q).store(write + n, std::memory_order_release);
      overflow_.erase(overflow_.begin(), overflow_.begin() + n);
      // While one ring of the program's doorbell is being processed, the
      // private queue's doorbell is rung once, at the end (ringDeferred), as
      // a hardware queue takes one doorbell write for what it was handed;
      // otherwise (the processor draining the overflow) at once.
      if (std::find(t_processing.begin(), t_processing.end(), this) != t_processing.end()) {
        deferred_ring_.store(int64_t(write + n - 1), std::memory_order_relaxed);
        ring_pending_.store(true, std::memory_order_release);
      } else {
        storeValue(lower_->doorbell(), int64_t(write + n - 1), std::memory_order_release);
      }
    }
    has_overflow_.store(!overflow_.empty(), std::memory_order_release);
  }

  bool writeDirect(const AqlPacket* packets, uint64_t count) {
    amd_queue_t* q = lower_->abi();
    AqlPacket* ring = lower_->ring();
    const uint64_t mask = lower_->size() - 1;
    const uint64_t write = writeIndex(q).load(std::memory_order_relaxed);
    const uint64_t read = readIndex(q).load(std::memory_order_acquire);
    if (lower_->size() - (write - read) < count) return false;
    for (uint64_t i = 0; i < count; ++i) {
      AqlPacket& slot = ring[(write + i) & mask];
      std::memcpy(slot.bytes + 2, packets[i].bytes + 2, sizeof slot.bytes - 2);
      uint16_t header;
      std::memcpy(&header, packets[i].bytes, sizeof header);
      headerOf(slot).store(header, std::memory_order_release);
    }
    writeIndex(q).store(write + count, std::memory_order_release);
    deferred_ring_.store(int64_t(write + count - 1), std::memory_order_relaxed);
    ring_pending_.store(true, std::memory_order_release);
    return true;
  }

  // The private queue's doorbell, rung once for what one ring of the
  // program's handed it; outside any lock (in inline mode the store runs the
  // packets, whose progress may drain the overflow list).
  void ringDeferred() {
    if (!ring_pending_.exchange(false, std::memory_order_acq_rel)) return;
    storeValue(lower_->doorbell(), deferred_ring_.load(std::memory_order_relaxed), std::memory_order_release);
  }

  std::shared_ptr<AqlQueue> lower_;
  Signal* doorbell_;
  std::mutex handlers_lock_;  // registrations
  std::vector<std::unique_ptr<std::vector<Handler>>> handlers_;
  std::atomic<const std::vector<Handler>*> current_handlers_{nullptr};
  std::atomic<bool> busy_{false};  // a thread is processing the program's packets
  std::atomic<bool> rung_{false};  // rung while it was
  uint64_t next_ = 0;   // next packet of the program's queue to process
  bool rescan_ = false;
  std::mutex overflow_lock_;
  std::deque<AqlPacket> overflow_;
  std::atomic<bool> has_overflow_{false};
  std::atomic<bool> ring_pending_{false};
  std::atomic<int64_t> deferred_ring_{0};
};

}  // namespace

hsa_status_t hsa_amd_queue_intercept_create(hsa_agent_t agent_handle, uint32_t size, hsa_queue_type32_t type,
                                            void (*callback)(hsa_status_t status, hsa_queue_t* source, void* data),
                                            void* data, uint32_t private_segment_size, uint32_t group_segment_size,
                                            hsa_queue_t** queue) {
  SIM_OPEN();
  SIM_NOT_NULL(queue);
  Agent* a = toAgent(agent_handle);
  SIM_CHECK(a != nullptr, HSA_STATUS_ERROR_INVALID_AGENT);
  SIM_CHECK(size != 0 && (size & (size - 1)) == 0, HSA_STATUS_ERROR_INVALID_ARGUMENT);
  SIM_CHECK(type == HSA_QUEUE_TYPE_MULTI || type == HSA_QUEUE_TYPE_SINGLE || type == HSA_QUEUE_TYPE_COOPERATIVE,
            HSA_STATUS_ERROR_INVALID_ARGUMENT);
  SIM_CHECK(isGpu(a), HSA_STATUS_ERROR_INVALID_AGENT);
  SIM_CHECK(type != HSA_QUEUE_TYPE_COOPERATIVE, HSA_STATUS_ERROR_INVALID_QUEUE_CREATION);
  SIM_CHECK(size <= gpu::kQueueMaxSize, HSA_STATUS_ERROR_INVALID_QUEUE_CREATION);
  SIM_TRY
  // The private queue has twice the program's room: handlers that add a
  // packet to the program's (a tool forwarding a completion) still fit a
  // full ring of the program's at once, without the overflow list.
  const uint32_t programSize = std::max(size, gpu::kQueueMinSize);
  auto lower = std::make_shared<AqlQueue>(a, 2 * programSize, type, callback, data);
  auto q = std::make_shared<InterceptQueue>(lower, programSize);
  SIM_CHECK(registerQueue(q), HSA_STATUS_ERROR_OUT_OF_RESOURCES);
  lower->start();
  q->listen();
  *queue = q->handle();
  return HSA_STATUS_SUCCESS;
  SIM_CATCH
}

hsa_status_t hsa_amd_queue_intercept_register(hsa_queue_t* queue, hsa_amd_queue_intercept_handler callback,
                                              void* user_data) {
  SIM_OPEN();
  SIM_NOT_NULL(callback);
  SIM_NOT_NULL(queue);
  auto q = findQueue(queue);
  SIM_CHECK(q != nullptr, HSA_STATUS_ERROR_INVALID_QUEUE);
  SIM_CHECK(q->isIntercept(), HSA_STATUS_ERROR_INVALID_QUEUE);
  SIM_TRY
  static_cast<InterceptQueue*>(q.get())->addHandler(callback, user_data);
  return HSA_STATUS_SUCCESS;
  SIM_CATCH
}

}  // namespace sim_hsa
