#include "allocations.h"

#include <utility>

#include "clock.h"
#include "session.h"

namespace gtap::core {

void AllocationTable::allocated(const void* address, const Allocation& a, uint64_t alignment, uint32_t thread,
                                std::vector<uint64_t> stack, std::vector<profile::MemoryRecord>& memory) {
  auto at = reinterpret_cast<uint64_t>(address);
  byAddress_[at] = a;
  if (recordMemory())
    memory.push_back({false, a.kind, a.device, at, a.size, alignment, nowTicks(), thread, std::move(stack)});
}

void AllocationTable::freeing(const void* address, uint32_t thread, std::vector<profile::MemoryRecord>& memory) {
  auto it = byAddress_.find(reinterpret_cast<uint64_t>(address));
  if (it == byAddress_.end()) return;
  if (recordMemory())
    memory.push_back({true, it->second.kind, it->second.device, it->first, it->second.size, 0, nowTicks(), thread, {}});
  byAddress_.erase(it);
}

}  // namespace gtap::core
