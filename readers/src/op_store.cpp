#include "gtap/readers/op_store.h"

#include <algorithm>
#include <cstdint>

namespace gtap::readers {

std::string_view OpStore::intern(std::string_view s) {
  if (auto it = strings_.find(s); it != strings_.end()) return *it;
  auto out = allocate<char>(s.size());
  std::copy(s.begin(), s.end(), out.begin());
  std::string_view stored(out.data(), out.size());
  strings_.insert(stored);
  return stored;
}

void OpStore::clear() {
  strings_.clear();
  if (blocks_.empty()) return;
  blocks_.resize(1);
  next_ = blocks_[0].get();
  left_ = firstSize_;
}

void* OpStore::allocateBytes(size_t bytes, size_t align) {
  size_t pad = (align - reinterpret_cast<uintptr_t>(next_) % align) % align;
  if (next_ == nullptr || pad + bytes > left_) {
    // Blocks of 1 MiB, or one of its own for a larger value.
    constexpr size_t kBlock = size_t{1} << 20;
    size_t size = std::max(kBlock, bytes + alignof(std::max_align_t));
    blocks_.push_back(std::make_unique_for_overwrite<char[]>(size));
    if (blocks_.size() == 1) firstSize_ = size;
    next_ = blocks_.back().get();
    left_ = size;
    pad = (align - reinterpret_cast<uintptr_t>(next_) % align) % align;
  }
  void* p = next_ + pad;
  next_ += pad + bytes;
  left_ -= pad + bytes;
  return p;
}

}  // namespace gtap::readers
