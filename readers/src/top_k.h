// The best `limit` of the values offered one at a time, without keeping the
// rest: a heap whose front is the kept value that ranks last.
#pragma once

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

namespace gtap::readers {

// `ranksBefore(a, b)`: a is better than b (a strict order).
template <class T, class RanksBefore>
class TopK {
 public:
  TopK(size_t limit, RanksBefore ranksBefore) : limit_(limit), ranksBefore_(ranksBefore) {
    kept_.reserve(std::min<size_t>(limit, 1024));
  }
  void offer(const T& value) {
    if (kept_.size() < limit_) {
      kept_.push_back(value);
      std::push_heap(kept_.begin(), kept_.end(), ranksBefore_);
    } else if (limit_ && ranksBefore_(value, kept_.front())) {
      std::pop_heap(kept_.begin(), kept_.end(), ranksBefore_);
      kept_.back() = value;
      std::push_heap(kept_.begin(), kept_.end(), ranksBefore_);
    }
  }
  // The kept values, best first; the heap is left empty.
  std::vector<T> take() {
    std::sort_heap(kept_.begin(), kept_.end(), ranksBefore_);
    return std::exchange(kept_, {});
  }

 private:
  size_t limit_;
  RanksBefore ranksBefore_;
  std::vector<T> kept_;
};

}  // namespace gtap::readers
