// Signals: creation, value operations, waits (hsa_signal_*, hsa_amd_signal_*
// except asynchronous handlers) and signal groups.
#include "signal.h"

#include "agent.h"
#include "api.h"

#include <memory>
#include <mutex>
#include <new>
#include <set>
#include <vector>

namespace sim_hsa {

namespace {

constexpr uint32_t kLive = 0x5349474eu;  // "SIGN"
constexpr size_t kSlabSignals = 512;
constexpr size_t kMaxSlabs = 4096;       // 2M signals

// Slabs are appended, never removed: lookups read them without a lock.
Signal* g_slabs[kMaxSlabs];
std::atomic<size_t> g_slabCount{0};
std::mutex g_freeLock;
Signal* g_free = nullptr;

futex::Epoch g_anyChange;

void changed(Signal* s) {
  s->epoch.bump();
  g_anyChange.bump();
}

void warnInvalid(const char* what) {
  static std::once_flag once;
  std::call_once(once, [&] { warn("%s on an invalid signal handle (ignored; reported once)", what); });
}

std::atomic_ref<int64_t> valueOf(Signal* s) { return std::atomic_ref<int64_t>(s->value()); }

}  // namespace

Signal* toSignal(hsa_signal_t handle) {
  auto address = uintptr_t(handle.handle);
  if (address == 0) return nullptr;
  size_t count = g_slabCount.load(std::memory_order_acquire);
  for (size_t i = 0; i < count; ++i) {
    auto base = reinterpret_cast<uintptr_t>(g_slabs[i]);
    if (address < base || address >= base + kSlabSignals * sizeof(Signal)) continue;
    if ((address - base) % sizeof(Signal) != 0) return nullptr;
    auto* s = reinterpret_cast<Signal*>(address);
    return s->magic.load(std::memory_order_acquire) == kLive ? s : nullptr;
  }
  return nullptr;
}

Signal* newSignal(int64_t initial, bool runtime_owned) {
  std::lock_guard<std::mutex> lock(g_freeLock);
  if (g_free == nullptr) {
    size_t count = g_slabCount.load(std::memory_order_relaxed);
    if (count == kMaxSlabs) return nullptr;
    auto* slab = static_cast<Signal*>(::operator new[](kSlabSignals * sizeof(Signal),
                                                      std::align_val_t(alignof(Signal)), std::nothrow));
    if (slab == nullptr) return nullptr;
    for (size_t i = kSlabSignals; i-- > 0;) {
      Signal* s = new (&slab[i]) Signal();
      s->next_free = g_free;
      g_free = s;
    }
    g_slabs[count] = slab;
    g_slabCount.store(count + 1, std::memory_order_release);
  }
  Signal* s = g_free;
  g_free = s->next_free;
  s->next_free = nullptr;
  s->abi = amd_signal_t{};
  s->abi.kind = AMD_SIGNAL_KIND_USER;
  s->value() = initial;
  s->runtime_owned = runtime_owned;
  s->copy_agent.store(nullptr, std::memory_order_relaxed);
  s->listener.store(nullptr, std::memory_order_relaxed);
  s->magic.store(kLive, std::memory_order_release);
  return s;
}

void deleteSignal(Signal* s) {
  s->magic.store(0, std::memory_order_release);
  changed(s);  // waiters on a destroyed signal re-check and give up
  std::lock_guard<std::mutex> lock(g_freeLock);
  s->next_free = g_free;
  g_free = s;
}

void deleteAllSignals() {
  size_t count = g_slabCount.load(std::memory_order_acquire);
  for (size_t i = 0; i < count; ++i) {
    for (size_t j = 0; j < kSlabSignals; ++j) {
      Signal* s = &g_slabs[i][j];
      if (s->magic.load(std::memory_order_acquire) == kLive) deleteSignal(s);
    }
  }
}

futex::Epoch& anySignalChanged() { return g_anyChange; }

bool conditionHolds(hsa_signal_condition_t condition, int64_t value, int64_t compare) {
  switch (condition) {
    case HSA_SIGNAL_CONDITION_EQ: return value == compare;
    case HSA_SIGNAL_CONDITION_NE: return value != compare;
    case HSA_SIGNAL_CONDITION_LT: return value < compare;
    case HSA_SIGNAL_CONDITION_GTE: return value >= compare;
  }
  return true;  // an unknown condition must not wait forever
}

int64_t loadValue(Signal* s, std::memory_order order) { return valueOf(s).load(order); }

void storeValue(Signal* s, int64_t value, std::memory_order order) {
  valueOf(s).store(value, order);
  changed(s);
  if (DoorbellListener* l = s->listener.load(std::memory_order_acquire)) l->doorbellRung();
}

int64_t subtractValue(Signal* s, int64_t amount, std::memory_order order) {
  int64_t before = valueOf(s).fetch_sub(amount, order);
  changed(s);
  return before;
}

int64_t waitValue(Signal* s, hsa_signal_condition_t condition, int64_t compare, uint64_t timeout_ns,
                  hsa_wait_state_t state, std::memory_order order) {
  int64_t seen = 0;
  auto ready = [&] {
    seen = valueOf(s).load(order);
    // A signal destroyed while waited on ends the wait.
    return conditionHolds(condition, seen, compare) || s->magic.load(std::memory_order_relaxed) != kLive;
  };
  if (state == HSA_WAIT_STATE_ACTIVE) {
    // Spin briefly first: the caller asked to stay on the CPU.
    for (int i = 0; i < 2000; ++i) {
      if (ready()) return seen;
#if defined(__x86_64__)
      __builtin_ia32_pause();
#endif
    }
  }
  futex::waitUntil(s->epoch, timeout_ns, ready);
  return seen;
}

// --- The API ---------------------------------------------------------------

namespace {

hsa_status_t checkConsumers(uint32_t num_consumers, const hsa_agent_t* consumers) {
  SIM_CHECK(num_consumers == 0 || consumers != nullptr, HSA_STATUS_ERROR_INVALID_ARGUMENT);
  for (uint32_t i = 0; i < num_consumers; ++i) {
    SIM_CHECK(toAgent(consumers[i]) != nullptr, HSA_STATUS_ERROR_INVALID_AGENT);
    for (uint32_t j = 0; j < i; ++j) {
      SIM_CHECK(consumers[j].handle != consumers[i].handle, HSA_STATUS_ERROR_INVALID_ARGUMENT);
    }
  }
  return HSA_STATUS_SUCCESS;
}

}  // namespace

hsa_status_t hsa_signal_create(hsa_signal_value_t initial_value, uint32_t num_consumers,
                               const hsa_agent_t* consumers, hsa_signal_t* signal) {
  SIM_OPEN();
  SIM_NOT_NULL(signal);
  if (hsa_status_t r = checkConsumers(num_consumers, consumers); r != HSA_STATUS_SUCCESS) return r;
  Signal* s = newSignal(initial_value);
  SIM_CHECK(s != nullptr, HSA_STATUS_ERROR_OUT_OF_RESOURCES);
  *signal = toHandle(s);
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_amd_signal_create(hsa_signal_value_t initial_value, uint32_t num_consumers,
                                   const hsa_agent_t* consumers, uint64_t attributes, hsa_signal_t* signal) {
  SIM_OPEN();
  SIM_NOT_NULL(signal);
  if (hsa_status_t r = checkConsumers(num_consumers, consumers); r != HSA_STATUS_SUCCESS) return r;
  // Signals shared with other processes are not simulated.
  SIM_CHECK((attributes & HSA_AMD_SIGNAL_IPC) == 0, HSA_STATUS_ERROR);
  Signal* s = newSignal(initial_value);
  SIM_CHECK(s != nullptr, HSA_STATUS_ERROR_OUT_OF_RESOURCES);
  *signal = toHandle(s);
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_signal_destroy(hsa_signal_t signal) {
  SIM_OPEN();
  Signal* s = toSignal(signal);
  SIM_CHECK(s != nullptr && !s->runtime_owned, HSA_STATUS_ERROR_INVALID_SIGNAL);
  deleteSignal(s);
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_amd_signal_value_pointer(hsa_signal_t signal, volatile hsa_signal_value_t** value_ptr) {
  SIM_OPEN();
  Signal* s = toSignal(signal);
  SIM_CHECK(s != nullptr, HSA_STATUS_ERROR_INVALID_SIGNAL);
  SIM_NOT_NULL(value_ptr);
  *value_ptr = &s->abi.value;
  return HSA_STATUS_SUCCESS;
}

hsa_signal_value_t hsa_signal_load_relaxed(hsa_signal_t signal) {
  Signal* s = toSignal(signal);
  if (s == nullptr) return warnInvalid("hsa_signal_load"), 0;
  return loadValue(s, std::memory_order_relaxed);
}

hsa_signal_value_t hsa_signal_load_scacquire(hsa_signal_t signal) {
  Signal* s = toSignal(signal);
  if (s == nullptr) return warnInvalid("hsa_signal_load"), 0;
  return loadValue(s, std::memory_order_acquire);
}

#define GTAP_SIM_HSA_STORE(name, order)                           \
  void name(hsa_signal_t signal, hsa_signal_value_t value) {      \
    Signal* s = toSignal(signal);                                 \
    if (s == nullptr) return warnInvalid(#name);                  \
    storeValue(s, value, order);                                  \
  }
// A silent store need not wake waiters; waking them anyway is allowed and
// keeps one code path.
GTAP_SIM_HSA_STORE(hsa_signal_store_relaxed, std::memory_order_relaxed)
GTAP_SIM_HSA_STORE(hsa_signal_store_screlease, std::memory_order_release)
GTAP_SIM_HSA_STORE(hsa_signal_silent_store_relaxed, std::memory_order_relaxed)
GTAP_SIM_HSA_STORE(hsa_signal_silent_store_screlease, std::memory_order_release)
#undef GTAP_SIM_HSA_STORE

// Read-modify-write operations, in the four orders the API names.
namespace {

enum class Op { Add, Subtract, And, Or, Xor };

void modify(hsa_signal_t signal, int64_t value, Op op, std::memory_order order) {
  Signal* s = toSignal(signal);
  if (s == nullptr) return warnInvalid("hsa_signal_add/subtract/and/or/xor");
  auto v = valueOf(s);
  switch (op) {
    case Op::Add: v.fetch_add(value, order); break;
    case Op::Subtract: v.fetch_sub(value, order); break;
    case Op::And: v.fetch_and(value, order); break;
    case Op::Or: v.fetch_or(value, order); break;
    case Op::Xor: v.fetch_xor(value, order); break;
  }
  changed(s);
}

}  // namespace

#define GTAP_SIM_HSA_MODIFY(stem, op)                                                                             \
  void stem##_relaxed(hsa_signal_t s, hsa_signal_value_t v) { modify(s, v, op, std::memory_order_relaxed); }     \
  void stem##_scacquire(hsa_signal_t s, hsa_signal_value_t v) { modify(s, v, op, std::memory_order_acquire); }   \
  void stem##_screlease(hsa_signal_t s, hsa_signal_value_t v) { modify(s, v, op, std::memory_order_release); }   \
  void stem##_scacq_screl(hsa_signal_t s, hsa_signal_value_t v) { modify(s, v, op, std::memory_order_acq_rel); }
GTAP_SIM_HSA_MODIFY(hsa_signal_add, Op::Add)
GTAP_SIM_HSA_MODIFY(hsa_signal_subtract, Op::Subtract)
GTAP_SIM_HSA_MODIFY(hsa_signal_and, Op::And)
GTAP_SIM_HSA_MODIFY(hsa_signal_or, Op::Or)
GTAP_SIM_HSA_MODIFY(hsa_signal_xor, Op::Xor)
#undef GTAP_SIM_HSA_MODIFY

#define GTAP_SIM_HSA_EXCHANGE(name, order)                                   \
  hsa_signal_value_t name(hsa_signal_t signal, hsa_signal_value_t value) {   \
    Signal* s = toSignal(signal);                                            \
    if (s == nullptr) return warnInvalid(#name), 0;                          \
    int64_t before = valueOf(s).exchange(value, order);                      \
    changed(s);                                                              \
    return before;                                                           \
  }
GTAP_SIM_HSA_EXCHANGE(hsa_signal_exchange_relaxed, std::memory_order_relaxed)
GTAP_SIM_HSA_EXCHANGE(hsa_signal_exchange_scacquire, std::memory_order_acquire)
GTAP_SIM_HSA_EXCHANGE(hsa_signal_exchange_screlease, std::memory_order_release)
GTAP_SIM_HSA_EXCHANGE(hsa_signal_exchange_scacq_screl, std::memory_order_acq_rel)
#undef GTAP_SIM_HSA_EXCHANGE

#define GTAP_SIM_HSA_CAS(name, order, failure_order)                                                       \
  hsa_signal_value_t name(hsa_signal_t signal, hsa_signal_value_t expected, hsa_signal_value_t value) {    \
    Signal* s = toSignal(signal);                                                                          \
    if (s == nullptr) return warnInvalid(#name), 0;                                                        \
    int64_t observed = expected;                                                                           \
    if (valueOf(s).compare_exchange_strong(observed, value, order, failure_order)) changed(s);            \
    return observed;                                                                                       \
  }
GTAP_SIM_HSA_CAS(hsa_signal_cas_relaxed, std::memory_order_relaxed, std::memory_order_relaxed)
GTAP_SIM_HSA_CAS(hsa_signal_cas_scacquire, std::memory_order_acquire, std::memory_order_acquire)
GTAP_SIM_HSA_CAS(hsa_signal_cas_screlease, std::memory_order_release, std::memory_order_relaxed)
GTAP_SIM_HSA_CAS(hsa_signal_cas_scacq_screl, std::memory_order_acq_rel, std::memory_order_acquire)
#undef GTAP_SIM_HSA_CAS

// timeout_hint is in HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY ticks: nanoseconds.
hsa_signal_value_t hsa_signal_wait_relaxed(hsa_signal_t signal, hsa_signal_condition_t condition,
                                           hsa_signal_value_t compare_value, uint64_t timeout_hint,
                                           hsa_wait_state_t wait_state_hint) {
  Signal* s = toSignal(signal);
  if (s == nullptr) return warnInvalid("hsa_signal_wait"), 0;
  return waitValue(s, condition, compare_value, timeout_hint, wait_state_hint, std::memory_order_relaxed);
}

hsa_signal_value_t hsa_signal_wait_scacquire(hsa_signal_t signal, hsa_signal_condition_t condition,
                                             hsa_signal_value_t compare_value, uint64_t timeout_hint,
                                             hsa_wait_state_t wait_state_hint) {
  Signal* s = toSignal(signal);
  if (s == nullptr) return warnInvalid("hsa_signal_wait"), 0;
  return waitValue(s, condition, compare_value, timeout_hint, wait_state_hint, std::memory_order_acquire);
}

namespace {

// Index of the first satisfied pair, or UINT32_MAX after the timeout (ns).
uint32_t waitAny(uint32_t count, const hsa_signal_t* signals, const hsa_signal_condition_t* conditions,
                 const hsa_signal_value_t* values, uint64_t timeout_ns, std::memory_order order,
                 hsa_signal_value_t* satisfying) {
  std::vector<Signal*> resolved(count);
  for (uint32_t i = 0; i < count; ++i) resolved[i] = toSignal(signals[i]);
  uint32_t found = UINT32_MAX;
  auto ready = [&] {
    for (uint32_t i = 0; i < count; ++i) {
      if (resolved[i] == nullptr) continue;
      int64_t v = valueOf(resolved[i]).load(order);
      if (conditionHolds(conditions[i], v, values[i])) {
        found = i;
        if (satisfying != nullptr) *satisfying = v;
        return true;
      }
    }
    return false;
  };
  futex::waitUntil(anySignalChanged(), timeout_ns, ready);
  return found;
}

struct SignalGroup {
  std::vector<hsa_signal_t> signals;
};

std::mutex g_groupLock;
std::set<SignalGroup*> g_groups;

}  // namespace

uint32_t hsa_amd_signal_wait_any(uint32_t signal_count, hsa_signal_t* signals, hsa_signal_condition_t* conds,
                                 hsa_signal_value_t* values, uint64_t timeout_hint, hsa_wait_state_t wait_hint,
                                 hsa_signal_value_t* satisfying_value) {
  if (signal_count == 0 || signals == nullptr || conds == nullptr || values == nullptr) return UINT32_MAX;
  try {
    return waitAny(signal_count, signals, conds, values, timeout_hint, std::memory_order_relaxed,
                   satisfying_value);
  } catch (...) {
    return UINT32_MAX;
  }
}

hsa_status_t hsa_signal_group_create(uint32_t num_signals, const hsa_signal_t* signals, uint32_t num_consumers,
                                     const hsa_agent_t* consumers, hsa_signal_group_t* signal_group) {
  SIM_OPEN();
  SIM_CHECK(num_signals != 0 && signals != nullptr && signal_group != nullptr, HSA_STATUS_ERROR_INVALID_ARGUMENT);
  if (hsa_status_t r = checkConsumers(num_consumers, consumers); r != HSA_STATUS_SUCCESS) return r;
  SIM_TRY
  auto group = std::make_unique<SignalGroup>();
  for (uint32_t i = 0; i < num_signals; ++i) {
    SIM_CHECK(toSignal(signals[i]) != nullptr, HSA_STATUS_ERROR_INVALID_ARGUMENT);
    for (uint32_t j = 0; j < i; ++j) SIM_CHECK(signals[j].handle != signals[i].handle, HSA_STATUS_ERROR_INVALID_ARGUMENT);
    group->signals.push_back(signals[i]);
  }
  std::lock_guard<std::mutex> lock(g_groupLock);
  signal_group->handle = reinterpret_cast<uint64_t>(group.get());
  g_groups.insert(group.release());
  return HSA_STATUS_SUCCESS;
  SIM_CATCH
}

hsa_status_t hsa_signal_group_destroy(hsa_signal_group_t signal_group) {
  SIM_OPEN();
  auto* group = reinterpret_cast<SignalGroup*>(signal_group.handle);
  {
    std::lock_guard<std::mutex> lock(g_groupLock);
    SIM_CHECK(g_groups.erase(group) == 1, HSA_STATUS_ERROR_INVALID_SIGNAL_GROUP);
  }
  delete group;
  return HSA_STATUS_SUCCESS;
}

namespace {

hsa_status_t groupWait(hsa_signal_group_t signal_group, const hsa_signal_condition_t* conditions,
                       const hsa_signal_value_t* compare_values, hsa_signal_t* signal, hsa_signal_value_t* value,
                       std::memory_order order) {
  SIM_OPEN();
  SIM_CHECK(conditions != nullptr && compare_values != nullptr && signal != nullptr && value != nullptr,
            HSA_STATUS_ERROR_INVALID_ARGUMENT);
  SIM_TRY
  std::vector<hsa_signal_t> signals;
  {
    std::lock_guard<std::mutex> lock(g_groupLock);
    auto* group = reinterpret_cast<SignalGroup*>(signal_group.handle);
    SIM_CHECK(g_groups.count(group) == 1, HSA_STATUS_ERROR_INVALID_SIGNAL_GROUP);
    signals = group->signals;
  }
  uint32_t i = waitAny(uint32_t(signals.size()), signals.data(), conditions, compare_values, UINT64_MAX, order,
                       value);
  SIM_CHECK(i != UINT32_MAX, HSA_STATUS_ERROR);
  *signal = signals[i];
  return HSA_STATUS_SUCCESS;
  SIM_CATCH
}

}  // namespace

hsa_status_t hsa_signal_group_wait_any_scacquire(hsa_signal_group_t signal_group,
                                                 const hsa_signal_condition_t* conditions,
                                                 const hsa_signal_value_t* compare_values,
                                                 hsa_wait_state_t wait_state_hint, hsa_signal_t* signal,
                                                 hsa_signal_value_t* value) {
  return groupWait(signal_group, conditions, compare_values, signal, value, std::memory_order_acquire);
}

hsa_status_t hsa_signal_group_wait_any_relaxed(hsa_signal_group_t signal_group,
                                               const hsa_signal_condition_t* conditions,
                                               const hsa_signal_value_t* compare_values,
                                               hsa_wait_state_t wait_state_hint, hsa_signal_t* signal,
                                               hsa_signal_value_t* value) {
  return groupWait(signal_group, conditions, compare_values, signal, value, std::memory_order_relaxed);
}

}  // namespace sim_hsa
