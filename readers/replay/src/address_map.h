// The captured allocations live at a point of the replay, as ranges of the
// program's addresses, each with the replay allocation standing for it: an
// address inside one becomes the same offset in the replay's.
#pragma once

#include <cstdint>
#include <map>
#include <optional>

namespace gtap::replay {

class AddressMap {
 public:
  struct Range {
    uint64_t size = 0;
    uint8_t* replay = nullptr;
    uint64_t id = 0;  // the allocation's replay id
  };
  struct Hit {
    const Range* range;
    uint64_t offset;
    uint8_t* replay() const { return range->replay + offset; }
  };

  void add(uint64_t capturedBase, const Range& range) { ranges_[capturedBase] = range; }
  // Removes allocation `id`'s range. Another allocation at the same address
  // is left: the program's threads may free and allocate again in either
  // order as the capture numbered them (an allocation of another thread can
  // have taken the address before the free's record), and the newer one
  // stays live.
  void remove(uint64_t capturedBase, uint64_t id) {
    auto it = ranges_.find(capturedBase);
    if (it != ranges_.end() && it->second.id == id) ranges_.erase(it);
  }
  void clear() { ranges_.clear(); }

  std::optional<Hit> find(uint64_t captured) const {
    auto it = ranges_.upper_bound(captured);
    if (it == ranges_.begin()) return std::nullopt;
    --it;
    uint64_t offset = captured - it->first;
    if (offset >= it->second.size) return std::nullopt;
    return Hit{&it->second, offset};
  }

 private:
  std::map<uint64_t, Range> ranges_;  // by captured base address
};

}  // namespace gtap::replay
