// One replay's HSA part: performs the HSA records (and the host data and
// read-backs of HSA memory) in seq order, keeping what it made by the
// capture's ids, the captured allocations and locked ranges as an address
// map, and the staging buffers of copies from or to ordinary host memory.
// Packets are written to the replay's queues as a program writes them. Its
// destructor lets queued work finish (bounded) and destroys whatever is still
// alive, so a failed run leaves nothing behind.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "address_map.h"
#include "setup.h"

namespace gtap::replay {

class HsaSession {
 public:
  HsaSession(const ReplaySetup& setup, readers::ReplayResult& result);
  ~HsaSession();
  HsaSession(const HsaSession&) = delete;
  HsaSession& operator=(const HsaSession&) = delete;

  // Performs one record: an HSA operation, or host data or a read-back of
  // HSA memory or of an HSA copy. `index` is its place in the stream.
  void perform(const readers::ReplayRecord& r, size_t index);
  // Waits for everything submitted so far: a barrier packet on every live
  // queue, and every copy still running.
  void synchronizeAll();
  // Rings every doorbell a batch of packets left for its last packet: before
  // any record that is not the next packet of that batch.
  void ringDoorbells();

 private:
  // Memory the host reaches: an allocation (hostAccessible ones), a locked
  // buffer of the replay's own, a staging buffer.
  struct Memory {
    enum class Kind { allocation, lock } kind = Kind::allocation;
    void* replay = nullptr;   // allocation: the pool's pointer; lock: the replay's host buffer
    void* agent = nullptr;    // lock: where the agents reach it
    uint64_t size = 0;
    uint64_t mappedBytes = 0; // lock: the host buffer's length (whole pages)
    uint64_t captured = 0;    // the captured (host) address
    uint64_t capturedAgent = 0;  // lock: the captured agent address
    bool hostAccessible = false;
  };
  // A host buffer locked for every agent, for a copy's end outside every
  // captured range.
  struct Staging {
    void* host = nullptr;
    void* agent = nullptr;
    uint64_t size = 0;
    uint64_t mappedBytes = 0;
  };
  struct CopyBuffers {
    Staging source, destination;
    uint8_t* readBackBase = nullptr;  // where read-backs of this copy are compared (host view)
    uint64_t readBackSize = 0;
  };
  struct Queue {
    hsa_queue_t* queue = nullptr;
    uint64_t captured = 0;  // the program's hsa_queue_t address
    uint64_t id = 0;
    // A packet published whose doorbell waits for the last packet of its
    // batch (the capture's `more`): rung before anything else is performed.
    bool doorbellDue = false;
    uint64_t doorbellIndex = 0;
    // Written by the queue's error callback (on the runtime's thread).
    std::atomic<hsa_status_t> error{HSA_STATUS_SUCCESS};
  };
  struct CodeObject {
    hsa_code_object_reader_t reader{};
    Bytes bytes;  // kept alive while the reader lives
  };
  struct Kernel {
    uint64_t object = 0;
    uint64_t executable = 0;
    uint32_t kernargAlignment = 0;
    std::string symbol;
  };
  // A copy whose completion the replay has not seen yet: done once `signal`
  // falls below `below`.
  struct Outstanding {
    uint64_t signalId = 0;  // 0: a signal of the replay's own
    hsa_signal_t signal{};
    hsa_signal_value_t below = 0;
  };
  // The translated kernarg bytes a dispatch placed in captured memory,
  // restored when host data rewrites them with the captured (untranslated)
  // bytes of the same dispatch.
  struct KernargOverlay {
    std::vector<uint8_t> captured, translated;
  };

  void performMemory(const readers::ReplayRecord& r, size_t index);
  void performSignal(const readers::ReplayRecord& r);
  void performObject(const readers::ReplayRecord& r, size_t index);
  void performDispatch(const readers::ReplayRecord& r, size_t index);
  void performBarrier(const readers::ReplayRecord& r);
  void performCopy(const readers::ReplayRecord& r, size_t index);
  void performHostData(const readers::ReplayRecord& r, size_t index);
  void performReadBack(const readers::ReplayRecord& r, size_t index);

  void check(const readers::ReplayRecord& r, hsa_status_t status, const char* function);
  void checkQueues(const std::string& where);
  std::string where(const readers::ReplayRecord& r) const { return setup_.where(r); }
  hsa_agent_t agent(const readers::ReplayRecord& r, uint64_t id, const char* role);
  std::vector<hsa_agent_t> agents(const readers::ReplayRecord& r, capnp::List<uint64_t>::Reader ids, const char* role);
  hsa_signal_t signal(const readers::ReplayRecord& r, uint64_t id, const char* role, bool optional = false);
  Queue& queue(const readers::ReplayRecord& r, uint64_t id);
  Memory& memory(const readers::ReplayRecord& r, uint64_t id, const char* role);
  // The replay's address for a captured one inside a live captured range
  // (`size` bytes from it must lie inside), or null when it is in none.
  uint8_t* translate(const readers::ReplayRecord& r, uint64_t address, uint64_t size, const char* role);
  Staging stage(const readers::ReplayRecord& r, uint64_t size, const char* role);
  void release(Staging& s) noexcept;
  uint8_t* kernargSpace(const readers::ReplayRecord& r, uint64_t size, uint64_t alignment);
  // Reserves a packet slot in `q` (waiting while the ring is full) and
  // returns it; publish() writes the header and rings the doorbell.
  void* reserve(const readers::ReplayRecord& r, Queue& q, uint64_t& index);
  // Makes the packet valid; rings the doorbell unless `more` (the batch's
  // last packet, or the next record that is not one, rings it).
  void publish(Queue& q, void* slot, uint64_t index, uint16_t header, uint16_t setup, bool more = false);
  // Waits until `signal` meets the condition, at most the wait timeout;
  // returns false (and the value it holds in `last`) when it did not.
  bool waitFor(hsa_signal_t signal, hsa_signal_condition_t condition, hsa_signal_value_t value, uint64_t timeoutNs,
               hsa_signal_value_t& last);
  // Appends a barrier-AND to `q` and waits until it completes, everything
  // before it with it; false after `timeoutNs` or when a queue failed.
  bool drain(Queue& q, uint64_t timeoutNs);
  void cleanup() noexcept;

  const ReplaySetup& setup_;
  const HsaFunctions& hsa_;
  readers::ReplayResult& result_;
  std::map<uint64_t, Memory> memory_;  // allocations and locks, by id
  AddressMap addresses_;
  uint64_t liveBytes_ = 0;  // captured allocations and locks, summed: bounds staging buffers
  std::map<uint64_t, hsa_signal_t> signals_;
  std::map<uint64_t, std::unique_ptr<Queue>> queues_;
  std::map<uint64_t, CodeObject> codeObjects_;
  std::map<uint64_t, hsa_executable_t> executables_;
  std::map<uint64_t, Kernel> kernels_;
  std::map<uint64_t, CopyBuffers> copies_;  // by the copy record's seq
  std::vector<Outstanding> outstanding_;
  std::vector<hsa_signal_t> ownSignals_;   // completion signals of copies the program gave none
  hsa_signal_t syncSignal_{};              // synchronizeAll's barrier packets
  // By (allocation or lock id, offset): where dispatches put their segments.
  std::map<std::pair<uint64_t, uint64_t>, KernargOverlay> overlays_;
  uint64_t longestOverlay_ = 0;
  // Replay-owned kernarg memory: chunks of the kernarg pool, carved in order.
  std::vector<void*> kernargChunks_;
  uint64_t kernargUsed_ = 0, kernargChunkSize_ = 0;
};

}  // namespace gtap::replay
