#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string_view>
#include <type_traits>
#include <unordered_set>
#include <vector>

namespace gtap::readers {

// Where a DeviceWork (or a Timeline) keeps the names and lists its records
// point into: each distinct string once, and every list in blocks that never
// move, so loading makes no heap allocation per record and a copy of the
// owner (which shares the store) keeps its views valid.
class OpStore {
 public:
  OpStore() = default;
  OpStore(const OpStore&) = delete;
  OpStore& operator=(const OpStore&) = delete;

  // The stored copy of `s`; the same view for equal strings.
  std::string_view intern(std::string_view s);
  // Room for `n` values of T, left for the caller to fill. The store never
  // runs destructors: T must need none.
  template <class T>
  std::span<T> allocate(size_t n) {
    static_assert(std::is_trivially_destructible_v<T>);
    if (n == 0) return {};
    T* values = static_cast<T*>(allocateBytes(n * sizeof(T), alignof(T)));
    std::uninitialized_default_construct_n(values, n);
    return {values, n};
  }
  // Forgets every string and value (their views dangle), keeping the first
  // block for what comes next: a store used again for each batch of a stream.
  void clear();
  // Keeps `other` alive as long as this store: views into it may be held
  // beside views into this one (timelines merged from parts).
  void keep(std::shared_ptr<const OpStore> other) { kept_.push_back(std::move(other)); }
  template <class T>
  std::span<const T> copy(const T* values, size_t n) {
    auto out = allocate<T>(n);
    for (size_t i = 0; i < n; ++i) out[i] = values[i];
    return out;
  }

 private:
  void* allocateBytes(size_t bytes, size_t align);
  std::vector<std::unique_ptr<char[]>> blocks_;
  char* next_ = nullptr;
  size_t left_ = 0;
  size_t firstSize_ = 0;
  std::unordered_set<std::string_view> strings_;
  std::vector<std::shared_ptr<const OpStore>> kept_;
};

}  // namespace gtap::readers
