#include "thread_state.h"

#include <unistd.h>

#include <new>
#include <thread>

#include "internal_error.h"

namespace gtap::core {

bool ThreadState::nextBlock() {
  Block* b;
  // On the program's thread, inside any call that records: a block that
  // cannot be allocated stops recording, never the program.
  try {
    testThrowPoint(TestSite::recordBuffer);
    b = pool->acquire();
  } GTAP_CATCH_INTERNAL {
    stopAfterInternalError("a thread's record buffer");
    return false;
  }
  if (current) {
    // Linked before any record of it is published (the writer walks into it
    // only up to a count it read after this store).
    current->next.store(b, std::memory_order_release);
  } else {
    head = b;
  }
  current = b;
  cursor = b->records;
  limit = b->records + kBlockRecords;
  return true;
}

Record* ThreadState::openCallInNewBlock(uint16_t function, uint64_t ticks) {
  if (!nextBlock()) return nullptr;
  uint64_t index;
  return openCall(function, ticks, index);
}

BlockPool::BlockPool(uint64_t budgetBytes, void (*kickWriter)())
    : budget_(budgetBytes < sizeof(Block) * 4 ? sizeof(Block) * 4 : budgetBytes), kick_(kickWriter) {}

Block* BlockPool::acquire() {
  for (unsigned spins = 0;; ++spins) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!free_.empty()) {
        Block* b = free_.back();
        free_.pop_back();
        b->next.store(nullptr, std::memory_order_relaxed);
        // Half the budget waiting for the writer: wake it now rather than at
        // its next interval, so producers rarely reach the budget.
        if ((allocated_ - free_.size() * sizeof(Block)) * 2 > budget_) kick_();
        return b;
      }
      // Past the budget, one block per new thread is still given so a thread
      // can never wait on its own undrained records.
      if (allocated_ + sizeof(Block) <= budget_ || noWait_.load() || spins > 5000) {
        allocated_ += sizeof(Block);
        return new Block;  // records are written before they are read: no zeroing
      }
    }
    if (spins == 0) waits_.fetch_add(1);
    kick_();
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

void BlockPool::release(Block* b) {
  std::lock_guard<std::mutex> lock(mutex_);
  free_.push_back(b);
}


}  // namespace gtap::core
