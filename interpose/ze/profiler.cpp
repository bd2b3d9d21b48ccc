#include "profiler.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <cstring>
#include <iterator>

#include "allocations.h"
#include "clock.h"
#include "counters.h"
#include "device_metrics.h"
#include "chunk_producer.h"
#include "functions.h"
#include "device_work.h"
#include "handle_index.h"
#include "real.h"
#include "sampler.h"
#include "session.h"
#include "profile_records.h"
#include "stack_table.h"

namespace gtap::ze {

// The program's threads append device work without a lock or an allocation:
// lists, kernels and events are found through lock-free indexes, op slots and
// gtap's timestamp events come from per-thread caches refilled in blocks, and
// submitted work goes onto a lock-free stack. Reading device times happens
// when the program synchronises, for everything submitted so far at once: one
// lock per synchronisation, and never a runtime call with gtap's lock held.

namespace {

constexpr uint32_t kEventsPerPool = 128;
constexpr uint32_t kSlotBlock = 256;      // op slots moved between a thread's cache and the shared pool at once
constexpr uint32_t kCacheEvents = 512;    // gtap events a thread keeps for its context
constexpr uint32_t kEventBlock = 128;     // events taken from the shared pool at once
constexpr int64_t kClockSampleIntervalNs = 50'000'000;
constexpr uint32_t kNoDevice = ~0u;
constexpr uint32_t kMaxDevices = 256;

enum ReadState : uint8_t { kNotReady = 0, kTimed, kUntimed };

struct DeviceInfo {
  uint32_t id = 0;
  ze_device_handle_t handle = nullptr;
  std::string name;
  uint32_t vendorId = 0, deviceId = 0;
  std::array<uint8_t, ZE_MAX_DEVICE_UUID_SIZE> uuid{};
  uint64_t frequency = 0;
  uint8_t kernelBits = 0, globalBits = 0;
  std::atomic<int64_t> lastSampleNs{0};
  uint32_t index = ~0u;  // in the runtime's enumeration, across drivers (GTAP_DEVICE_FILTER)
  bool wanted = true;    // GTAP_DEVICE_FILTER keeps it
};

struct ObjectInfo {
  uint64_t id = 0;
  schema::ObjectKind kind = schema::ObjectKind::UNKNOWN;
  uint32_t device = kNoDevice;
  void* context = nullptr;
  std::atomic<uint32_t> groupSize[3] = {1, 1, 1};  // kernels: set by zeKernelSetGroupSize
  bool immediate = false;
  bool timestamps = false;    // event pools and the program's events: kernel timestamps
  bool counterBased = false;  // event pools and the program's events: re-armed by each call that signals them
  bool programEvent = false;
  bool wanted = true;         // kernels: the name passes GTAP_KERNEL_FILTER
  // Queues and lists: GTAP_DEVICE_FILTER keeps their device and (queues and
  // immediate lists) GTAP_QUEUE_FILTER their queue number.
  bool workWanted = true;
  uint32_t queueNumber = ~0u;
  std::atomic<uint64_t> launches{0};  // regular lists: kernel launches appended since the last reset
  // Regular lists: the appended ops, touched by the thread appending and by
  // executions and resets, which the program orders after the appends.
  Op* head = nullptr;
  Op* tail = nullptr;
  // Regular lists and the program's events: executions submitted, not yet read.
  std::atomic<uint32_t> pendingOps{0};
};

// gtap's timestamp events and host slots for one context.
struct EventSet {
  uint64_t id = 0;
  void* context = nullptr;
  std::vector<ze_event_pool_handle_t> pools;
  std::vector<ze_event_handle_t> all;
  std::vector<ze_event_handle_t> free;  // reset, ready for any use
  // Host memory for copied timestamps: slabs of slots, never reused (an
  // operation keeps its slot for the life of its list).
  std::vector<void*> slabs;
  ze_kernel_timestamp_result_t* nextSlot = nullptr;
  size_t slotsLeft = 0;
};

schema::DeviceOpKind opKind(OpKind k) {
  switch (k) {
    case OpKind::kernel: return schema::DeviceOpKind::KERNEL;
    case OpKind::copy: return schema::DeviceOpKind::COPY;
    case OpKind::fill: return schema::DeviceOpKind::FILL;
    case OpKind::barrier: return schema::DeviceOpKind::BARRIER;
    default: return schema::DeviceOpKind::OTHER;
  }
}

uint32_t threadIdOf(const core::CallScope& scope) {
  return scope.thread() ? scope.thread()->id : core::currentThreadId();
}

// What a thread keeps for itself: free op slots and free events of the
// context it used last. Given back when the thread ends.
struct ThreadCache {
  Op* slots = nullptr;
  uint32_t slotCount = 0;
  // Set once the thread's thread-local destructors ran (a program's own
  // thread-local or atexit destructors may still call Level Zero, and gtap's
  // exit work finishes pending ops on the exiting thread): nothing is kept
  // here any more, every slot and event goes to and from the shared pools.
  bool direct = false;
  uint64_t eventSet = 0;  // EventSet::id of the events held
  uint64_t epoch = 0;     // Impl::contextEpoch when the events were taken
  void* context = nullptr;
  uint32_t eventCount = 0;
  ze_event_handle_t events[kCacheEvents];
};

// Only a pointer lives in thread-local storage: libgtap.so may be opened
// with dlopen (an HSA tool), where static TLS has little room to spare. The
// cache itself is allocated once per thread and given back when it ends.
// The pointer and the flag are trivially destructible, so they stay readable
// after the owner's destructor ran.
struct ThreadCacheOwner {
  ~ThreadCacheOwner();
};

thread_local ThreadCache* t_cache = nullptr;
thread_local bool t_cacheClosed = false;
thread_local ThreadCacheOwner t_cacheOwner;

[[gnu::noinline]] ThreadCache& openThreadCache() {
  ThreadCache* c = new ThreadCache();
  if (t_cacheClosed) {
    // Past this thread's destructors: a cache that holds nothing, kept (not
    // freed) for the few calls left before the thread is gone.
    c->direct = true;
  } else {
    (void)&t_cacheOwner;  // its destructor gives the cache back
  }
  t_cache = c;
  return *c;
}

ThreadCache& threadCache() {
  ThreadCache* c = t_cache;
  if (__builtin_expect(!c, 0)) return openThreadCache();
  return *c;
}

}  // namespace

struct Profiler::Impl {
  std::mutex mu;
  // Owned here under `mu`; read by the program's threads through `index`.
  // ObjectInfos are never given back to the heap: a thread may still hold
  // one it found without the lock. A destroyed object's goes to `spare` for
  // the next object once no submitted work counts on it (else it stays apart
  // for good), so memory follows the objects alive, not all ever made.
  std::unordered_map<void*, ObjectInfo*> objects;
  std::vector<std::unique_ptr<ObjectInfo>> infoStore;
  std::vector<ObjectInfo*> spare;
  ObjectInfo* newInfoLocked() {
    if (!spare.empty()) {
      ObjectInfo* o = spare.back();
      spare.pop_back();
      o->~ObjectInfo();
      return new (o) ObjectInfo();
    }
    infoStore.push_back(std::make_unique<ObjectInfo>());
    return infoStore.back().get();
  }
  void retireLocked(ObjectInfo* o) {
    if (!o->pendingOps.load(std::memory_order_acquire)) spare.push_back(o);
  }
  HandleIndex<ObjectInfo> index;
  std::unordered_map<void*, std::unique_ptr<EventSet>> eventSets;  // by context
  uint64_t nextEventSetId = 1;
  // Read without the lock up to `deviceCount`: entries are never moved.
  std::unique_ptr<DeviceInfo> devices[kMaxDevices];
  std::unordered_map<ze_device_handle_t, uint32_t> deviceIds;
  std::atomic<uint32_t> deviceCount{0};
  // Bumped when a context is destroyed: a thread's cached events are used
  // only if none was since they were taken (a new context may come at the
  // address of a destroyed one, whose events are gone).
  std::atomic<uint64_t> contextEpoch{0};
  // Submitted executions not yet read, pushed without a lock; the reader takes
  // them all at once.
  std::atomic<Op*> submitted{nullptr};
  std::vector<Op*> waiting;  // taken, not finished yet (under `mu`)
  std::atomic<size_t> waitingCount{0};
  // Threads inside resolve(), holding ops no other thread can see.
  std::atomic<uint32_t> resolving{0};
  Op* freeSlots = nullptr;   // under `mu`
  std::vector<std::unique_ptr<Op[]>> slotBlocks;
  core::AllocationTable allocations;
  core::profile::Outbox out;
  // The writer's side of `out`, swapped with it at each flush.
  std::mutex writingMu;
  core::profile::Outbox writing;
  std::atomic<uint64_t> dispatches{0};  // kernel launches handed to the device (replay scopes' numbers)
  uint32_t stackDepth = 32;

  ObjectInfo* find(const void* handle) const { return index.find(handle); }
  uint32_t deviceId(ze_device_handle_t device);
  uint32_t deviceIdLocked(ze_device_handle_t device) const;
  void sampleClock(DeviceInfo& d);

  Op* takeSlot();
  void giveSlot(Op* op);
  void giveSlotsLocked(Op* first, Op* last, uint32_t count);
  // A reset event of gtap's for `context`; null when none could be made.
  ze_event_handle_t takeEvent(void* context);
  // `event` must be reset (or never signaled).
  void giveEvent(void* context, ze_event_handle_t event);
  void returnCachedEventsLocked(ThreadCache& c);
  ze_kernel_timestamp_result_t* takeTimestampSlot(void* context);
  void appendTimestampCopy(ze_command_list_handle_t list, void* context, Op& op, ze_event_handle_t event, bool wait);

  void push(Op* first, Op* last);
  // Reads what `batch` holds; a finished op's readState says how.
  void read(Op& op);
  // Its record, into the calling thread's device-work buffer (no lock).
  void emit(const Op& op);
  // After the record is out: the op stops being pending; an immediate list's
  // slot and gtap events go back.
  void finish(Op* op);
  // Ops in `waiting` that `match`, taken out (the caller finishes them).
  template <typename Match>
  void takeWaiting(std::vector<Op*>& taken, Match&& match);
  // A regular list's executions still pending after a resolve: recorded
  // untimed with `note`, and waited for if another thread is reading them.
  void reclaim(void* list, ObjectInfo& l, const char* note);
  // In a fork's child, with the locks held: forgets the ops only the
  // parent's other threads could reach.
  void afterForkChild();
};

namespace {

ThreadCacheOwner::~ThreadCacheOwner() {
  ThreadCache* cache = t_cache;
  t_cacheClosed = true;
  if (!cache || cache->direct) return;
  ThreadCache& c = *cache;
  Profiler::Impl& impl = *Profiler::get().impl();
  {
    std::lock_guard<std::mutex> lock(impl.mu);
    if (c.slots) {
      Op* last = c.slots;
      while (last->nextInList) last = last->nextInList;
      impl.giveSlotsLocked(c.slots, last, c.slotCount);
    }
    impl.returnCachedEventsLocked(c);
  }
  t_cache = nullptr;
  delete cache;
}

}  // namespace

Profiler& Profiler::get() {
  static Profiler* p = new Profiler();  // lives until the process ends
  return *p;
}

Profiler::Profiler() : impl_(std::make_unique<Impl>()) {
  const core::Config& c = core::config();
  impl_->stackDepth = c.stackDepth;
  // The locks are held across a fork (writingMu before mu, the order the
  // writer takes them), so the child never finds one held by a thread it
  // does not have.
  pthread_atfork([] {
        Impl* impl = Profiler::get().impl();
        impl->writingMu.lock();
        impl->mu.lock();
      },
      [] {
        Impl* impl = Profiler::get().impl();
        impl->mu.unlock();
        impl->writingMu.unlock();
      },
      [] {
        Impl* impl = Profiler::get().impl();
        impl->afterForkChild();
        impl->mu.unlock();
        impl->writingMu.unlock();
      });
}

void Profiler::Impl::afterForkChild() {
  // A fork's child has only the forking thread: no other is reading ops any
  // more, so the waits for other readers (a context's or event's end) must
  // not wait for the parent's threads.
  resolving.store(0, std::memory_order_relaxed);
  // Ops the parent's other threads held while reading them, or were pushing,
  // are not in `waiting` or `submitted` and never will be: the pending counts
  // are counted again from what is, so a list's reset or destroy in the child
  // does not wait for them.
  for (auto& o : infoStore) o->pendingOps.store(0, std::memory_order_relaxed);
  auto count = [](const Op* op) {
    if (!op->immediate && op->listInfo)
      static_cast<ObjectInfo*>(op->listInfo)->pendingOps.fetch_add(1, std::memory_order_relaxed);
    if (!op->ownEvent && op->eventInfo)
      static_cast<ObjectInfo*>(op->eventInfo)->pendingOps.fetch_add(1, std::memory_order_relaxed);
  };
  for (const Op* op : waiting) count(op);
  for (const Op* op = submitted.load(std::memory_order_relaxed); op; op = op->nextPending) count(op);
}

// --- devices and clocks -------------------------------------------------------

namespace {

// The device's place in the runtime's enumeration, drivers in their order
// (as `gtap counters --list` numbers them); ~0u for a device not enumerated
// (a sub-device).
uint32_t enumerationIndex(ze_device_handle_t device) {
  uint32_t drivers = 0;
  if (GTAP_ZE_REAL(zeDriverGet)(&drivers, nullptr) != ZE_RESULT_SUCCESS || !drivers) return ~0u;
  std::vector<ze_driver_handle_t> driverList(drivers);
  if (GTAP_ZE_REAL(zeDriverGet)(&drivers, driverList.data()) != ZE_RESULT_SUCCESS) return ~0u;
  uint32_t index = 0;
  for (uint32_t d = 0; d < drivers && d < driverList.size(); ++d) {
    uint32_t n = 0;
    if (GTAP_ZE_REAL(zeDeviceGet)(driverList[d], &n, nullptr) != ZE_RESULT_SUCCESS) continue;
    std::vector<ze_device_handle_t> list(n);
    if (GTAP_ZE_REAL(zeDeviceGet)(driverList[d], &n, list.data()) != ZE_RESULT_SUCCESS) continue;
    for (uint32_t i = 0; i < n && i < list.size(); ++i, ++index)
      if (list[i] == device) return index;
  }
  return ~0u;
}

}  // namespace

uint32_t Profiler::Impl::deviceIdLocked(ze_device_handle_t device) const {
  auto it = deviceIds.find(device);
  return it == deviceIds.end() ? kNoDevice : it->second;
}

uint32_t Profiler::Impl::deviceId(ze_device_handle_t device) {
  if (!device) return kNoDevice;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (uint32_t id = deviceIdLocked(device); id != kNoDevice) return id;
  }
  // Asked without the lock; two threads may both ask, the first one in wins.
  auto d = std::make_unique<DeviceInfo>();
  d->handle = device;
  ze_device_properties_t props{};
  props.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2;
  if (GTAP_ZE_REAL(zeDeviceGetProperties)(device, &props) == ZE_RESULT_SUCCESS) {
    d->name = props.name;
    d->vendorId = props.vendorId;
    d->deviceId = props.deviceId;
    std::copy(std::begin(props.uuid.id), std::end(props.uuid.id), d->uuid.begin());
    d->frequency = props.timerResolution;  // ticks per second with the 1.2 structure
    d->kernelBits = static_cast<uint8_t>(props.kernelTimestampValidBits);
    d->globalBits = static_cast<uint8_t>(props.timestampValidBits);
  }
  if (!core::config().deviceFilter.empty()) {
    d->index = enumerationIndex(device);
    d->wanted = core::deviceIndexWanted(d->index);
  }
  DeviceInfo* added = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (uint32_t id = deviceIdLocked(device); id != kNoDevice) return id;
    uint32_t n = deviceCount.load(std::memory_order_relaxed);
    if (n == kMaxDevices) return kNoDevice;
    d->id = n;
    deviceIds[device] = d->id;
    core::profile::DeviceRecord r;
    r.id = d->id;
    r.api = schema::Api::LEVEL_ZERO;
    r.handle = reinterpret_cast<uint64_t>(d->handle);
    r.name = d->name;
    r.vendorId = d->vendorId;
    r.deviceId = d->deviceId;
    r.uuid.assign(d->uuid.begin(), d->uuid.end());
    r.frequency = d->frequency;
    r.kernelBits = d->kernelBits;
    r.globalBits = d->globalBits;
    out.devices.push_back(std::move(r));
    added = d.get();
    devices[n] = std::move(d);
    deviceCount.store(n + 1, std::memory_order_release);
  }
  sampleClock(*added);
  return added->id;
}

// Brackets the device's clock read with two host clock reads: the midpoint
// stands for the moment, in gtap's own host clock domain whatever the driver
// uses for its host timestamp.
// The tightest of a few brackets is kept: a reading the thread was preempted
// in would put the device clock off by up to the preemption.
void Profiler::Impl::sampleClock(DeviceInfo& d) {
  int64_t bestWidth = INT64_MAX, bestNs = 0;
  uint64_t bestTicks = 0;
  for (int attempt = 0; attempt < 3; ++attempt) {
    uint64_t hostTs = 0, deviceTs = 0;
    int64_t before = core::monotonicNs();
    if (GTAP_ZE_REAL(zeDeviceGetGlobalTimestamps)(d.handle, &hostTs, &deviceTs) != ZE_RESULT_SUCCESS) return;
    int64_t after = core::monotonicNs();
    if (after - before < bestWidth) {
      bestWidth = after - before;
      bestNs = before + (after - before) / 2;
      bestTicks = deviceTs;
    }
  }
  d.lastSampleNs.store(bestNs, std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(mu);
  out.samples.push_back({d.id, bestNs, bestTicks});
}

void Profiler::devicesSeen(ze_driver_handle_t driver, uint32_t count, ze_device_handle_t* devices) {
  if (!devices) return;
  for (uint32_t i = 0; i < count; ++i) {
    uint32_t id = impl_->deviceId(devices[i]);
    if (core::recordSamples()) Sampler::get().deviceSeen(driver, devices[i], id);
    if (DeviceMetrics::on() && id != kNoDevice && impl_->devices[id]->wanted)
      DeviceMetrics::get().deviceSeen(devices[i], id);
    if (Counters::on() && id != kNoDevice) {
      // Devices GTAP_DEVICE_FILTER leaves out are not measured: no set.
      if (!impl_->devices[id]->wanted) continue;
      std::vector<core::profile::CounterSetRecord> sets;
      std::vector<core::profile::CounterNoteRecord> notes;
      std::string requested;
      Counters::get().deviceSeen(devices[i], id, sets, notes, requested);
      std::lock_guard<std::mutex> lock(impl_->mu);
      if (!requested.empty()) impl_->out.countersRequested = requested;
      for (auto& r : sets) impl_->out.counterSets.push_back(std::move(r));
      for (auto& r : notes) impl_->out.counterNotes.push_back(std::move(r));
    }
  }
  if (Counters::on()) Counters::get().devicesDone();
}

// --- objects --------------------------------------------------------------------

uint64_t Profiler::objectCreated(uint8_t kind, void* handle, void* parentHandle, ze_device_handle_t device,
                                 uint32_t flags, uint32_t ordinal, uint32_t index, const core::CallScope& scope,
                                 ObjectExtras extras) {
  uint32_t thread = threadIdOf(scope);
  uint64_t ticks = core::nowTicks();
  uint32_t dev = impl_->deviceId(device);
  // Matched once, not at each launch.
  bool wanted = kind == static_cast<uint8_t>(schema::ObjectKind::KERNEL) ? core::kernelNameWanted(extras.name) : true;
  std::lock_guard<std::mutex> lock(impl_->mu);
  ObjectInfo* o = impl_->newInfoLocked();
  o->id = core::profile::nextObjectId();
  o->kind = static_cast<schema::ObjectKind>(kind);
  o->device = dev;
  o->wanted = wanted;
  uint64_t parent = 0;
  if (auto it = impl_->objects.find(parentHandle); parentHandle && it != impl_->objects.end()) {
    const ObjectInfo& p = *it->second;
    parent = p.id;
    o->context = p.kind == schema::ObjectKind::CONTEXT ? parentHandle : p.context;
    if (o->device == kNoDevice) o->device = p.device;  // a kernel runs where its module was built
  }
  if (o->kind == schema::ObjectKind::CONTEXT) o->context = handle;
  if (o->kind == schema::ObjectKind::IMMEDIATE_COMMAND_LIST) o->immediate = true;
  if (o->device != kNoDevice && o->device < impl_->deviceCount.load(std::memory_order_acquire) &&
      !impl_->devices[o->device]->wanted)
    o->workWanted = false;
  if (o->kind == schema::ObjectKind::COMMAND_QUEUE || o->kind == schema::ObjectKind::IMMEDIATE_COMMAND_LIST) {
    o->queueNumber = core::nextQueueNumber();
    if (!core::queueNumberWanted(o->queueNumber)) o->workWanted = false;
  }
  core::profile::ObjectRecord r;
  r.id = o->id;
  r.kind = o->kind;
  r.handle = reinterpret_cast<uint64_t>(handle);
  r.device = o->device;
  r.parent = parent;
  r.name = std::move(extras.name);
  r.ticks = ticks;
  r.thread = thread;
  r.binary = std::move(extras.binary);
  r.binaryFormat = std::move(extras.binaryFormat);
  r.buildFlags = std::move(extras.buildFlags);
  r.flags = flags;
  r.ordinal = ordinal;
  r.index = index;
  r.properties = std::move(extras.properties);
  // Queues and immediate lists: the number GTAP_QUEUE_FILTER selects them by.
  if (o->queueNumber != ~0u) r.properties.emplace_back("number", std::to_string(o->queueNumber));
  r.debugInfo = std::move(extras.debugInfo);
  r.codeAddress = extras.codeAddress;
  impl_->out.created.push_back(std::move(r));
  uint64_t id = o->id;
  impl_->index.put(handle, o);
  // A handle the runtime gives again replaces the old one's state (its
  // destruction was not seen, or is being recorded on another thread now).
  ObjectInfo*& at = impl_->objects[handle];
  if (at) impl_->retireLocked(at);
  at = o;
  return id;
}

const void* Profiler::objectToken(void* handle) const { return impl_->find(handle); }

void Profiler::objectDestroyed(void* handle, const void* token) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto it = impl_->objects.find(handle);
  // Only the object the program destroyed: another thread may have been
  // given the same handle for a new one since the runtime freed it.
  if (it == impl_->objects.end() || it->second != token) return;
  if (!it->second->programEvent) impl_->out.destroyed.emplace_back(it->second->id, core::nowTicks());
  impl_->index.erase(handle);
  impl_->retireLocked(it->second);
  impl_->objects.erase(it);
}

void Profiler::moduleCreated(ze_module_handle_t module, ze_context_handle_t context, ze_device_handle_t device,
                             const ze_module_desc_t* desc, const core::CallScope& scope) {
  ObjectExtras extras;
  if (desc && desc->pInputModule && desc->inputSize)
    extras.binary.assign(desc->pInputModule, desc->pInputModule + desc->inputSize);
  extras.binaryFormat = desc && desc->format == ZE_MODULE_FORMAT_NATIVE ? "native" : "spirv";
  if (desc && desc->pBuildFlags) extras.buildFlags = desc->pBuildFlags;
  if (core::recordSamples()) extras.debugInfo = Sampler::get().moduleDebugInfo(module);
  objectCreated(static_cast<uint8_t>(schema::ObjectKind::MODULE), module, context, device, 0, 0, 0, scope,
                std::move(extras));
}

void Profiler::kernelCreated(ze_kernel_handle_t kernel, ze_module_handle_t module, const char* name,
                             const core::CallScope& scope) {
  ObjectExtras extras;
  extras.name = name ? name : "";
  ze_kernel_properties_t props{};
  props.stype = ZE_STRUCTURE_TYPE_KERNEL_PROPERTIES;
  if (GTAP_ZE_REAL(zeKernelGetProperties)(kernel, &props) == ZE_RESULT_SUCCESS) {
    extras.properties.emplace_back("numKernelArgs", std::to_string(props.numKernelArgs));
    extras.properties.emplace_back("requiredGroupSize", std::to_string(props.requiredGroupSizeX) + "," +
                                                            std::to_string(props.requiredGroupSizeY) + "," +
                                                            std::to_string(props.requiredGroupSizeZ));
    extras.properties.emplace_back("localMemSize", std::to_string(props.localMemSize));
    extras.properties.emplace_back("privateMemSize", std::to_string(props.privateMemSize));
    extras.properties.emplace_back("spillMemSize", std::to_string(props.spillMemSize));
  }
  if (core::recordSamples()) extras.codeAddress = Sampler::get().kernelCodeAddress(kernel);
  objectCreated(static_cast<uint8_t>(schema::ObjectKind::KERNEL), kernel, module, nullptr, 0, 0, 0, scope,
                std::move(extras));
}

void Profiler::kernelGroupSize(ze_kernel_handle_t kernel, uint32_t x, uint32_t y, uint32_t z) {
  if (ObjectInfo* k = impl_->find(kernel)) {
    k->groupSize[0].store(x, std::memory_order_relaxed);
    k->groupSize[1].store(y, std::memory_order_relaxed);
    k->groupSize[2].store(z, std::memory_order_relaxed);
  }
}

void Profiler::listCreated(ze_command_list_handle_t list, ze_context_handle_t context, ze_device_handle_t device,
                           bool immediate, uint32_t ordinal, uint32_t index, uint32_t flags,
                           const core::CallScope& scope) {
  auto kind = immediate ? schema::ObjectKind::IMMEDIATE_COMMAND_LIST : schema::ObjectKind::COMMAND_LIST;
  objectCreated(static_cast<uint8_t>(kind), list, context, device, flags, ordinal, index, scope);
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (auto it = impl_->objects.find(list); it != impl_->objects.end()) it->second->context = context;
}

void Profiler::eventPoolCreated(ze_event_pool_handle_t pool, bool timestamps, bool counterBased) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  ObjectInfo* o = impl_->newInfoLocked();
  o->id = core::profile::nextObjectId();
  o->kind = schema::ObjectKind::EVENT_POOL;
  o->timestamps = timestamps;
  o->counterBased = counterBased;
  impl_->index.put(pool, o);
  ObjectInfo*& at = impl_->objects[pool];
  if (at) impl_->retireLocked(at);
  at = o;
}

void Profiler::eventCreated(ze_event_handle_t event, ze_event_pool_handle_t pool) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  ObjectInfo* o = impl_->newInfoLocked();
  o->programEvent = true;
  if (auto p = impl_->objects.find(pool); p != impl_->objects.end()) {
    o->timestamps = p->second->timestamps;
    o->counterBased = p->second->counterBased;
  }
  impl_->index.put(event, o);
  ObjectInfo*& at = impl_->objects[event];
  if (at) impl_->retireLocked(at);
  at = o;
}

void Profiler::eventDestroyed(ze_event_handle_t event, const void* token) { objectDestroyed(event, token); }

// --- op slots and gtap's timestamp events -------------------------------------------

Op* Profiler::Impl::takeSlot() {
  ThreadCache& c = threadCache();
  if (__builtin_expect(!c.slots, 0)) {
    std::lock_guard<std::mutex> lock(mu);
    if (!freeSlots) {
      // Sized once per block; slots are reused, never freed.
      slotBlocks.push_back(std::make_unique<Op[]>(kSlotBlock));
      Op* block = slotBlocks.back().get();
      for (uint32_t i = 0; i + 1 < kSlotBlock; ++i) block[i].nextInList = &block[i + 1];
      block[kSlotBlock - 1].nextInList = freeSlots;
      freeSlots = block;
    }
    if (__builtin_expect(c.direct, 0)) {
      // Only one is taken; the rest stay shared.
      Op* op = freeSlots;
      freeSlots = op->nextInList;
      op->nextInList = nullptr;
      return op;
    }
    uint32_t n = 0;
    Op* first = freeSlots;
    Op* last = first;
    while (++n < kSlotBlock && last->nextInList) last = last->nextInList;
    freeSlots = last->nextInList;
    last->nextInList = nullptr;
    c.slots = first;
    c.slotCount = n;
  }
  Op* op = c.slots;
  c.slots = op->nextInList;
  --c.slotCount;
  op->nextInList = nullptr;
  return op;
}

void Profiler::Impl::giveSlotsLocked(Op* first, Op* last, uint32_t) {
  last->nextInList = freeSlots;
  freeSlots = first;
}

void Profiler::Impl::giveSlot(Op* op) {
  // Cleared for its next use; the stack's room stays for the next capture.
  std::vector<uint64_t> frames = std::move(op->stack);
  frames.clear();
  *op = Op{};
  op->stack = std::move(frames);
  ThreadCache& c = threadCache();
  if (__builtin_expect(c.direct, 0)) {
    std::lock_guard<std::mutex> lock(mu);
    giveSlotsLocked(op, op, 1);
    return;
  }
  op->nextInList = c.slots;
  c.slots = op;
  if (++c.slotCount < 4 * kSlotBlock) return;
  // Too many here: half goes back for other threads.
  Op* last = c.slots;
  for (uint32_t i = 1; i < 2 * kSlotBlock; ++i) last = last->nextInList;
  Op* rest = last->nextInList;
  std::lock_guard<std::mutex> lock(mu);
  Op* first = rest;
  Op* end = first;
  while (end->nextInList) end = end->nextInList;
  last->nextInList = nullptr;
  giveSlotsLocked(first, end, c.slotCount - 2 * kSlotBlock);
  c.slotCount = 2 * kSlotBlock;
}

void Profiler::Impl::returnCachedEventsLocked(ThreadCache& c) {
  if (c.eventCount) {
    auto it = eventSets.find(c.context);
    // Only to the set they came from: a destroyed context's were destroyed with it.
    if (it != eventSets.end() && it->second->id == c.eventSet)
      it->second->free.insert(it->second->free.end(), c.events, c.events + c.eventCount);
  }
  c.eventCount = 0;
  c.eventSet = 0;
  c.context = nullptr;
}

ze_event_handle_t Profiler::Impl::takeEvent(void* context) {
  if (!context) return nullptr;
  ThreadCache& c = threadCache();
  if (__builtin_expect(c.context == context && c.eventCount &&
                           c.epoch == contextEpoch.load(std::memory_order_acquire), 1))
    return c.events[--c.eventCount];
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (c.context != context || c.epoch != contextEpoch.load(std::memory_order_relaxed))
        returnCachedEventsLocked(c);
      auto it = eventSets.find(context);
      if (it == eventSets.end()) {
        auto set = std::make_unique<EventSet>();
        set->id = nextEventSetId++;
        set->context = context;
        it = eventSets.emplace(context, std::move(set)).first;
      }
      EventSet& set = *it->second;
      if (!set.free.empty() && __builtin_expect(c.direct, 0)) {
        ze_event_handle_t e = set.free.back();
        set.free.pop_back();
        return e;
      }
      if (!set.free.empty()) {
        c.context = context;
        c.epoch = contextEpoch.load(std::memory_order_relaxed);
        c.eventSet = set.id;
        uint32_t n = static_cast<uint32_t>(std::min<size_t>(kEventBlock, set.free.size()));
        std::copy(set.free.end() - n, set.free.end(), c.events);
        set.free.resize(set.free.size() - n);
        c.eventCount = n;
        return c.events[--c.eventCount];
      }
    }
    // None free: a pool more, made without the lock.
    ze_event_pool_desc_t desc{ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, nullptr,
                              ZE_EVENT_POOL_FLAG_HOST_VISIBLE | ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP,
                              kEventsPerPool};
    ze_event_pool_handle_t pool = nullptr;
    if (GTAP_ZE_REAL(zeEventPoolCreate)(static_cast<ze_context_handle_t>(context), &desc, 0, nullptr, &pool) !=
        ZE_RESULT_SUCCESS)
      return nullptr;
    std::vector<ze_event_handle_t> made;
    made.reserve(kEventsPerPool);
    for (uint32_t i = 0; i < kEventsPerPool; ++i) {
      ze_event_desc_t ed{ZE_STRUCTURE_TYPE_EVENT_DESC, nullptr, i, ZE_EVENT_SCOPE_FLAG_HOST, ZE_EVENT_SCOPE_FLAG_HOST};
      ze_event_handle_t e = nullptr;
      if (GTAP_ZE_REAL(zeEventCreate)(pool, &ed, &e) == ZE_RESULT_SUCCESS) made.push_back(e);
    }
    if (made.empty()) {
      GTAP_ZE_REAL(zeEventPoolDestroy)(pool);
      return nullptr;
    }
    std::lock_guard<std::mutex> lock(mu);
    auto it = eventSets.find(context);
    if (it == eventSets.end()) return nullptr;  // the context is being destroyed
    it->second->pools.push_back(pool);
    it->second->all.insert(it->second->all.end(), made.begin(), made.end());
    it->second->free.insert(it->second->free.end(), made.begin(), made.end());
  }
}

void Profiler::Impl::giveEvent(void* context, ze_event_handle_t event) {
  if (!event) return;
  ThreadCache& c = threadCache();
  if (c.context == context && c.eventCount < kCacheEvents &&
      c.epoch == contextEpoch.load(std::memory_order_acquire)) {
    c.events[c.eventCount++] = event;
    return;
  }
  std::lock_guard<std::mutex> lock(mu);
  auto it = eventSets.find(context);
  if (it == eventSets.end()) return;
  EventSet& set = *it->second;
  if (c.context == context && c.eventSet == set.id) {
    // The set the cache came from is alive: its events still are.
    c.epoch = contextEpoch.load(std::memory_order_relaxed);
    if (c.eventCount == kCacheEvents) {
      // The cache is full: half of it goes back with this one.
      set.free.insert(set.free.end(), c.events + kCacheEvents / 2, c.events + kCacheEvents);
      c.eventCount = kCacheEvents / 2;
    } else {
      c.events[c.eventCount++] = event;
      return;
    }
  }
  set.free.push_back(event);
}

ze_kernel_timestamp_result_t* Profiler::Impl::takeTimestampSlot(void* context) {
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mu);
      auto it = eventSets.find(context);
      if (it == eventSets.end()) return nullptr;
      EventSet& set = *it->second;
      if (set.slotsLeft) {
        --set.slotsLeft;
        return set.nextSlot++;
      }
    }
    constexpr size_t kSlots = 256;
    ze_host_mem_alloc_desc_t desc{ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, nullptr, 0};
    void* slab = nullptr;
    if (GTAP_ZE_REAL(zeMemAllocHost)(static_cast<ze_context_handle_t>(context), &desc,
                                     kSlots * sizeof(ze_kernel_timestamp_result_t), 64, &slab) != ZE_RESULT_SUCCESS)
      return nullptr;
    std::lock_guard<std::mutex> lock(mu);
    auto it = eventSets.find(context);
    if (it == eventSets.end()) {
      GTAP_ZE_REAL(zeMemFree)(static_cast<ze_context_handle_t>(context), slab);
      return nullptr;
    }
    EventSet& set = *it->second;
    set.slabs.push_back(slab);
    if (!set.slotsLeft) {
      set.nextSlot = static_cast<ze_kernel_timestamp_result_t*>(slab);
      set.slotsLeft = kSlots;
    }
  }
}

// Appends to `list` a copy of `event`'s timestamps into gtap's memory, for
// `op`, which the event times; with `wait`, the copy first waits for the event
// (the op ran on another list). The caller owns `op` meanwhile.
void Profiler::Impl::appendTimestampCopy(ze_command_list_handle_t list, void* context, Op& op,
                                         ze_event_handle_t event, bool wait) {
  // The event first: taking one makes the context's set of gtap's events and
  // slots, which a program that times every call with its own events has not
  // needed before.
  ze_event_handle_t done = takeEvent(context);
  ze_kernel_timestamp_result_t* slot = done ? takeTimestampSlot(context) : nullptr;
  if (!slot) {
    if (done) giveEvent(context, done);
    return;
  }
  ze_event_handle_t events[] = {event};
  if (GTAP_ZE_REAL(zeCommandListAppendQueryKernelTimestamps)(list, 1, events, slot, nullptr, done, wait ? 1 : 0,
                                                             wait ? events : nullptr) != ZE_RESULT_SUCCESS) {
    giveEvent(context, done);
    return;
  }
  op.captured = slot;
  op.capturedDone = done;
}

void Profiler::contextDestroying(ze_context_handle_t context) {
  resolve();
  std::vector<Op*> gone;
  // Another thread (the writer's periodic read) may hold ops of this context
  // and be reading gtap's events in it: those come back to `waiting` or are
  // finished before the events are destroyed.
  for (;;) {
    bool quiet = impl_->resolving.load(std::memory_order_acquire) == 0;
    impl_->takeWaiting(gone, [&](const Op& op) { return op.context == context; });
    for (Op* op : gone) {
      op->readState = kUntimed;
      op->readNote = "its context was destroyed before gtap saw it complete";
      impl_->emit(*op);
      impl_->finish(op);
    }
    gone.clear();
    if (quiet) break;
    sched_yield();
  }
  Counters::get().contextDestroying(context);
  std::unique_ptr<EventSet> set;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    auto it = impl_->eventSets.find(context);
    if (it == impl_->eventSets.end()) return;
    set = std::move(it->second);
    impl_->eventSets.erase(it);
    impl_->contextEpoch.fetch_add(1, std::memory_order_release);
    ThreadCache& c = threadCache();
    if (c.context == context) {
      c.eventCount = 0;
      c.context = nullptr;
      c.eventSet = 0;
    }
  }
  for (ze_event_handle_t e : set->all) GTAP_ZE_REAL(zeEventDestroy)(e);
  for (ze_event_pool_handle_t p : set->pools) GTAP_ZE_REAL(zeEventPoolDestroy)(p);
  for (void* slab : set->slabs) GTAP_ZE_REAL(zeMemFree)(context, slab);
}

// --- device work -----------------------------------------------------------------

bool Profiler::shouldTimeKernel(ze_kernel_handle_t kernel) {
  const core::Config& c = core::config();
  if (!recordKernels() || c.dispatchRange) return false;
  if (c.kernelFilter.empty()) return true;
  ObjectInfo* k = impl_->find(kernel);
  return k && k->wanted;
}

bool Profiler::launchStarting(ze_command_list_handle_t list, ze_kernel_handle_t kernel, Op& op) {
  if (!recordKernels()) return false;
  const core::Config& c = core::config();
  ObjectInfo* l = impl_->find(list);
  if (!l) return false;  // a list gtap did not see made: nothing is timed
  bool wanted = true;
  if (!c.kernelFilter.empty()) {
    ObjectInfo* k = impl_->find(kernel);
    wanted = k && k->wanted;
  }
  // As replay numbers them: an immediate list's launch when it is appended
  // (refused or not), a regular list's at each execution of the list.
  // GTAP_DEVICE_FILTER and (immediate lists) GTAP_QUEUE_FILTER: numbered
  // all the same, as replay numbers them.
  wanted = wanted && l->workWanted;
  if (l->immediate) {
    op.dispatch = impl_->dispatches.fetch_add(1, std::memory_order_relaxed);
    return wanted && core::dispatchNumberWanted(op.dispatch);
  }
  op.listLaunch = l->launches.fetch_add(1, std::memory_order_relaxed);
  return wanted;
}

void* Profiler::queryForLaunch(ze_command_list_handle_t list, Op& op) {
  if (!Counters::on()) return nullptr;
  ObjectInfo* l = impl_->find(list);
  if (!l || !l->workWanted || l->device == kNoDevice ||
      l->device >= impl_->deviceCount.load(std::memory_order_acquire))
    return nullptr;
  uint32_t set = Counters::get().setOf(l->device);
  if (!set) return nullptr;
  zet_metric_query_handle_t q = Counters::get().takeQuery(static_cast<ze_context_handle_t>(l->context),
                                                          impl_->devices[l->device]->handle, l->device);
  if (!q) return nullptr;
  op.query = q;
  op.counterSet = set;
  return q;
}

void Profiler::launchFailed(ze_command_list_handle_t list, const Op& op) {
  if (op.query) Counters::get().giveQuery(static_cast<zet_metric_query_handle_t>(op.query));
  if (op.listLaunch == kNoDispatch) return;
  if (ObjectInfo* l = impl_->find(list); l && l->launches.load(std::memory_order_relaxed))
    l->launches.fetch_sub(1, std::memory_order_relaxed);
}

ze_event_handle_t Profiler::eventForAppend(ze_command_list_handle_t list, ze_event_handle_t programEvent,
                                           bool& signalAfter, bool& known) {
  signalAfter = false;
  ObjectInfo* l = impl_->find(list);
  // Work GTAP_DEVICE_FILTER or GTAP_QUEUE_FILTER leaves out is not timed.
  known = l != nullptr && l->workWanted;
  if (!known) return programEvent;
  if (programEvent) {
    ObjectInfo* e = impl_->find(programEvent);
    if (e && e->timestamps) return programEvent;
  }
  ze_event_handle_t ours = impl_->takeEvent(l->context);
  if (!ours) return programEvent;
  signalAfter = programEvent != nullptr;
  return ours;
}

void Profiler::Impl::push(Op* first, Op* last) {
  Op* head = submitted.load(std::memory_order_relaxed);
  do {
    last->nextPending = head;
  } while (!submitted.compare_exchange_weak(head, first, std::memory_order_release, std::memory_order_relaxed));
}

void Profiler::appended(ze_command_list_handle_t list, Op op, ze_event_handle_t event, bool ownEvent,
                        const core::CallScope& scope) {
  ObjectInfo* l = impl_->find(list);
  if (!l) {
    if (ownEvent) impl_->giveEvent(nullptr, event);
    return;
  }
  Op* slot = impl_->takeSlot();
  std::vector<uint64_t> frames = std::move(slot->stack);  // the slot's room, kept
  *slot = std::move(op);
  slot->event = event;
  slot->ownEvent = ownEvent;
  slot->thread = threadIdOf(scope);
  slot->appendIndex = scope.beginIndex();
  if (recordStacks()) {
    // Into the room the slot kept: no allocation once the slot has been used.
    frames.resize(impl_->stackDepth);
    frames.resize(core::captureStackInto(frames.data(), impl_->stackDepth));
    slot->stack = std::move(frames);
  }
  slot->list = l->id;
  slot->device = l->device;
  slot->listHandle = list;
  slot->context = l->context;
  slot->immediate = l->immediate;
  if (slot->kind == OpKind::kernel) {
    if (ObjectInfo* k = impl_->find(reinterpret_cast<void*>(slot->kernel))) {
      for (int i = 0; i < 3; ++i) slot->groupSize[i] = k->groupSize[i].load(std::memory_order_relaxed);
      slot->kernel = k->id;
    } else {
      slot->kernel = 0;
    }
  }
  if (l->immediate) {
    slot->pending = true;
    slot->queue = slot->list;
    slot->submitTicks = slot->appendTicks;
    slot->submitThread = slot->thread;
    if (!ownEvent)
      if (ObjectInfo* e = impl_->find(event)) {
        e->pendingOps.fetch_add(1, std::memory_order_relaxed);
        slot->eventInfo = e;
      }
    impl_->push(slot, slot);
  } else {
    if (l->tail)
      l->tail->nextInList = slot;
    else
      l->head = slot;
    l->tail = slot;
  }
}

void Profiler::appendFailed(ze_command_list_handle_t list, ze_event_handle_t event, bool ownEvent) {
  if (!ownEvent) return;
  ObjectInfo* l = impl_->find(list);
  impl_->giveEvent(l ? l->context : nullptr, event);  // never signaled: still reset
}

void Profiler::Impl::emit(const Op& op) {
  // Into the calling thread's device-work buffer: no allocation, and the
  // stack's frames are copied where the record lies. No buffer is had only
  // once recording has stopped (an internal error), as for HSA's records.
  uint32_t frames = recordStacks() ? static_cast<uint32_t>(std::min<size_t>(op.stack.size(), 0xffff)) : 0;
  if (op.counterSet && !op.counterRaw.empty() && op.readState == kTimed) {
    // Measured (dispatches run one at a time then): a record of the outbox,
    // whose values the writer has the runtime calculate from the raw data.
    core::profile::OpRecord r;
    r.recordedBy = schema::Api::LEVEL_ZERO;
    r.kind = opKind(op.kind);
    r.device = op.device;
    r.queue = op.queue;
    r.list = op.list;
    r.kernel = op.kernel;
    r.groupCount = op.groupCount;
    r.groupSize = op.groupSize;
    r.bytes = op.bytes;
    r.direction = static_cast<schema::CopyDirection>(op.direction);
    r.thread = op.thread;
    r.appendIndex = op.appendIndex;
    r.appendTicks = op.appendTicks;
    r.submitTicks = op.submitTicks;
    r.submitThread = op.submitThread;
    r.timed = true;
    r.start = op.readStart;
    r.end = op.readEnd;
    r.completedNs = core::monotonicNs();
    r.stack.assign(op.stack.begin(), op.stack.begin() + frames);
    r.counterSet = op.counterSet;
    r.counterRaw = op.counterRaw;
    std::lock_guard<std::mutex> lock(mu);
    out.ops.push_back(std::move(r));
    return;
  }
  core::devicework::Header* h = core::devicework::begin(frames, 0, 0, 0, 0, 0);
  if (!h) return;
  h->recordedBy = schema::Api::LEVEL_ZERO;
  h->kind = opKind(op.kind);
  h->device = op.device;
  h->queue = op.queue;
  h->list = op.list;
  h->kernel = op.kernel;
  h->groupCount = op.groupCount;
  h->groupSize = op.groupSize;
  h->bytes = op.bytes;
  h->direction = static_cast<schema::CopyDirection>(op.direction);
  h->thread = op.thread;
  h->appendIndex = op.appendIndex;
  h->appendTicks = op.appendTicks;
  h->submitTicks = op.submitTicks;
  h->submitThread = op.submitThread;
  h->timed = op.readState == kTimed;
  h->start = op.readStart;
  h->end = op.readEnd;
  h->completedNs = core::monotonicNs();
  h->fixedNote = op.readNote;
  if (frames) std::memcpy(h->stack(), op.stack.data(), frames * sizeof(uint64_t));
  core::devicework::commit(h);
}

void Profiler::Impl::read(Op& op) {
  op.readState = kNotReady;
  op.readNote = nullptr;
  // A measured launch is done when its query's end has run, after the
  // launch's own event: the raw data is read first, once.
  if (op.query && op.counterRaw.empty() &&
      Counters::get().read(static_cast<zet_metric_query_handle_t>(op.query), op.counterRaw) == 0)
    return;
  if (op.capturedDone) {
    // The program's event was reset on the device: its copy is read instead.
    if (GTAP_ZE_REAL(zeEventQueryStatus)(op.capturedDone) != ZE_RESULT_SUCCESS) return;
    op.readState = kTimed;
    op.readStart = op.captured->global.kernelStart;
    op.readEnd = op.captured->global.kernelEnd;
    return;
  }
  ze_event_handle_t e = op.event;
  if (!e) return;
  // One call while the work runs: the timestamp query answers NOT_READY for
  // an event not yet signaled. Only another answer needs the status asked.
  ze_kernel_timestamp_result_t ts{};
  ze_result_t r = GTAP_ZE_REAL(zeEventQueryKernelTimestamp)(e, &ts);
  if (r == ZE_RESULT_NOT_READY) return;
  if (r == ZE_RESULT_SUCCESS) {
    op.readState = kTimed;
    op.readStart = ts.global.kernelStart;
    op.readEnd = ts.global.kernelEnd;
  } else {
    if (GTAP_ZE_REAL(zeEventQueryStatus)(e) != ZE_RESULT_SUCCESS) return;
    op.readState = kUntimed;
    op.readNote = "the driver gave no kernel timestamp for its event";
  }
}

void Profiler::Impl::finish(Op* op) {
  // Read before the counts go down: the op may be reused at once after.
  auto* listInfo = static_cast<ObjectInfo*>(op->listInfo);
  auto* eventInfo = op->ownEvent ? nullptr : static_cast<ObjectInfo*>(op->eventInfo);
  op->eventInfo = nullptr;
  bool immediate = op->immediate;
  if (op->readState == kNotReady) {
    op->dirty = true;  // recorded untimed: its events may still signal
  } else {
    // gtap's events are reset once read, so the next use finds them ready.
    if (op->ownEvent) GTAP_ZE_REAL(zeEventHostReset)(op->event);
    if (op->capturedDone) GTAP_ZE_REAL(zeEventHostReset)(op->capturedDone);
    op->dirty = false;
  }
  op->pending = false;
  if (immediate) {
    // A single-use gtap event goes back with the slot; a regular list's
    // keep their place in the list until it is reset.
    if (op->query && !op->dirty) Counters::get().giveQuery(static_cast<zet_metric_query_handle_t>(op->query));
    if (!op->dirty) {
      if (op->ownEvent) giveEvent(op->context, op->event);
      if (op->capturedDone) giveEvent(op->context, op->capturedDone);
    }
    giveSlot(op);
  } else if (listInfo) {
    listInfo->pendingOps.fetch_sub(1, std::memory_order_release);
  }
  if (eventInfo) eventInfo->pendingOps.fetch_sub(1, std::memory_order_release);
}

template <typename Match>
void Profiler::Impl::takeWaiting(std::vector<Op*>& taken, Match&& match) {
  if (!waitingCount.load(std::memory_order_acquire)) return;
  std::lock_guard<std::mutex> lock(mu);
  auto keep = std::stable_partition(waiting.begin(), waiting.end(), [&](Op* op) { return !match(*op); });
  taken.insert(taken.end(), keep, waiting.end());
  waiting.erase(keep, waiting.end());
  waitingCount.store(waiting.size(), std::memory_order_release);
}

void Profiler::resolve() {
  // Kept per thread: its capacity stays, so a resolve allocates nothing once warm.
  static thread_local std::vector<Op*> batch;
  batch.clear();
  struct Resolving {
    std::atomic<uint32_t>& n;
    explicit Resolving(std::atomic<uint32_t>& c) : n(c) { n.fetch_add(1, std::memory_order_acq_rel); }
    ~Resolving() { n.fetch_sub(1, std::memory_order_acq_rel); }
  } resolving(impl_->resolving);
  if (impl_->waitingCount.load(std::memory_order_acquire)) {
    std::lock_guard<std::mutex> lock(impl_->mu);
    batch.swap(impl_->waiting);
    impl_->waitingCount.store(0, std::memory_order_release);
  }
  size_t older = batch.size();
  for (Op* op = impl_->submitted.exchange(nullptr, std::memory_order_acquire); op; op = op->nextPending)
    batch.push_back(op);
  std::reverse(batch.begin() + static_cast<ptrdiff_t>(older), batch.end());  // submission order
  if (batch.empty()) return;
  // The ops taken are this thread's alone now: read without a lock.
  bool anyDone = false;
  for (Op* op : batch) {
    impl_->read(*op);
    anyDone |= op->readState != kNotReady;
  }
  // The finished ones stay in `batch`, chosen under the lock: once an op is
  // back in `waiting`, another thread may take, read and finish it.
  size_t done = 0;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    for (Op* op : batch)
      if (op->readState == kNotReady)
        impl_->waiting.push_back(op);
      else
        batch[done++] = op;
    impl_->waitingCount.store(impl_->waiting.size(), std::memory_order_release);
  }
  for (size_t i = 0; i < done; ++i) {
    impl_->emit(*batch[i]);
    impl_->finish(batch[i]);
  }
  batch.clear();
  if (!anyDone) return;
  // Device clocks are sampled again every so often while times are read.
  int64_t now = core::monotonicNs();
  uint32_t n = impl_->deviceCount.load(std::memory_order_acquire);
  for (uint32_t i = 0; i < n; ++i) {
    DeviceInfo* d = impl_->devices[i].get();
    if (now - d->lastSampleNs.load(std::memory_order_relaxed) > kClockSampleIntervalNs) impl_->sampleClock(*d);
  }
}

void Profiler::Impl::reclaim(void* list, ObjectInfo& l, const char* note) {
  std::vector<Op*> gone;
  for (;;) {
    takeWaiting(gone, [&](const Op& op) { return op.listHandle == list; });
    for (Op* op : gone) {
      op->readState = kUntimed;
      op->readNote = note;
      emit(*op);
      op->readState = kNotReady;  // finish() keeps its events apart until reset
      finish(op);
    }
    gone.clear();
    if (!l.pendingOps.load(std::memory_order_acquire)) return;
    // Another thread took the rest to read them: it finishes those that
    // completed and puts the others back in `waiting`, where the next turn
    // takes them.
    sched_yield();
  }
}

void Profiler::executing(ze_command_queue_handle_t queue, uint32_t count, ze_command_list_handle_t* lists,
                         const core::CallScope& scope) {
  if (!lists) return;
  uint64_t ticks = core::nowTicks();
  uint32_t thread = threadIdOf(scope);
  ObjectInfo* q = impl_->find(queue);
  uint64_t queueId = q ? q->id : 0;
  // GTAP_QUEUE_FILTER: a regular list's work is recorded by the queue
  // executing it (its queries, appended with the launches, run unread).
  bool queueWanted = !q || q->workWanted;
  for (uint32_t i = 0; i < count; ++i) {
    ObjectInfo* l = impl_->find(lists[i]);
    if (!l) continue;
    if (l->pendingOps.load(std::memory_order_acquire)) {
      // The previous execution: read now, before this one resets or
      // re-signals its events.
      resolve();
      if (l->pendingOps.load(std::memory_order_acquire))
        impl_->reclaim(lists[i], *l, "its list was executed again before gtap saw it complete");
    }
    // This execution hands the list's launches to the device: they take the
    // next dispatch numbers, in list order.
    uint64_t firstDispatch = impl_->dispatches.fetch_add(l->launches.load(std::memory_order_relaxed),
                                                         std::memory_order_relaxed);
    Op* first = nullptr;
    Op* last = nullptr;
    uint32_t pending = 0;
    for (Op* op = l->head; op; op = op->nextInList) {
      if (op->dirty) {
        if (op->ownEvent) GTAP_ZE_REAL(zeEventHostReset)(op->event);
        if (op->capturedDone) GTAP_ZE_REAL(zeEventHostReset)(op->capturedDone);
        op->dirty = false;
      }
      if (op->query) {
        // Read (or given up) with the previous execution: measures this one.
        Counters::get().reset(static_cast<zet_metric_query_handle_t>(op->query));
        op->counterRaw.clear();
      }
      if (!queueWanted ||
          (op->listLaunch != kNoDispatch && !core::dispatchNumberWanted(firstDispatch + op->listLaunch))) {
        op->dirty = true;  // outside GTAP_DISPATCH_RANGE this time: its event signals unread
        continue;
      }
      op->pending = true;
      op->queue = queueId;
      op->submitTicks = ticks;
      op->submitThread = thread;
      op->listInfo = l;
      if (!op->ownEvent)
        if (ObjectInfo* e = impl_->find(op->event)) {
          e->pendingOps.fetch_add(1, std::memory_order_relaxed);
          op->eventInfo = e;
        }
      op->nextPending = nullptr;
      if (last)
        last->nextPending = op;
      else
        first = op;
      last = op;
      ++pending;
    }
    if (!first) continue;
    // Pushed in list order, read in submission order (resolve reverses the stack).
    Op* reversed = nullptr;
    for (Op* op = first; op;) {
      Op* next = op->nextPending;
      op->nextPending = reversed;
      reversed = op;
      op = next;
    }
    l->pendingOps.fetch_add(pending, std::memory_order_relaxed);
    impl_->push(reversed, first);
  }
}

void Profiler::listReset(ze_command_list_handle_t list) {
  ObjectInfo* l = impl_->find(list);
  if (!l) return;
  if (l->pendingOps.load(std::memory_order_acquire)) {
    resolve();
    if (l->pendingOps.load(std::memory_order_acquire))
      impl_->reclaim(list, *l, "its list was reset or destroyed before gtap saw it complete");
  }
  for (Op* op = l->head; op;) {
    Op* next = op->nextInList;
    if (op->dirty) {
      if (op->ownEvent) GTAP_ZE_REAL(zeEventHostReset)(op->event);
      if (op->capturedDone) GTAP_ZE_REAL(zeEventHostReset)(op->capturedDone);
    }
    if (op->ownEvent) impl_->giveEvent(op->context, op->event);
    if (op->capturedDone) impl_->giveEvent(op->context, op->capturedDone);
    if (op->query) Counters::get().giveQuery(static_cast<zet_metric_query_handle_t>(op->query));
    impl_->giveSlot(op);
    op = next;
  }
  l->head = l->tail = nullptr;
  l->launches.store(0, std::memory_order_relaxed);
}

void Profiler::programEventEnding(ze_event_handle_t event) {
  ObjectInfo* e = impl_->find(event);
  if (!e || !e->pendingOps.load(std::memory_order_acquire)) return;
  resolve();
  std::vector<Op*> ops;
  // Ops another thread is reading come back to `waiting` or are finished
  // before the program's call changes the event.
  for (;;) {
    bool quiet = impl_->resolving.load(std::memory_order_acquire) == 0;
    impl_->takeWaiting(ops, [&](const Op& op) { return !op.ownEvent && op.event == event && !op.capturedDone; });
    for (Op* op : ops) {
      impl_->read(*op);
      if (op->readState == kNotReady) {
        op->readState = kUntimed;
        op->readNote = "the program reset or destroyed its event before gtap saw it complete";
      }
    }
    for (Op* op : ops) {
      impl_->emit(*op);
      impl_->finish(op);
    }
    ops.clear();
    if (quiet) return;
    sched_yield();
  }
}

void Profiler::deviceResetAppending(ze_command_list_handle_t list, ze_event_handle_t event) {
  ObjectInfo* l = impl_->find(list);
  if (!l || !event) return;
  // Operations of this list timed by the program's event, not yet covered.
  if (l->immediate) {
    ObjectInfo* e = impl_->find(event);
    if (!e || !e->pendingOps.load(std::memory_order_acquire)) return;
    resolve();
    std::vector<Op*> ops;
    uint64_t id = l->id;
    impl_->takeWaiting(ops, [&](const Op& op) {
      return op.list == id && !op.ownEvent && op.event == event && !op.captured;
    });
    for (Op* op : ops) impl_->appendTimestampCopy(list, l->context, *op, event, false);
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->waiting.insert(impl_->waiting.end(), ops.begin(), ops.end());
    impl_->waitingCount.store(impl_->waiting.size(), std::memory_order_release);
    return;
  }
  for (Op* op = l->head; op; op = op->nextInList)
    if (!op->ownEvent && op->event == event && !op->captured)
      impl_->appendTimestampCopy(list, l->context, *op, event, false);
}

void Profiler::programEventSignalling(ze_command_list_handle_t list, ze_event_handle_t event) {
  ObjectInfo* e = impl_->find(event);
  if (!e || !e->counterBased) return;
  ObjectInfo* l = impl_->find(list);
  if (!l) return;
  // This call re-arms the event: its timestamps will be this call's. The
  // calls it timed before are read now if they have finished, else their
  // timestamps are copied on the device before this call can end (the list
  // is in order; a call on another list is waited for).
  if (e->pendingOps.load(std::memory_order_acquire)) {
    resolve();
    std::vector<Op*> ops;
    impl_->takeWaiting(ops, [&](const Op& op) {
      return op.immediate && !op.ownEvent && op.event == event && !op.captured;
    });
    for (Op* op : ops)
      if (op->readState == kNotReady) impl_->appendTimestampCopy(list, l->context, *op, event, op->list != l->id);
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->waiting.insert(impl_->waiting.end(), ops.begin(), ops.end());
    impl_->waitingCount.store(impl_->waiting.size(), std::memory_order_release);
  }
  // A regular list's earlier calls timed by the event run before this one.
  if (!l->immediate)
    for (Op* op = l->head; op; op = op->nextInList)
      if (!op->ownEvent && op->event == event && !op->captured)
        impl_->appendTimestampCopy(list, l->context, *op, event, false);
}

// --- memory --------------------------------------------------------------------------

void Profiler::allocated(uint8_t kind, void* address, size_t size, size_t alignment, ze_device_handle_t device,
                         const core::CallScope& scope) {
  std::vector<uint64_t> stack;
  if (recordStacks() && recordMemory()) stack = captureStack();
  uint32_t thread = threadIdOf(scope);
  uint32_t dev = impl_->deviceId(device);
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto k = static_cast<schema::MemoryKind>(kind);
  impl_->allocations.allocated(address, {size, k, dev}, alignment, thread, std::move(stack), impl_->out.memory);
}

void Profiler::freeing(void* address, const core::CallScope& scope) {
  uint32_t thread = threadIdOf(scope);
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->allocations.freeing(address, thread, impl_->out.memory);
}

Direction Profiler::directionOf(const void* dst, const void* src) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  // Device and shared allocations are device memory.
  return static_cast<Direction>(
      impl_->allocations.direction(dst, src, [](schema::MemoryKind k) { return k != schema::MemoryKind::HOST; }));
}

// --- stacks ----------------------------------------------------------------------------

std::vector<uint64_t> Profiler::captureStack() { return core::captureStack(impl_->stackDepth); }

// --- the writer's side -------------------------------------------------------------------

namespace {

void exitWork() {
  if (recordKernels()) Profiler::get().resolve();
  // The last values calculated while the runtime is surely still up.
  if (Counters::on()) Profiler::get().calculateCounters();
}

void produceChunks(core::ChunkSink& sink, bool final) { Profiler::get().produce(sink, final); }

__attribute__((constructor(103))) void registerProfiler() {
  core::registerChunkProducer(&produceChunks);
  core::registerExitWork(&exitWork);
}

}  // namespace

void Profiler::calculateCounters() {
  std::lock_guard<std::mutex> writing(impl_->writingMu);
  std::vector<core::profile::OpRecord> ops;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    ops.swap(impl_->out.ops);
  }
  for (auto& r : ops) Counters::get().calculate(r);
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->out.ops.insert(impl_->out.ops.begin(), std::make_move_iterator(ops.begin()),
                        std::make_move_iterator(ops.end()));
}

void Profiler::produce(core::ChunkSink& sink, bool) {
  std::lock_guard<std::mutex> writing(impl_->writingMu);
  core::profile::Outbox& out = impl_->writing;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    std::swap(out, impl_->out);
  }
  if (Counters::on())
    for (auto& r : out.ops) Counters::get().calculate(r);
  core::profile::writeProfileRecords(sink, out);
  out.clear();  // the next swap hands its memory back to the program's threads
}

}  // namespace gtap::ze
