// Event pools and events.
#include "api.h"
#include "clock.h"
#include "commands.h"
#include "sync.h"

#include <algorithm>
#include <cstring>
#include <thread>

namespace sim {

namespace events {

namespace {
// A device writes an event's memory and wakes no host thread unless one waits
// on that event: a signal wakes the waiters only when the event has some (a
// host synchronising on it, a queue waiting on it before a command).
// Guarded by sync::mutex().
struct EventWaiter {
  explicit EventWaiter(Event& e) : event(e) { ++event.waiters; }
  ~EventWaiter() { --event.waiters; }
  Event& event;
};

// A writer of the event's memory makes the sequence count odd; two writers
// at once (a program resetting an event the device is signalling, which the
// specification forbids) take turns.
void beginWrite(Event& e) {
  uint64_t s = e.memorySeq.load(std::memory_order_relaxed);
  for (;;) {
    if (!(s & 1) && e.memorySeq.compare_exchange_weak(s, s + 1, std::memory_order_acquire)) break;
    if (s & 1) {
      std::this_thread::yield();
      s = e.memorySeq.load(std::memory_order_relaxed);
    }
  }
  std::atomic_thread_fence(std::memory_order_release);
}

void endWrite(Event& e) { e.memorySeq.fetch_add(1, std::memory_order_release); }

void writeTimestamp(Event& e, const ze_kernel_timestamp_result_t& t) {
  e.timestamp[0].store(t.global.kernelStart, std::memory_order_relaxed);
  e.timestamp[1].store(t.global.kernelEnd, std::memory_order_relaxed);
  e.timestamp[2].store(t.context.kernelStart, std::memory_order_relaxed);
  e.timestamp[3].store(t.context.kernelEnd, std::memory_order_relaxed);
}

// What the event's memory holds, read as the host reads it: without a lock.
// False when `needSignaled` and it is not signaled, or it has no timestamp.
bool readMemory(Event& e, bool needSignaled, ze_kernel_timestamp_result_t* out) {
  for (;;) {
    uint64_t before = e.memorySeq.load(std::memory_order_acquire);
    if (before & 1) {
      std::this_thread::yield();
      continue;
    }
    bool sig = e.signaled.load(std::memory_order_relaxed);
    bool has = e.hasTimestamp.load(std::memory_order_relaxed);
    ze_kernel_timestamp_result_t t{};
    t.global.kernelStart = e.timestamp[0].load(std::memory_order_relaxed);
    t.global.kernelEnd = e.timestamp[1].load(std::memory_order_relaxed);
    t.context.kernelStart = e.timestamp[2].load(std::memory_order_relaxed);
    t.context.kernelEnd = e.timestamp[3].load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (e.memorySeq.load(std::memory_order_relaxed) != before) continue;
    if ((needSignaled && !sig) || !has) return false;
    *out = t;
    return true;
  }
}
}  // namespace

void signal(Event& e, uint64_t startTicks, uint64_t endTicks, uint64_t arm) {
  std::lock_guard lock(sync::mutex());
  // A call writes its timestamps into the event's memory when it ends, also
  // when a later call has armed the event again meanwhile (the device does not
  // know); only an earlier arm finishing after a later one (on another list)
  // leaves the later one's in place.
  bool write = arm == 0 || arm >= e.lastWrittenArm;
  beginWrite(e);
  if (write && e.pool->timestamps()) {
    ze_kernel_timestamp_data_t data{clock::kernelTicks(startTicks), clock::kernelTicks(endTicks)};
    // One context per device here, so the context counter equals the global one.
    writeTimestamp(e, ze_kernel_timestamp_result_t{data, data});
    e.hasTimestamp = true;
  }
  if (arm != 0) {
    std::erase(e.outstanding, arm);
    if (write) e.lastWrittenArm = arm;
    // Signaled only once its latest call has ended.
    if (arm == e.armed) e.signaled = true;
  } else {
    e.signaled = true;
  }
  endWrite(e);
  if (e.waiters != 0) sync::notifyAll();
}

void reset(Event& e) {
  // A memory write, as on hardware: nobody waits for an event to be reset.
  beginWrite(e);
  e.signaled = false;
  e.hasTimestamp = false;
  writeTimestamp(e, {});
  endWrite(e);
}

Arms armLocked(const Command& c) {
  Arms arms;
  arms.waits.reserve(c.waits.size());
  for (const auto& e : c.waits) arms.waits.push_back(e->pool->counterBased ? e->armed : 0);
  if (c.signal && c.signal->pool->counterBased) {
    Event& e = *c.signal;
    arms.signal = ++e.armed;
    e.outstanding.push_back(arms.signal);
    // The host sees the new arm at once; the device's copy of the timestamps
    // still holds the previous call's until the new one ends.
    e.signaled = false;
  }
  return arms;
}

namespace {
bool allDone(const std::vector<std::shared_ptr<Event>>& list, const std::vector<uint64_t>* targets) {
  for (size_t i = 0; i < list.size(); ++i) {
    const Event& e = *list[i];
    uint64_t target = targets != nullptr && i < targets->size() ? (*targets)[i] : 0;
    bool done = target != 0 ? std::find(e.outstanding.begin(), e.outstanding.end(), target) == e.outstanding.end()
                            : e.signaled.load();
    if (!done) return false;
  }
  return true;
}
}  // namespace

void waitAll(const std::vector<std::shared_ptr<Event>>& list, const std::vector<uint64_t>* targets,
             const bool* abandon) {
  if (list.empty()) return;
  std::unique_lock lock(sync::mutex());
  for (const auto& e : list) ++e->waiters;
  sync::cv().wait(lock, [&] { return (abandon != nullptr && *abandon) || allDone(list, targets); });
  for (const auto& e : list) --e->waiters;
}

bool ready(const std::vector<std::shared_ptr<Event>>& list, const std::vector<uint64_t>* targets) {
  if (list.empty()) return true;
  std::lock_guard lock(sync::mutex());
  return allDone(list, targets);
}

bool readTimestamp(Event& e, ze_kernel_timestamp_result_t* out) { return readMemory(e, true, out); }

bool deviceTimestamp(Event& e, ze_kernel_timestamp_result_t* out) { return readMemory(e, false, out); }

}  // namespace events

ze_result_t zeEventPoolCreate(ze_context_handle_t hContext, const ze_event_pool_desc_t* desc, uint32_t numDevices,
                              ze_device_handle_t* phDevices, ze_event_pool_handle_t* phEventPool) {
  SIM_LOOKUP(context, Context, hContext);
  SIM_NOT_NULL(desc);
  SIM_NOT_NULL(phEventPool);
  SIM_CHECK(desc->flags <= 0x7, ZE_RESULT_ERROR_INVALID_ENUMERATION);
  SIM_CHECK(desc->count != 0, ZE_RESULT_ERROR_INVALID_SIZE);
  SIM_CHECK(!(phDevices == nullptr && numDevices > 0), ZE_RESULT_ERROR_INVALID_SIZE);
  for (uint32_t i = 0; i < numDevices; ++i) {
    SIM_LOOKUP(device, Device, phDevices[i]);
  }
  // ze_event_pool_flag_t: timestamps "cannot be combined with IPC".
  SIM_CHECK(!((desc->flags & ZE_EVENT_POOL_FLAG_IPC) && (desc->flags & ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP)),
            ZE_RESULT_ERROR_INVALID_ARGUMENT);
  uint32_t counterBased = 0;
#ifdef GTAP_SIM_HAS_COUNTER_BASED_EVENTS
  for (auto* ext = static_cast<const ze_base_desc_t*>(desc->pNext); ext != nullptr;
       ext = static_cast<const ze_base_desc_t*>(ext->pNext)) {
    if (ext->stype != ZE_STRUCTURE_TYPE_COUNTER_BASED_EVENT_POOL_EXP_DESC) continue;
    auto* cb = reinterpret_cast<const ze_event_pool_counter_based_exp_desc_t*>(ext);
    constexpr uint32_t kKnown =
        ZE_EVENT_POOL_COUNTER_BASED_EXP_FLAG_IMMEDIATE | ZE_EVENT_POOL_COUNTER_BASED_EXP_FLAG_NON_IMMEDIATE;
    SIM_CHECK((cb->flags & ~kKnown) == 0, ZE_RESULT_ERROR_INVALID_ENUMERATION);
    // 0 is the default: immediate lists only.
    counterBased = cb->flags != 0 ? cb->flags : uint32_t{ZE_EVENT_POOL_COUNTER_BASED_EXP_FLAG_IMMEDIATE};
  }
  // Counter-based events live in one process: IPC pools cannot be counter-based here.
  SIM_CHECK(!(counterBased && (desc->flags & ZE_EVENT_POOL_FLAG_IPC)), ZE_RESULT_ERROR_INVALID_ARGUMENT);
#endif
  *phEventPool =
      toHandle<ze_event_pool_handle_t>(makeObject<EventPool>(desc->flags, desc->count, counterBased));
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeEventPoolDestroy(ze_event_pool_handle_t hEventPool) {
  std::shared_ptr<EventPool> pool;
  // Events still alive keep their pool; destroying it only drops the handle.
  return take(hEventPool, pool);
}

ze_result_t zeEventCreate(ze_event_pool_handle_t hEventPool, const ze_event_desc_t* desc, ze_event_handle_t* phEvent) {
  SIM_LOOKUP(pool, EventPool, hEventPool);
  SIM_NOT_NULL(desc);
  SIM_NOT_NULL(phEvent);
  SIM_CHECK(desc->signal <= 0x7 && desc->wait <= 0x7, ZE_RESULT_ERROR_INVALID_ENUMERATION);
  {
    std::lock_guard lock(pool->mutex);
    SIM_CHECK(desc->index < pool->slotUsed.size(), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    // The specification makes reusing a live slot the program's error; saying
    // so beats two events silently sharing state.
    SIM_CHECK(!pool->slotUsed[desc->index], ZE_RESULT_ERROR_INVALID_ARGUMENT);
    pool->slotUsed[desc->index] = true;
  }
  *phEvent = toHandle<ze_event_handle_t>(makeObject<Event>(pool, desc->index));
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeEventDestroy(ze_event_handle_t hEvent) {
  std::shared_ptr<Event> event;
  if (ze_result_t r = take(hEvent, event); r != ZE_RESULT_SUCCESS) return r;
  std::lock_guard lock(event->pool->mutex);
  event->pool->slotUsed[event->index] = false;
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeEventHostSignal(ze_event_handle_t hEvent) {
  SIM_LOOKUP(event, Event, hEvent);
  // Counter-based events are signaled by the device only (extension's restrictions).
  SIM_CHECK(!event->pool->counterBased, ZE_RESULT_ERROR_INVALID_ARGUMENT);
  uint64_t now = clock::nowTicks();
  events::signal(*event, now, now);
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeEventHostSynchronize(ze_event_handle_t hEvent, uint64_t timeout) {
  SIM_LOOKUP(event, Event, hEvent);
  std::unique_lock lock(sync::mutex());
  events::EventWaiter waiting(*event);
  return sync::waitFor(lock, timeout, [&] { return event->signaled.load(); });
}

ze_result_t zeEventQueryStatus(ze_event_handle_t hEvent) {
  SIM_LOOKUP(event, Event, hEvent);
  // A read of the event's memory.
  return event->signaled.load(std::memory_order_acquire) ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
}

ze_result_t zeEventHostReset(ze_event_handle_t hEvent) {
  SIM_LOOKUP(event, Event, hEvent);
  SIM_CHECK(!event->pool->counterBased, ZE_RESULT_ERROR_INVALID_ARGUMENT);  // never reset, only re-armed
  events::reset(*event);
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeEventQueryKernelTimestamp(ze_event_handle_t hEvent, ze_kernel_timestamp_result_t* dstptr) {
  SIM_LOOKUP(event, Event, hEvent);
  SIM_NOT_NULL(dstptr);
  SIM_CHECK(event->pool->timestamps(), ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT);
  // Not signaled yet: NOT_READY and the destination left untouched.
  return events::readTimestamp(*event, dstptr) ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
}

ze_result_t zeEventQueryTimestampsExp(ze_event_handle_t hEvent, ze_device_handle_t hDevice, uint32_t* pCount,
                                      ze_kernel_timestamp_result_t* pTimestamps) {
  SIM_LOOKUP(event, Event, hEvent);
  SIM_LOOKUP(device, Device, hDevice);
  SIM_NOT_NULL(pCount);
  SIM_CHECK(event->pool->timestamps(), ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT);
  // No sub-devices: the root device's single timestamp.
  if (*pCount == 0 || pTimestamps == nullptr) {
    *pCount = 1;
    return ZE_RESULT_SUCCESS;
  }
  if (!events::readTimestamp(*event, pTimestamps)) return ZE_RESULT_NOT_READY;
  *pCount = 1;
  return ZE_RESULT_SUCCESS;
}

}  // namespace sim
