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
  Allocation a;
  a.size = size;
  if (owner != impl_->pools.end()) {
    a.kind = owner->second.first;
    a.device = owner->second.second;
  }
  impl_->allocations[reinterpret_cast<uint64_t>(address)] = a;
  if (recordMemory())
    impl_->out.memory.push_back({false, a.kind, a.device, reinterpret_cast<uint64_t>(address), size, 0,
                                 core::nowTicks(), thread, std::move(stack)});
}

void Tracker::freeing(void* address, const core::CallScope& scope) {
  uint32_t thread = threadIdOf(scope);
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto it = impl_->allocations.find(reinterpret_cast<uint64_t>(address));
  if (it == impl_->allocations.end()) return;
  if (recordMemory())
    impl_->out.memory.push_back({true, it->second.kind, it->second.device, it->first, it->second.size, 0,
                                 core::nowTicks(), thread, {}});
  impl_->allocations.erase(it);
}

void Tracker::locked(void* host, size_t size, void*, const core::CallScope& scope) {
  std::vector<uint64_t> stack;
  if (recordStacks() && recordMemory()) stack = core::captureStack(impl_->stackDepth);
  uint32_t thread = threadIdOf(scope);
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->lockedRanges[reinterpret_cast<uint64_t>(host)] = size;
  if (recordMemory())
    impl_->out.memory.push_back({false, schema::MemoryKind::LOCKED, kNoDevice, reinterpret_cast<uint64_t>(host),
                                 size, 0, core::nowTicks(), thread, std::move(stack)});
}

void Tracker::unlocking(void* host, const core::CallScope& scope) {
  uint32_t thread = threadIdOf(scope);
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto it = impl_->lockedRanges.find(reinterpret_cast<uint64_t>(host));
  if (it == impl_->lockedRanges.end()) return;
  if (recordMemory())
    impl_->out.memory.push_back({true, schema::MemoryKind::LOCKED, kNoDevice, it->first, it->second, 0,
                                 core::nowTicks(), thread, {}});
  impl_->lockedRanges.erase(it);
}

schema::CopyDirection Tracker::Impl::directionOf(const void* dst, const void* src) {
  // Only the GPU's pools are device memory; system pools are host memory.
  return core::profile::copyDirection(allocations, dst, src,
                                      [](schema::MemoryKind k) { return k == schema::MemoryKind::DEVICE; });
}

}  // namespace gtap::hsa
