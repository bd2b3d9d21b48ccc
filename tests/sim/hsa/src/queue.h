// User-mode queues. The hsa_queue_t a program gets is the first member of an
// amd_queue_t, as in ROCr, whose write_dispatch_id and read_dispatch_id hold
// the write and read indices; the ring buffer holds AQL packets.
//
//   AqlQueue        a kernel-dispatch queue of the GPU: one packet processor
//                   thread runs its packets in order
//   InterceptQueue  what hsa_amd_queue_intercept_create returns: a queue of
//                   its own whose packets go through the registered handlers
//                   into a private AqlQueue (intercept_queue.cpp)
//   SoftQueue       hsa_soft_queue_create: memory and indices only; the
//                   program's own agent consumes it
#pragma once

#include "common.h"
#include "signal.h"

#include <hsa/amd_hsa_queue.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <thread>

namespace sim_hsa {

struct Agent;
struct Signal;

// One 64-byte AQL packet slot; every packet type has its header first and
// (if any) its completion signal at offset 56.
struct alignas(64) AqlPacket {
  uint8_t bytes[64];
};
static_assert(sizeof(AqlPacket) == 64);

using QueueErrorCallback = void (*)(hsa_status_t status, hsa_queue_t* source, void* data);

class Queue {
 public:
  Queue(const Queue&) = delete;
  Queue& operator=(const Queue&) = delete;
  virtual ~Queue();

  hsa_queue_t* handle() { return &abi_->hsa_queue; }
  amd_queue_t* abi() { return abi_; }
  AqlPacket* ring() { return static_cast<AqlPacket*>(abi_->hsa_queue.base_address); }
  uint32_t size() const { return abi_->hsa_queue.size; }

  virtual void setProfiling(bool enable);
  virtual void inactivate() {}
  // Stops any thread of the queue; before destruction, outside any lock.
  virtual void shutdown() {}
  virtual bool isIntercept() const { return false; }

 protected:
  // Allocates the amd_queue_t and a ring of `size` packets, all INVALID.
  // Throws std::bad_alloc when memory runs out.
  Queue(uint32_t size, hsa_queue_type32_t type, uint32_t features, uint64_t id);

 private:
  amd_queue_t* abi_ = nullptr;
};

// True when GTAP_SIM_INLINE=1: queued packets run on the thread that rings
// the doorbell, inside its doorbell store, with no packet processor thread
// (timing without a second thread's scheduling). A packet that would wait
// (a barrier whose signals are not yet satisfied) hands the queue over to a
// processor thread from then on, so nothing the ringing thread must do later
// is waited for on that thread.
bool inlineProcessing();

class AqlQueue final : public Queue, public DoorbellListener, public std::enable_shared_from_this<AqlQueue> {
 public:
  AqlQueue(Agent* agent, uint32_t size, hsa_queue_type32_t type, QueueErrorCallback callback, void* data);
  ~AqlQueue() override;

  void setProfiling(bool enable) override;
  void inactivate() override;
  void shutdown() override;

  // Starts the packet processor; after the object is fully set up. The
  // thread holds the queue, so a queue destroyed from its own error callback
  // lives until the thread is done with it.
  void start();
  // Where queue errors are reported: the program's view of an intercepted
  // queue rather than this private one.
  void reportErrorsAs(hsa_queue_t* queue) { report_as_ = queue; }
  // Called by the processor after each packet (intercept queues refill it).
  void onProgress(std::function<void()> fn) { on_progress_ = std::move(fn); }
  Signal* doorbell() { return doorbell_; }
  // Inline mode: the doorbell was written.
  void doorbellRung() override;

 private:
  void run();
  // Takes and runs the packet at next_ (whose header is valid).
  hsa_status_t step(bool& stop);
  // Whether the packet would run without waiting for a signal.
  bool readyToRun(const AqlPacket& packet);
  void startProcessor();
  // HSA_STATUS_SUCCESS, an error for the queue's callback, or
  // HSA_STATUS_INFO_BREAK when the queue is being destroyed mid-packet.
  hsa_status_t execute(const AqlPacket& packet, uint64_t index);
  hsa_status_t waitBarrier(const hsa_signal_t* dependencies, int count, bool all);
  hsa_status_t waitBarrierValue(const AqlPacket& packet);
  void raiseError(hsa_status_t status);

  Agent* agent_;
  Signal* doorbell_;
  QueueErrorCallback callback_;
  void* callback_data_;
  hsa_queue_t* report_as_;
  std::function<void()> on_progress_;
  std::atomic<bool> profiling_{false};
  // Kernel busy time and waves so far, for AQL profile packets; touched only
  // by whichever thread runs the packets (one at a time).
  uint64_t busy_ticks_ = 0;
  uint64_t cp_busy_ticks_ = 0;  // every packet, from taking it to completing it
  uint64_t waves_ = 0;
  std::atomic<bool> inactive_{false};
  std::atomic<bool> stop_{false};
  std::thread processor_;
  uint64_t next_ = 0;  // the next packet to run: the processor's, or the inline runner's
  bool inline_ = false;
  std::atomic<bool> handed_off_{false};  // inline mode: a processor thread runs it now
  std::atomic<bool> busy_{false};        // inline mode: a thread is running packets
  std::atomic<bool> rescan_{false};      // inline mode: rung while busy
};

class SoftQueue final : public Queue {
 public:
  SoftQueue(uint32_t size, hsa_queue_type32_t type, uint32_t features, hsa_signal_t doorbell);
};

// Queue identifiers, unique in the process, as hsa_queue_t::id requires.
uint64_t nextQueueId();

// Registers a queue the program may name; returns false when the agent
// already has as many queues as HSA_AGENT_INFO_QUEUES_MAX allows.
bool registerQueue(const std::shared_ptr<Queue>& queue);
std::shared_ptr<Queue> findQueue(const hsa_queue_t* handle);

// Runs one kernel dispatch packet to completion on the calling thread.
hsa_status_t runKernelDispatch(const hsa_kernel_dispatch_packet_t& packet, uint64_t index);

}  // namespace sim_hsa
