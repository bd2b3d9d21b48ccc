// The allocations a front end has seen made and not yet freed, by start
// address: what a free's record says (the allocation's size, kind and
// device), and where a copy's ends lie. Not locked itself: its owner keeps it
// under the lock that guards the owner's records, so an allocation and its
// record are made in one step, as a free and its record are.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "profile_records.h"

namespace gtap::core {

class AllocationTable {
 public:
  struct Allocation {
    uint64_t size = 0;
    schema::MemoryKind kind = schema::MemoryKind::UNKNOWN;
    uint32_t device = profile::kNoDevice;
  };

  // Notes `a` at `address` and, when memory is recorded (GTAP_MODE memory),
  // appends its record to `memory`.
  void allocated(const void* address, const Allocation& a, uint64_t alignment, uint32_t thread,
                 std::vector<uint64_t> stack, std::vector<profile::MemoryRecord>& memory);
  // Forgets the allocation at `address` and, when memory is recorded, appends
  // the record of its free; an address not noted is left alone.
  void freeing(const void* address, uint32_t thread, std::vector<profile::MemoryRecord>& memory);

  // A copy's direction from where its ends lie; `onDevice(kind)` says which
  // kinds count as device memory.
  template <typename OnDevice>
  schema::CopyDirection direction(const void* dst, const void* src, OnDevice onDevice) const {
    auto inDeviceMemory = [&](const void* p) {
      auto a = reinterpret_cast<uint64_t>(p);
      auto it = byAddress_.upper_bound(a);
      if (it == byAddress_.begin()) return false;
      --it;
      return a < it->first + it->second.size && onDevice(it->second.kind);
    };
    bool d = inDeviceMemory(dst), s = inDeviceMemory(src);
    if (d && s) return schema::CopyDirection::DEVICE_TO_DEVICE;
    if (d) return schema::CopyDirection::HOST_TO_DEVICE;
    if (s) return schema::CopyDirection::DEVICE_TO_HOST;
    return schema::CopyDirection::HOST_TO_HOST;
  }

 private:
  std::map<uint64_t, Allocation> byAddress_;
};

}  // namespace gtap::core
