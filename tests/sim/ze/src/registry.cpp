// Handle registry: the only place that turns a handle back into an object.
#include "common.h"

#include <cstring>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>
#include <vector>

namespace sim {

std::atomic<bool> g_initialized{false};

namespace {

struct Registry {
  std::shared_mutex mutex;
  std::unordered_map<const void*, std::shared_ptr<Object>> objects;
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
    if (obj->kind == Kind::Driver || obj->kind == Kind::Device) {
      fresh->objects.emplace(handle, obj);
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
}

std::shared_ptr<Object> findObject(const void* handle, Kind kind) {
  auto& r = registry();
  std::shared_lock lock(r.mutex);
  auto it = r.objects.find(handle);
  if (it == r.objects.end() || it->second->kind != kind) return nullptr;
  return it->second;
}

std::shared_ptr<Object> unregisterObject(const void* handle, Kind kind) {
  auto& r = registry();
  std::unique_lock lock(r.mutex);
  auto it = r.objects.find(handle);
  if (it == r.objects.end() || it->second->kind != kind) return nullptr;
  auto obj = std::move(it->second);
  r.objects.erase(it);
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
