// The entries that take a callback of the program's: iterations, allocators
// the runtime calls during the call, and callbacks it keeps for later.
//
// The program's callbacks: a wrapper's guard bit stays set while the runtime
// runs, so a callback the runtime invokes from inside the call would have
// every call it makes taken for the runtime's own. Yet the callback is the
// program's code: a call made there is the program's (agents, pools and ISAs
// are discovered, queues created and memory allocated in iteration callbacks;
// see rocm_bandwidth_test and HIP's runtime). So every function that takes a
// callback hands the runtime gtap's relay instead, which runs the program's
// callback with the program's guard restored:
// - called during the call, on the calling thread (the iterations, allocators
//   of hsa_amd_pointer_info and hsa_code_object_serialize): the guard the
//   thread had when the program made the call (which keeps a callback of the
//   runtime's own nested call the runtime's);
// - kept and called later, maybe from inside another call (deallocation
//   callbacks run inside the free, a program's intercept handler inside its
//   doorbell store, the runtime-queue notifier inside whatever made the
//   queue): the thread's guard without the HSA bit.
// Not relayed: asynchronous signal handlers, hsa_amd_async_function, system
// event handlers and queue error callbacks, which ROCr runs on its own event
// thread (runtime.cpp AsyncEventsLoop; amd_aql_queue.cpp's error handlers are
// async signal handlers), where no HSA call of gtap's is in progress: what
// they call is recorded as the program's already.
#include <map>
#include <mutex>
#include <tuple>
#include <type_traits>
#include <vector>

#include "hook.h"

namespace gtap::hsa::hooks {

namespace {

// Sets the calling thread's guard for a callback of the program's and puts
// the runtime's back after it, however the callback leaves.
class ProgramGuard {
 public:
  explicit ProgramGuard(uint8_t guard) : saved_(core::t_guard) { core::t_guard = guard; }
  ~ProgramGuard() { core::t_guard = saved_; }
  ProgramGuard(const ProgramGuard&) = delete;
  ProgramGuard& operator=(const ProgramGuard&) = delete;

 private:
  uint8_t saved_;
};

// The program's side of a guard for a callback kept for later.
uint8_t laterGuard() { return static_cast<uint8_t>(core::t_guard & ~core::kGuardHsa); }

// A callback of the program's and its data, as gtap's relay passes them on.
template <typename F>
struct Relay {
  F fn;
  void* data;
  uint8_t guard;  // during the call: the call's outer guard
};

// The relay for a callback whose last parameter is the program's data.
template <typename F>
struct LastDataRelay;
template <typename R, typename... P>
struct LastDataRelay<R (*)(P...)> {
  static R call(P... p) {
    auto args = std::forward_as_tuple(p...);
    auto& data = std::get<sizeof...(P) - 1>(args);
    static_assert(std::is_same_v<std::remove_reference_t<decltype(data)>, void*>);
    auto* r = static_cast<Relay<R (*)(P...)>*>(data);
    data = r->data;
    ProgramGuard guard(r->guard);
    return std::apply(r->fn, args);
  }
};

// Calls the runtime's iteration `real(args..., callback, data)` with gtap's
// relay in place of the program's callback.
template <typename Real, typename F, typename... Args>
hsa_status_t iterate(Real& real, const Call& call, F callback, void* data, Args... args) {
  if (!callback) return real(args..., callback, data);
  Relay<F> r{callback, data, call.outerGuard()};
  return real(args..., &LastDataRelay<F>::call, &r);
}

}  // namespace

// --- iterations: the program's callback runs during the call ---

GTAP_HSA_HOOK(hsa_iterate_agents, (hsa_status_t (*callback)(hsa_agent_t, void*), void* data), (callback, data)) {
  return iterate(real, call, callback, data);
}

GTAP_HSA_HOOK(hsa_agent_iterate_regions,
              (hsa_agent_t agent, hsa_status_t (*callback)(hsa_region_t, void*), void* data),
              (agent, callback, data)) {
  return iterate(real, call, callback, data, agent);
}

GTAP_HSA_HOOK(hsa_agent_iterate_caches,
              (hsa_agent_t agent, hsa_status_t (*callback)(hsa_cache_t, void*), void* data),
              (agent, callback, data)) {
  return iterate(real, call, callback, data, agent);
}

GTAP_HSA_HOOK(hsa_agent_iterate_isas, (hsa_agent_t agent, hsa_status_t (*callback)(hsa_isa_t, void*), void* data),
              (agent, callback, data)) {
  return iterate(real, call, callback, data, agent);
}

GTAP_HSA_HOOK(hsa_isa_iterate_wavefronts,
              (hsa_isa_t isa, hsa_status_t (*callback)(hsa_wavefront_t, void*), void* data),
              (isa, callback, data)) {
  return iterate(real, call, callback, data, isa);
}

GTAP_HSA_HOOK(hsa_executable_iterate_symbols,
              (hsa_executable_t executable,
               hsa_status_t (*callback)(hsa_executable_t, hsa_executable_symbol_t, void*), void* data),
              (executable, callback, data)) {
  return iterate(real, call, callback, data, executable);
}

GTAP_HSA_HOOK(hsa_executable_iterate_agent_symbols,
              (hsa_executable_t executable, hsa_agent_t agent,
               hsa_status_t (*callback)(hsa_executable_t, hsa_agent_t, hsa_executable_symbol_t, void*), void* data),
              (executable, agent, callback, data)) {
  return iterate(real, call, callback, data, executable, agent);
}

GTAP_HSA_HOOK(hsa_executable_iterate_program_symbols,
              (hsa_executable_t executable,
               hsa_status_t (*callback)(hsa_executable_t, hsa_executable_symbol_t, void*), void* data),
              (executable, callback, data)) {
  return iterate(real, call, callback, data, executable);
}

GTAP_HSA_HOOK(hsa_code_object_iterate_symbols,
              (hsa_code_object_t object, hsa_status_t (*callback)(hsa_code_object_t, hsa_code_symbol_t, void*),
               void* data),
              (object, callback, data)) {
  return iterate(real, call, callback, data, object);
}

GTAP_HSA_HOOK(hsa_amd_agent_iterate_memory_pools,
              (hsa_agent_t agent, hsa_status_t (*callback)(hsa_amd_memory_pool_t, void*), void* data),
              (agent, callback, data)) {
  return iterate(real, call, callback, data, agent);
}

// --- allocators the runtime calls during the call ---

namespace {

using SerializeAlloc = hsa_status_t (*)(size_t, hsa_callback_data_t, void**);

hsa_status_t serializeAllocRelay(size_t size, hsa_callback_data_t data, void** address) {
  auto* r = reinterpret_cast<Relay<SerializeAlloc>*>(static_cast<uintptr_t>(data.handle));
  ProgramGuard guard(r->guard);
  return r->fn(size, hsa_callback_data_t{reinterpret_cast<uint64_t>(r->data)}, address);
}

// hsa_amd_pointer_info's allocator takes no data: the relay finds the
// program's on its thread (the runtime calls it before returning).
using PointerInfoAlloc = void* (*)(size_t);
__thread const Relay<PointerInfoAlloc>* t_pointerInfoAlloc __attribute__((tls_model("initial-exec"))) = nullptr;

void* pointerInfoAllocRelay(size_t size) {
  const Relay<PointerInfoAlloc>* r = t_pointerInfoAlloc;
  ProgramGuard guard(r->guard);
  return r->fn(size);
}

}  // namespace

GTAP_HSA_HOOK(hsa_code_object_serialize,
              (hsa_code_object_t object, SerializeAlloc alloc, hsa_callback_data_t data, const char* options,
               void** serialized, size_t* size),
              (object, alloc, data, options, serialized, size)) {
  if (!alloc) return real(object, alloc, data, options, serialized, size);
  Relay<SerializeAlloc> r{alloc, reinterpret_cast<void*>(data.handle), call.outerGuard()};
  return real(object, &serializeAllocRelay, hsa_callback_data_t{reinterpret_cast<uint64_t>(&r)}, options, serialized,
              size);
}

GTAP_HSA_HOOK(hsa_amd_pointer_info,
              (const void* ptr, hsa_amd_pointer_info_t* info, PointerInfoAlloc alloc, uint32_t* count,
               hsa_agent_t** accessible),
              (ptr, info, alloc, count, accessible)) {
  if (!alloc) return real(ptr, info, alloc, count, accessible);
  Relay<PointerInfoAlloc> r{alloc, nullptr, call.outerGuard()};
  const Relay<PointerInfoAlloc>* outer = t_pointerInfoAlloc;  // a pointer_info call made by the allocator
  t_pointerInfoAlloc = &r;
  hsa_status_t s = real(ptr, info, &pointerInfoAllocRelay, count, accessible);
  t_pointerInfoAlloc = outer;
  return s;
}

// --- callbacks kept for later ---

namespace {

// Deallocation callbacks run inside the free that releases the memory. The
// runtime tells registrations apart by (pointer, callback) only and forgets
// them at the free; gtap's relays are one function, so gtap keeps the
// program's callbacks per pointer itself.
struct DeallocationRelay {
  hsa_amd_deallocation_callback_t fn;
  void* data;
};
std::mutex g_deallocationMutex;
std::multimap<void*, DeallocationRelay*>& deallocationRelays() {
  static auto* m = new std::multimap<void*, DeallocationRelay*>;  // lives until the process ends
  return *m;
}

void deallocationRelay(void* ptr, void* data) {
  auto* r = static_cast<DeallocationRelay*>(data);
  {
    std::lock_guard<std::mutex> lock(g_deallocationMutex);
    auto [from, to] = deallocationRelays().equal_range(ptr);
    for (auto it = from; it != to; ++it)
      if (it->second == r) {
        deallocationRelays().erase(it);
        break;
      }
  }
  {
    ProgramGuard guard(laterGuard());
    r->fn(ptr, r->data);
  }
  delete r;
}

// A program's intercept handler runs inside the doorbell store that
// published its packets; the runtime-queue notifier inside whatever call
// made the runtime create a queue. Both stay registered for the process's
// life (no call takes them back), and so do their relays.
struct InterceptRelay {
  hsa_amd_queue_intercept_handler fn;
  void* data;
};

void interceptRelay(const void* packets, uint64_t count, uint64_t index, void* data,
                    hsa_amd_queue_intercept_packet_writer writer) {
  auto* r = static_cast<InterceptRelay*>(data);
  ProgramGuard guard(laterGuard());
  r->fn(packets, count, index, r->data, writer);
}

struct QueueNotifierRelay {
  hsa_amd_runtime_queue_notifier fn;
  void* data;
};

void queueNotifierRelay(const hsa_queue_t* queue, hsa_agent_t agent, void* data) {
  auto* r = static_cast<QueueNotifierRelay*>(data);
  ProgramGuard guard(laterGuard());
  r->fn(queue, agent, r->data);
}

}  // namespace

GTAP_HSA_HOOK(hsa_amd_register_deallocation_callback,
              (void* ptr, hsa_amd_deallocation_callback_t callback, void* data), (ptr, callback, data)) {
  if (!callback || !call.program()) return real(ptr, callback, data);
  auto* r = new DeallocationRelay{callback, data};
  std::lock_guard<std::mutex> lock(g_deallocationMutex);
  hsa_status_t s = real(ptr, &deallocationRelay, r);
  if (s == HSA_STATUS_SUCCESS)
    deallocationRelays().emplace(ptr, r);
  else
    delete r;
  return s;
}

GTAP_HSA_HOOK(hsa_amd_deregister_deallocation_callback, (void* ptr, hsa_amd_deallocation_callback_t callback),
              (ptr, callback)) {
  if (!callback || !call.program()) return real(ptr, callback);
  std::lock_guard<std::mutex> lock(g_deallocationMutex);
  auto [from, to] = deallocationRelays().equal_range(ptr);
  std::vector<DeallocationRelay*> kept, dropped;
  for (auto it = from; it != to; ++it) (it->second->fn == callback ? dropped : kept).push_back(it->second);
  // Not one of gtap's: the runtime answers (an unknown pair is its error).
  if (dropped.empty()) return real(ptr, callback);
  // The runtime drops every relay of the pointer; those of the program's
  // other callbacks go back, in their order.
  hsa_status_t s = real(ptr, &deallocationRelay);
  if (s != HSA_STATUS_SUCCESS) return s;
  deallocationRelays().erase(ptr);
  for (DeallocationRelay* r : kept)
    if (GTAP_HSA_REAL(hsa_amd_register_deallocation_callback)(ptr, &deallocationRelay, r) == HSA_STATUS_SUCCESS)
      deallocationRelays().emplace(ptr, r);
    else
      delete r;
  for (DeallocationRelay* r : dropped) delete r;
  return s;
}

GTAP_HSA_HOOK(hsa_amd_queue_intercept_register,
              (hsa_queue_t* queue, hsa_amd_queue_intercept_handler handler, void* data), (queue, handler, data)) {
  if (!handler || !call.program()) return real(queue, handler, data);
  auto* r = new InterceptRelay{handler, data};
  hsa_status_t s = real(queue, &interceptRelay, r);
  if (s != HSA_STATUS_SUCCESS) delete r;
  return s;
}

GTAP_HSA_HOOK(hsa_amd_runtime_queue_create_register, (hsa_amd_runtime_queue_notifier callback, void* data),
              (callback, data)) {
  if (!callback || !call.program()) return real(callback, data);
  auto* r = new QueueNotifierRelay{callback, data};
  hsa_status_t s = real(&queueNotifierRelay, r);
  if (s != HSA_STATUS_SUCCESS) delete r;
  return s;
}

}  // namespace gtap::hsa::hooks
