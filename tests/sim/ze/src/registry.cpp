// Handle registry: the only place that turns a handle back into an object.
#include "common.h"

#include <atomic>
#include <cstring>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>
#include <vector>

namespace sim {

std::atomic<bool> g_initialized{false};

namespace {

// Handles are looked up on every call, often from several threads: lookups
// take no lock, as a driver that casts its handles takes none. The map owns
// the objects and changes under the mutex; `index` is a copy of its keys that
// readers probe without it (open addressing over atomic slots; a removed
// handle keeps its key with a null value, and a full table is replaced by a
// larger one, the old one being kept for readers still probing it).
struct Index {
  struct Slot {
    std::atomic<const void*> key{nullptr};
    std::atomic<Object*> value{nullptr};
  };
  size_t mask;
  size_t used = 0;
  std::unique_ptr<Slot[]> slots;
  explicit Index(size_t capacity) : mask(capacity - 1), slots(std::make_unique<Slot[]>(capacity)) {}
};

size_t hashOf(const void* p) {
  uint64_t x = reinterpret_cast<uintptr_t>(p);
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return static_cast<size_t>(x);
}

struct Registry {
  std::shared_mutex mutex;
  std::unordered_map<const void*, std::shared_ptr<Object>> objects;
  std::atomic<Index*> index{nullptr};
  std::vector<std::unique_ptr<Index>> indexes;  // every one made, the current one last

  Registry() { index.store(newIndex(256)); }
  Index* newIndex(size_t capacity) {
    indexes.push_back(std::make_unique<Index>(capacity));
    return indexes.back().get();
  }
  static Index::Slot* slotOf(Index* t, const void* key) {
    for (size_t i = hashOf(key) & t->mask;; i = (i + 1) & t->mask) {
      const void* k = t->slots[i].key.load(std::memory_order_relaxed);
      if (k == key) return &t->slots[i];
      if (!k) return nullptr;
    }
  }
  static void insert(Index* t, const void* key, Object* value) {
    for (size_t i = hashOf(key) & t->mask;; i = (i + 1) & t->mask) {
      if (t->slots[i].key.load(std::memory_order_relaxed)) continue;
      t->slots[i].value.store(value, std::memory_order_relaxed);
      t->slots[i].key.store(key, std::memory_order_release);
      ++t->used;
      return;
    }
  }
  // Writers hold `mutex` exclusively.
  void put(const void* key, Object* value) {
    Index* t = index.load(std::memory_order_relaxed);
    if (Index::Slot* s = slotOf(t, key)) {
      s->value.store(value, std::memory_order_release);
      return;
    }
    if ((t->used + 1) * 2 > t->mask + 1) {
      size_t capacity = 256;
      while (capacity < (objects.size() + 1) * 4) capacity *= 2;
      Index* bigger = newIndex(capacity);
      for (auto& [k, obj] : objects)
        if (k != key) insert(bigger, k, obj.get());
      index.store(bigger, std::memory_order_release);
      t = bigger;
    }
    insert(t, key, value);
  }
  void remove(const void* key) {
    if (Index::Slot* s = slotOf(index.load(std::memory_order_relaxed), key)) s->value.store(nullptr, std::memory_order_release);
  }
  Object* find(const void* key) const {
    const Index* t = index.load(std::memory_order_acquire);
    for (size_t i = hashOf(key) & t->mask;; i = (i + 1) & t->mask) {
      const void* k = t->slots[i].key.load(std::memory_order_acquire);
      if (k == key) return t->slots[i].value.load(std::memory_order_acquire);
      if (!k) return nullptr;
    }
  }
};

// Never destroyed: worker threads may still look objects up while the process
// runs its exit handlers, after static destructors would have run.
Registry*& registrySlot() {
  static Registry* r = new Registry;
  return r;
}

Registry& registry() { return *registrySlot(); }

}  // namespace

void registryForkPrepare() { registry().mutex.lock(); }
void registryForkParent() { registry().mutex.unlock(); }

void registryForkChild() {
  // The lock cannot be released here: glibc's rwlock remembers the thread id
  // of its writer, which is different in the child. A fresh registry takes
  // over; the old one stays locked and unused.
  Registry* old = registrySlot();
  auto* fresh = new Registry;
  // Objects of the parent cannot work here (their worker threads did not
  // survive the fork) and the specification makes the child start again from
  // zeInit, so they stop being valid handles. They are kept, not destroyed:
  // destroying a queue would join a thread that does not exist.
  static auto* graveyard = new std::vector<std::shared_ptr<Object>>;
  for (auto& [handle, obj] : old->objects) {
    // The device's metric groups and metrics are part of the device.
    if (obj->kind == Kind::Driver || obj->kind == Kind::Device || obj->kind == Kind::MetricGroup ||
        obj->kind == Kind::Metric) {
      fresh->objects.emplace(handle, obj);
      fresh->put(handle, obj.get());
    } else {
      graveyard->push_back(obj);
    }
  }
  registrySlot() = fresh;
}

void registerObject(const std::shared_ptr<Object>& obj) {
  auto& r = registry();
  std::unique_lock lock(r.mutex);
  r.objects[static_cast<const void*>(obj.get())] = obj;
  r.put(obj.get(), obj.get());
}

std::shared_ptr<Object> findObject(const void* handle, Kind kind) {
  // The program may not destroy a handle while another thread uses it, so
  // an object found here is alive; a destroyed one is no longer found.
  Object* obj = registry().find(handle);
  if (!obj || obj->kind != kind) return nullptr;
  return obj->weak_from_this().lock();
}

std::shared_ptr<Object> unregisterObject(const void* handle, Kind kind) {
  auto& r = registry();
  std::unique_lock lock(r.mutex);
  auto it = r.objects.find(handle);
  if (it == r.objects.end() || it->second->kind != kind) return nullptr;
  auto obj = std::move(it->second);
  r.objects.erase(it);
  r.remove(handle);
  return obj;
}

void copyStringOut(const char* text, size_t* pSize, char* out) {
  size_t needed = std::strlen(text) + 1;
  if (out == nullptr || *pSize == 0) {
    *pSize = needed;
    return;
  }
  size_t n = *pSize < needed ? *pSize : needed;
  std::memcpy(out, text, n - 1);
  out[n - 1] = '\0';
  *pSize = n;
}

}  // namespace sim
