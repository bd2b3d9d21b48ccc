#include "tracker_impl.h"

#include <vector>

#include "clock.h"
#include "session.h"
#include "stack_table.h"

namespace gtap::hsa {

// --- memory -------------------------------------------------------------------------------

void Tracker::allocatedFromPool(uint64_t pool, void* address, size_t size, const core::CallScope& scope) {
  std::vector<uint64_t> stack;
  if (recordStacks() && recordMemory()) stack = core::captureStack(impl_->stackDepth);
  uint32_t thread = threadIdOf(scope);
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto owner = impl_->pools.find(pool);
  core::AllocationTable::Allocation a;
  a.size = size;
  if (owner != impl_->pools.end()) {
    a.kind = owner->second.first;
    a.device = owner->second.second;
  }
  impl_->allocations.allocated(address, a, 0, thread, std::move(stack), impl_->out.memory);
}

void Tracker::freeing(void* address, const core::CallScope& scope) {
  uint32_t thread = threadIdOf(scope);
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->allocations.freeing(address, thread, impl_->out.memory);
}

void Tracker::locked(void* host, size_t size, void*, const core::CallScope& scope) {
  std::vector<uint64_t> stack;
  if (recordStacks() && recordMemory()) stack = core::captureStack(impl_->stackDepth);
  uint32_t thread = threadIdOf(scope);
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->lockedRanges.allocated(host, {size, schema::MemoryKind::LOCKED, kNoDevice}, 0, thread, std::move(stack),
                                impl_->out.memory);
}

void Tracker::unlocking(void* host, const core::CallScope& scope) {
  uint32_t thread = threadIdOf(scope);
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->lockedRanges.freeing(host, thread, impl_->out.memory);
}

schema::CopyDirection Tracker::Impl::directionOf(const void* dst, const void* src) {
  // Only the GPU's pools are device memory; system pools are host memory.
  return allocations.direction(dst, src, [](schema::MemoryKind k) { return k == schema::MemoryKind::DEVICE; });
}

}  // namespace gtap::hsa
