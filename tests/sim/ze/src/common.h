// Object model shared by every part of the simulated Level Zero driver.
//
// Every handle the driver gives out is the address of an Object kept alive by
// a registry of shared pointers. Looking a handle up in the registry (instead
// of casting it) lets the driver answer ZE_RESULT_ERROR_INVALID_NULL_HANDLE for
// stale or foreign handles rather than crash, and lets work that is still
// queued keep the objects it uses alive after the program destroys them.
#pragma once

#include <ze_api.h>

#include <atomic>
#include <cstdint>
#include <memory>

namespace sim {

enum class Kind : uint32_t {
  Driver = 1,
  Device,
  Context,
  CommandQueue,
  CommandList,
  EventPool,
  Event,
  Fence,
  Module,
  Kernel,
  BuildLog,
  MetricGroup,
  Metric,
  MetricStreamer,
  MetricQueryPool,
  MetricQuery,
  EngineGroup,
  FrequencyDomain,
};

// Handles are looked up without a lock (registry.cpp): a lookup turns the
// object found back into an owner through its weak self-reference.
struct Object : std::enable_shared_from_this<Object> {
  explicit Object(Kind k) : kind(k) {}
  virtual ~Object() = default;
  Object(const Object&) = delete;
  Object& operator=(const Object&) = delete;
  const Kind kind;
};

// True once zeInit succeeded; every other entry point answers
// ZE_RESULT_ERROR_UNINITIALIZED before that, as the specification requires.
extern std::atomic<bool> g_initialized;

// Adds an object; its handle is its address.
void registerObject(const std::shared_ptr<Object>& obj);
// Finds a live object of the given kind; null when unknown.
std::shared_ptr<Object> findObject(const void* handle, Kind kind);
// Removes an object and returns it (null when unknown), so the caller can
// finish tearing it down outside the registry lock.
std::shared_ptr<Object> unregisterObject(const void* handle, Kind kind);

// Keeps the driver's global state consistent across fork() (see fork.cpp).
void registryForkPrepare();
void registryForkParent();
void registryForkChild();
void memoryForkPrepare();
void memoryForkParent();
void memoryForkChild();
void installForkHandlers();

template <class T>
ze_result_t lookup(const void* handle, std::shared_ptr<T>& out) {
  if (!g_initialized.load(std::memory_order_acquire)) return ZE_RESULT_ERROR_UNINITIALIZED;
  if (handle == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  auto obj = findObject(handle, T::kKind);
  if (!obj) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  out = std::static_pointer_cast<T>(obj);
  return ZE_RESULT_SUCCESS;
}

template <class T>
ze_result_t take(const void* handle, std::shared_ptr<T>& out) {
  if (!g_initialized.load(std::memory_order_acquire)) return ZE_RESULT_ERROR_UNINITIALIZED;
  if (handle == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  auto obj = unregisterObject(handle, T::kKind);
  if (!obj) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  out = std::static_pointer_cast<T>(obj);
  return ZE_RESULT_SUCCESS;
}

template <class Handle, class T>
Handle toHandle(const std::shared_ptr<T>& obj) {
  return reinterpret_cast<Handle>(static_cast<Object*>(obj.get()));
}

// Creates, registers and returns an object.
template <class T, class... Args>
std::shared_ptr<T> makeObject(Args&&... args) {
  auto obj = std::make_shared<T>(std::forward<Args>(args)...);
  registerObject(obj);
  return obj;
}

// The usual count query: with *pCount == 0 report how many there are,
// otherwise fill at most *pCount entries and report how many were written.
template <class Fill>
void countQuery(uint32_t available, uint32_t* pCount, bool wantsItems, Fill&& fill) {
  if (*pCount == 0 || !wantsItems) {
    *pCount = available;
    return;
  }
  uint32_t n = *pCount < available ? *pCount : available;
  for (uint32_t i = 0; i < n; ++i) fill(i);
  *pCount = n;
}

// Copies a string with the size-query convention of zeKernelGetName and
// friends: *pSize includes the terminating NUL.
void copyStringOut(const char* text, size_t* pSize, char* out);

}  // namespace sim

// Early-return helpers: keep each entry point a list of the checks the
// specification lists, in the order the validation layer applies them.
#define SIM_LOOKUP(var, Type, handle)                                          \
  std::shared_ptr<Type> var;                                                   \
  if (ze_result_t sim_r_ = ::sim::lookup<Type>((handle), var);                 \
      sim_r_ != ZE_RESULT_SUCCESS)                                             \
    return sim_r_;

#define SIM_CHECK(cond, code) \
  if (!(cond)) return (code);

#define SIM_NOT_NULL(ptr) SIM_CHECK((ptr) != nullptr, ZE_RESULT_ERROR_INVALID_NULL_POINTER)
