// A map from runtime handles to gtap's state for them (a pointer, or a value
// such as a replay id) that the program's threads read without a lock: every
// launch looks its list and kernel up, and a lock there would be taken once
// per launch. Writers (object creation and destruction, rare) hold the lock
// of the map's owner (the profiler's, the replay recorder's).
//
// Open addressing over atomic slots. A removed handle keeps its key with a
// zero value, so a reader probing past it never stops early. A full table is
// replaced by a larger one holding only the live entries; the old one is
// kept (a reader may still be probing it), so memory grows with the number of
// distinct handles ever seen, not with lookups.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace gtap::ze {

// T: a pointer or an integer; T{} means "none".
template <class T>
class HandleMap {
 public:
  HandleMap() { table_.store(newTable(64), std::memory_order_release); }
  HandleMap(const HandleMap&) = delete;
  HandleMap& operator=(const HandleMap&) = delete;

  // Lock-free; T{} when the handle is unknown.
  T find(const void* key) const {
    if (!key) return T{};
    const Table* t = table_.load(std::memory_order_acquire);
    for (size_t i = hash(key) & t->mask;; i = (i + 1) & t->mask) {
      const void* k = t->slots[i].key.load(std::memory_order_acquire);
      if (k == key) return t->slots[i].value.load(std::memory_order_acquire);
      if (!k) return T{};
    }
  }

  // Writers: the caller holds the lock that orders all writers.
  void put(const void* key, T value) {
    Table* t = table_.load(std::memory_order_relaxed);
    if (Slot* s = slotOf(t, key)) {
      s->value.store(value, std::memory_order_release);
      return;
    }
    if ((t->used + 1) * 2 > t->mask + 1) t = grow(t);
    insert(t, key, value);
  }
  void erase(const void* key) {
    if (Slot* s = slotOf(table_.load(std::memory_order_relaxed), key)) s->value.store(T{}, std::memory_order_release);
  }

 private:
  struct Slot {
    std::atomic<const void*> key{nullptr};
    std::atomic<T> value{T{}};
  };
  struct Table {
    size_t mask = 0;
    size_t used = 0;  // keys written, live or removed
    std::unique_ptr<Slot[]> slots;
  };

  static size_t hash(const void* key) {
    uint64_t x = reinterpret_cast<uintptr_t>(key);
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return static_cast<size_t>(x);
  }
  Table* newTable(size_t capacity) {
    auto t = std::make_unique<Table>();
    t->mask = capacity - 1;
    t->slots = std::make_unique<Slot[]>(capacity);
    tables_.push_back(std::move(t));
    return tables_.back().get();
  }
  static Slot* slotOf(Table* t, const void* key) {
    for (size_t i = hash(key) & t->mask;; i = (i + 1) & t->mask) {
      const void* k = t->slots[i].key.load(std::memory_order_relaxed);
      if (k == key) return &t->slots[i];
      if (!k) return nullptr;
    }
  }
  static void insert(Table* t, const void* key, T value) {
    for (size_t i = hash(key) & t->mask;; i = (i + 1) & t->mask) {
      if (t->slots[i].key.load(std::memory_order_relaxed)) continue;
      // The value first: a reader that sees the key sees its value.
      t->slots[i].value.store(value, std::memory_order_relaxed);
      t->slots[i].key.store(key, std::memory_order_release);
      ++t->used;
      return;
    }
  }
  Table* grow(Table* old) {
    size_t live = 0;
    for (size_t i = 0; i <= old->mask; ++i) live += old->slots[i].value.load(std::memory_order_relaxed) != T{};
    size_t capacity = 64;
    while (capacity < (live + 1) * 4) capacity *= 2;
    Table* t = newTable(capacity);
    for (size_t i = 0; i <= old->mask; ++i)
      if (T v = old->slots[i].value.load(std::memory_order_relaxed); v != T{})
        insert(t, old->slots[i].key.load(std::memory_order_relaxed), v);
    table_.store(t, std::memory_order_release);
    return t;
  }

  std::atomic<Table*> table_{nullptr};
  std::vector<std::unique_ptr<Table>> tables_;  // every table made, the current one last
};

template <class V>
using HandleIndex = HandleMap<V*>;

}  // namespace gtap::ze
