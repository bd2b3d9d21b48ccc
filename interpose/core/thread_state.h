// Per-thread record buffers. A thread appends fixed-size records to the block
// it owns and publishes each with one release store; the writer thread reads
// up to what was published. Full blocks are chained for the writer and new
// ones come from a shared pool, once per kBlockRecords records.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "record.h"

namespace gtap::core {

inline constexpr uint32_t kBlockRecords = 1024;  // 16 KiB of records

struct Block {
  std::atomic<uint32_t> committed{0};
  std::atomic<Block*> next{nullptr};
  Record records[kBlockRecords];
};

class BlockPool;

struct ThreadState {
  // Producer side, touched on every call.
  Record* cursor = nullptr;
  Record* limit = nullptr;
  Block* current = nullptr;
  uint32_t generation = 0;
  BlockPool* pool = nullptr;
  uint64_t produced = 0;  // records appended so far: the index of the next one

  // Set by the thread when it exits; the writer frees the state after draining.
  std::atomic<bool> exited{false};

  // Writer side.
  Block* head = nullptr;
  uint32_t consumed = 0;
  uint64_t eventsConsumed = 0;
  int64_t lastNs = 0;
  bool defined = false;

  uint32_t id = 0;
  uint32_t osTid = 0;
  std::string name;

  inline void append(const Record& r) {
    if (__builtin_expect(cursor == limit, 0) && !nextBlock()) return;
    *cursor++ = r;
    ++produced;
    current->committed.store(static_cast<uint32_t>(cursor - current->records),
                             std::memory_order_release);
  }
  // False when no block could be had: recording has stopped (an internal
  // error) and the record is not kept.
  bool nextBlock();
};

// Bounded pool of blocks shared by all threads of a session. When the budget
// is spent, a producer waits for the writer (the program slows down, no record
// is lost); a session that stopped recording recycles instead.
class BlockPool {
 public:
  BlockPool(uint64_t budgetBytes, void (*kickWriter)());
  Block* acquire();
  void release(Block* b);
  void stopWaiting() { noWait_.store(true); }
  uint64_t waits() const { return waits_.load(); }
  std::mutex& mutex() { return mutex_; }

 private:
  std::mutex mutex_;
  std::vector<Block*> free_;
  uint64_t allocated_ = 0;
  uint64_t budget_;
  void (*kick_)();
  std::atomic<bool> noWait_{false};
  std::atomic<uint64_t> waits_{0};
};

}  // namespace gtap::core
