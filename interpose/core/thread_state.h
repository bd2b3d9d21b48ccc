// Per-thread record buffers. A thread keeps one record per call in the block
// it owns: it reserves the record when the call begins and fills it when the
// call returns. Once no call of the thread is open (the outermost returns),
// it publishes every record so far with one release store of `published`; the
// writer thread reads up to that count. A call nested in another (a HAL call
// whose driver calls Level Zero, a runtime callback calling back in) thus
// waits for its outer call before the writer sees it, and records stay in the
// order the calls began. Full blocks are chained for the writer and new ones
// come from a shared pool, once per kBlockRecords records.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "record.h"

// Declared hidden, as everything of libgtap.so is: a wrapper then reads these
// globals directly, not through the GOT.
#pragma GCC visibility push(hidden)
namespace gtap::core {

inline constexpr uint32_t kBlockRecords = 1024;  // 24 KiB of records

struct Block {
  std::atomic<Block*> next{nullptr};
  Record records[kBlockRecords];
};

class BlockPool;

struct ThreadState {
  // Producer side, touched on every call.
  Record* cursor = nullptr;
  Record* limit = nullptr;
  uint32_t open = 0;  // calls begun and not returned
  uint32_t generation = 0;
  // Records reserved so far: the index of the next one. Written by the
  // thread only; the writer reads it at the final drain, for calls that
  // never returned.
  std::atomic<uint64_t> produced{0};
  // Records the writer may read: `produced` as it was when no call was open.
  std::atomic<uint64_t> published{0};
  Block* current = nullptr;
  BlockPool* pool = nullptr;

  // Set by the thread when it exits; the writer frees the state after draining.
  std::atomic<bool> exited{false};

  // Writer side.
  Block* head = nullptr;
  uint32_t consumed = 0;  // records of `head` taken
  uint64_t taken = 0;     // records taken in all
  uint64_t eventsConsumed = 0;
  int64_t lastNs = 0;
  bool defined = false;

  uint32_t id = 0;
  uint32_t osTid = 0;
  std::string name;

  // Reserves the record of a call that begins now, and sets `index` to its
  // index among the thread's records; nullptr when no block could be had
  // (recording has stopped after an internal error), `index` then unchanged.
  __attribute__((always_inline)) Record* openCall(uint16_t function, uint64_t ticks, uint64_t& index) {
    uint64_t n = produced.load(std::memory_order_relaxed);
    if (__builtin_expect(cursor == limit, 0)) {
      Record* fresh = openCallInNewBlock(function, ticks);
      if (fresh) index = n;
      return fresh;
    }
    index = n;
    Record* r = cursor++;
    r->begin = ticks;
    r->function = function;
    r->kind = RecordKind::open;
    r->depth = static_cast<uint8_t>(open);  // nesting past 255 calls deep does not happen (HAL stops at 128)
    ++open;
    // Release: a final drain that reads the count sees the record as written.
    produced.store(n + 1, std::memory_order_release);
    return r;
  }
  // Fills the call's record; publishes when it was the thread's last open call.
  __attribute__((always_inline)) void closeCall(Record* r, uint64_t ticks, int32_t result) {
    r->end = ticks;
    r->result = result;
    r->kind = RecordKind::returned;
    if (--open == 0) published.store(produced.load(std::memory_order_relaxed), std::memory_order_release);
  }
  // False when no block could be had: recording has stopped (an internal
  // error) and the record is not kept.
  bool nextBlock();
  // openCall once a block is full: out of line, once per kBlockRecords calls.
  __attribute__((noinline)) Record* openCallInNewBlock(uint16_t function, uint64_t ticks);
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
#pragma GCC visibility pop
