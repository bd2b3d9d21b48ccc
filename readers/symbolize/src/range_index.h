// Address ranges, possibly overlapping or nested, looked up by an address
// they contain. Built once, then searched in logarithmic time.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace gtap::readers::symbolize {

template <typename Value>
class RangeIndex {
 public:
  // [low, high); empty ranges are ignored.
  void add(uint64_t low, uint64_t high, Value value) {
    if (low < high) entries_.push_back(Entry{low, high, std::move(value)});
  }

  // Sorts by start. Among ranges with the same start, the one added later
  // wins, so callers add their preferred value last.
  void finish() {
    std::stable_sort(entries_.begin(), entries_.end(),
                     [](const Entry& a, const Entry& b) { return a.low < b.low; });
    highestSoFar_.clear();
    highestSoFar_.reserve(entries_.size());
    uint64_t highest = 0;
    for (const Entry& entry : entries_) {
      highest = std::max(highest, entry.high);
      highestSoFar_.push_back(highest);
    }
  }

  // The containing range that starts last, or null.
  const Value* find(uint64_t address) const {
    auto after = std::upper_bound(entries_.begin(), entries_.end(), address,
                                  [](uint64_t a, const Entry& e) { return a < e.low; });
    // Walking back stops as soon as no earlier range reaches this far.
    for (size_t i = static_cast<size_t>(after - entries_.begin()); i-- > 0;) {
      if (highestSoFar_[i] <= address) break;
      if (address < entries_[i].high) return &entries_[i].value;
    }
    return nullptr;
  }

  bool empty() const { return entries_.empty(); }

 private:
  struct Entry {
    uint64_t low;
    uint64_t high;
    Value value;
  };
  std::vector<Entry> entries_;
  std::vector<uint64_t> highestSoFar_;  // max high of entries_[0..i]
};

}  // namespace gtap::readers::symbolize
