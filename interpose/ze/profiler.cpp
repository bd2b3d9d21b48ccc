#include "profiler.h"

#include <algorithm>

#include "allocations.h"
#include "clock.h"
#include "chunk_producer.h"
#include "functions.h"
#include "real.h"
#include "session.h"
#include "profile_records.h"
#include "stack_table.h"

namespace gtap::ze {

namespace {

constexpr uint32_t kEventsPerPool = 128;
constexpr int64_t kClockSampleIntervalNs = 50'000'000;
constexpr uint32_t kNoDevice = ~0u;

struct DeviceInfo {
  uint32_t id = 0;
  ze_device_handle_t handle = nullptr;
  std::string name;
  uint32_t vendorId = 0, deviceId = 0;
  std::array<uint8_t, ZE_MAX_DEVICE_UUID_SIZE> uuid{};
  uint64_t frequency = 0;
  uint8_t kernelBits = 0, globalBits = 0;
  int64_t lastSampleNs = 0;
};

struct ObjectInfo {
  uint64_t id = 0;
  schema::ObjectKind kind = schema::ObjectKind::UNKNOWN;
  uint32_t device = kNoDevice;
  void* context = nullptr;
  std::array<uint32_t, 3> groupSize{1, 1, 1};
  bool immediate = false;
  bool timestamps = false;  // event pools: created with kernel timestamps
  bool wanted = true;       // kernels: the name passes GTAP_KERNEL_FILTER
  uint64_t launches = 0;    // regular lists: kernel launches appended since the last reset
  bool counterBased = false;  // event pools: counter-based events (re-armed by each call that signals them)
  std::string name;
  std::vector<std::shared_ptr<Op>> ops;  // regular lists: appended operations
};

struct Instance {
  std::shared_ptr<Op> op;
  uint64_t queue = 0;
  uint64_t submitTicks = 0;
  uint32_t submitThread = ~0u;
  bool immediate = false;
  void* context = nullptr;
};

struct GtapEvents {
  std::vector<ze_event_pool_handle_t> pools;
  std::vector<ze_event_handle_t> all;
  std::vector<ze_event_handle_t> free;   // reset, ready for any list
  std::vector<ze_event_handle_t> dirty;  // maybe signaled: reset when an immediate list takes one
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

}  // namespace

struct Profiler::Impl {
  std::mutex mu;
  std::unordered_map<void*, ObjectInfo> objects;
  std::unordered_map<ze_event_handle_t, ze_event_pool_handle_t> programEvents;
  std::unordered_map<void*, GtapEvents> gtapEvents;  // by context
  std::unordered_map<ze_event_handle_t, void*> gtapEventContext;
  std::vector<DeviceInfo> devices;
  std::unordered_map<ze_device_handle_t, uint32_t> deviceIds;
  std::vector<Instance> pending;
  core::AllocationTable allocations;
  core::profile::Outbox out;
  uint64_t dispatches = 0;  // kernel launches handed to the device (replay scopes' numbers)
  uint32_t stackDepth = 32;

  uint32_t deviceIdLocked(ze_device_handle_t device);
  void sampleClockLocked(DeviceInfo& d);
  // `regularList`: the event goes into a regular list, whose executions reset
  // it first (executing()); any other use gets a reset event.
  ze_event_handle_t acquireEventLocked(void* context, bool regularList = false);
  // `reset`: reset it now; else it is kept apart until a use that needs it reset.
  void releaseEventLocked(ze_event_handle_t event, bool reset = true);
  ze_kernel_timestamp_result_t* acquireSlotLocked(void* context);
  void appendTimestampCopyLocked(ze_command_list_handle_t list, void* context, Op& op, ze_event_handle_t event,
                                 bool wait);
  void emitLocked(const Instance& inst, bool timed, uint64_t start, uint64_t end, std::string note);
  // Reads `inst` if its event has signalled; returns whether it was read.
  bool tryReadLocked(const Instance& inst);
  void finishInstanceLocked(const Instance& inst);
};

Profiler& Profiler::get() {
  static Profiler* p = new Profiler();  // lives until the process ends
  return *p;
}

Profiler::Profiler() : impl_(std::make_unique<Impl>()) {
  const core::Config& c = core::config();
  impl_->stackDepth = c.stackDepth;
}


// --- devices and clocks -------------------------------------------------------

uint32_t Profiler::Impl::deviceIdLocked(ze_device_handle_t device) {
  if (!device) return kNoDevice;
  auto it = deviceIds.find(device);
  if (it != deviceIds.end()) return it->second;
  DeviceInfo d;
  d.id = static_cast<uint32_t>(devices.size());
  d.handle = device;
  ze_device_properties_t props{};
  props.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2;
  if (GTAP_ZE_REAL(zeDeviceGetProperties)(device, &props) == ZE_RESULT_SUCCESS) {
    d.name = props.name;
    d.vendorId = props.vendorId;
    d.deviceId = props.deviceId;
    std::copy(std::begin(props.uuid.id), std::end(props.uuid.id), d.uuid.begin());
    d.frequency = props.timerResolution;  // ticks per second with the 1.2 structure
    d.kernelBits = static_cast<uint8_t>(props.kernelTimestampValidBits);
    d.globalBits = static_cast<uint8_t>(props.timestampValidBits);
  }
  deviceIds[device] = d.id;
  sampleClockLocked(d);
  devices.push_back(d);
  core::profile::DeviceRecord r;
  r.id = d.id;
  r.api = schema::Api::LEVEL_ZERO;
  r.handle = reinterpret_cast<uint64_t>(d.handle);
  r.name = d.name;
  r.vendorId = d.vendorId;
  r.deviceId = d.deviceId;
  r.uuid.assign(d.uuid.begin(), d.uuid.end());
  r.frequency = d.frequency;
  r.kernelBits = d.kernelBits;
  r.globalBits = d.globalBits;
  out.devices.push_back(std::move(r));
  return d.id;
}

// Brackets the device's clock read with two host clock reads: the midpoint
// stands for the moment, in gtap's own host clock domain whatever the driver
// uses for its host timestamp.
// The tightest of a few brackets is kept: a reading the thread was preempted
// in would put the device clock off by up to the preemption.
void Profiler::Impl::sampleClockLocked(DeviceInfo& d) {
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
  d.lastSampleNs = bestNs;
  out.samples.push_back({d.id, bestNs, bestTicks});
}

void Profiler::devicesSeen(ze_driver_handle_t, uint32_t count, ze_device_handle_t* devices) {
  if (!devices) return;
  std::lock_guard<std::mutex> lock(impl_->mu);
  for (uint32_t i = 0; i < count; ++i) impl_->deviceIdLocked(devices[i]);
}

// --- objects --------------------------------------------------------------------

uint64_t Profiler::objectCreated(uint8_t kind, void* handle, void* parentHandle, ze_device_handle_t device,
                                 uint32_t flags, uint32_t ordinal, uint32_t index, const core::CallScope& scope,
                                 ObjectExtras extras) {
  uint32_t thread = threadIdOf(scope);
  uint64_t ticks = core::nowTicks();
  std::lock_guard<std::mutex> lock(impl_->mu);
  ObjectInfo o;
  o.id = core::profile::nextObjectId();
  o.kind = static_cast<schema::ObjectKind>(kind);
  o.device = impl_->deviceIdLocked(device);
  o.name = extras.name;
  // Matched once, not at each launch.
  if (o.kind == schema::ObjectKind::KERNEL) o.wanted = core::kernelNameWanted(o.name);
  uint64_t parent = 0;
  if (auto it = impl_->objects.find(parentHandle); parentHandle && it != impl_->objects.end()) {
    parent = it->second.id;
    o.context = it->second.kind == schema::ObjectKind::CONTEXT ? parentHandle : it->second.context;
    if (o.device == kNoDevice) o.device = it->second.device;  // a kernel runs where its module was built
  }
  if (o.kind == schema::ObjectKind::CONTEXT) o.context = handle;
  core::profile::ObjectRecord r;
  r.id = o.id;
  r.kind = o.kind;
  r.handle = reinterpret_cast<uint64_t>(handle);
  r.device = o.device;
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
  impl_->out.created.push_back(std::move(r));
  uint64_t id = o.id;
  impl_->objects[handle] = std::move(o);
  return id;
}

void Profiler::objectDestroyed(void* handle) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto it = impl_->objects.find(handle);
  if (it == impl_->objects.end()) return;
  impl_->out.destroyed.emplace_back(it->second.id, core::nowTicks());
  impl_->objects.erase(it);
}

void Profiler::moduleCreated(ze_module_handle_t module, ze_context_handle_t context, ze_device_handle_t device,
                             const ze_module_desc_t* desc, const core::CallScope& scope) {
  ObjectExtras extras;
  if (desc && desc->pInputModule && desc->inputSize)
    extras.binary.assign(desc->pInputModule, desc->pInputModule + desc->inputSize);
  extras.binaryFormat = desc && desc->format == ZE_MODULE_FORMAT_NATIVE ? "native" : "spirv";
  if (desc && desc->pBuildFlags) extras.buildFlags = desc->pBuildFlags;
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
  objectCreated(static_cast<uint8_t>(schema::ObjectKind::KERNEL), kernel, module, nullptr, 0, 0, 0, scope,
                std::move(extras));
}

void Profiler::kernelGroupSize(ze_kernel_handle_t kernel, uint32_t x, uint32_t y, uint32_t z) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (auto it = impl_->objects.find(kernel); it != impl_->objects.end()) it->second.groupSize = {x, y, z};
}

void Profiler::listCreated(ze_command_list_handle_t list, ze_context_handle_t context, ze_device_handle_t device,
                           bool immediate, uint32_t ordinal, uint32_t index, uint32_t flags,
                           const core::CallScope& scope) {
  auto kind = immediate ? schema::ObjectKind::IMMEDIATE_COMMAND_LIST : schema::ObjectKind::COMMAND_LIST;
  objectCreated(static_cast<uint8_t>(kind), list, context, device, flags, ordinal, index, scope);
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->objects[list].immediate = immediate;
  impl_->objects[list].context = context;
}

void Profiler::eventPoolCreated(ze_event_pool_handle_t pool, bool timestamps, bool counterBased) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  ObjectInfo& o = impl_->objects[pool];
  o.id = core::profile::nextObjectId();
  o.kind = schema::ObjectKind::EVENT_POOL;
  o.timestamps = timestamps;
  o.counterBased = counterBased;
}

void Profiler::eventCreated(ze_event_handle_t event, ze_event_pool_handle_t pool) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->programEvents[event] = pool;
}

void Profiler::eventDestroyed(ze_event_handle_t event) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->programEvents.erase(event);
}

// --- gtap's own timestamp events -------------------------------------------------

ze_event_handle_t Profiler::Impl::acquireEventLocked(void* context, bool regularList) {
  if (!context) return nullptr;
  GtapEvents& set = gtapEvents[context];
  if (!set.dirty.empty() && (regularList || set.free.empty())) {
    ze_event_handle_t e = set.dirty.back();
    set.dirty.pop_back();
    if (!regularList) GTAP_ZE_REAL(zeEventHostReset)(e);
    return e;
  }
  if (set.free.empty()) {
    ze_event_pool_desc_t desc{ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, nullptr,
                              ZE_EVENT_POOL_FLAG_HOST_VISIBLE | ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP,
                              kEventsPerPool};
    ze_event_pool_handle_t pool = nullptr;
    if (GTAP_ZE_REAL(zeEventPoolCreate)(static_cast<ze_context_handle_t>(context), &desc, 0, nullptr, &pool) !=
        ZE_RESULT_SUCCESS)
      return nullptr;
    set.pools.push_back(pool);
    for (uint32_t i = 0; i < kEventsPerPool; ++i) {
      ze_event_desc_t ed{ZE_STRUCTURE_TYPE_EVENT_DESC, nullptr, i, ZE_EVENT_SCOPE_FLAG_HOST, ZE_EVENT_SCOPE_FLAG_HOST};
      ze_event_handle_t e = nullptr;
      if (GTAP_ZE_REAL(zeEventCreate)(pool, &ed, &e) == ZE_RESULT_SUCCESS) {
        set.all.push_back(e);
        set.free.push_back(e);
        gtapEventContext[e] = context;
      }
    }
    if (set.free.empty()) return nullptr;
  }
  ze_event_handle_t e = set.free.back();
  set.free.pop_back();
  return e;
}

void Profiler::Impl::releaseEventLocked(ze_event_handle_t event, bool reset) {
  auto it = gtapEventContext.find(event);
  if (it == gtapEventContext.end()) return;
  GtapEvents& set = gtapEvents[it->second];
  if (reset) {
    GTAP_ZE_REAL(zeEventHostReset)(event);
    set.free.push_back(event);
  } else {
    set.dirty.push_back(event);
  }
}

ze_kernel_timestamp_result_t* Profiler::Impl::acquireSlotLocked(void* context) {
  GtapEvents& set = gtapEvents[context];
  if (!set.slotsLeft) {
    constexpr size_t kSlots = 256;
    ze_host_mem_alloc_desc_t desc{ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, nullptr, 0};
    void* slab = nullptr;
    if (GTAP_ZE_REAL(zeMemAllocHost)(static_cast<ze_context_handle_t>(context), &desc,
                                     kSlots * sizeof(ze_kernel_timestamp_result_t), 64, &slab) != ZE_RESULT_SUCCESS)
      return nullptr;
    set.slabs.push_back(slab);
    set.nextSlot = static_cast<ze_kernel_timestamp_result_t*>(slab);
    set.slotsLeft = kSlots;
  }
  --set.slotsLeft;
  return set.nextSlot++;
}

// Appends to `list` a copy of `event`'s timestamps into gtap's memory, for
// `op`, which the event times; with `wait`, the copy first waits for the event
// (the op ran on another list).
void Profiler::Impl::appendTimestampCopyLocked(ze_command_list_handle_t list, void* context, Op& op,
                                               ze_event_handle_t event, bool wait) {
  ze_kernel_timestamp_result_t* slot = acquireSlotLocked(context);
  ze_event_handle_t done = acquireEventLocked(context);
  if (!slot || !done) {
    if (done) releaseEventLocked(done);
    return;
  }
  ze_event_handle_t events[] = {event};
  if (GTAP_ZE_REAL(zeCommandListAppendQueryKernelTimestamps)(list, 1, events, slot, nullptr, done, wait ? 1 : 0,
                                                             wait ? events : nullptr) != ZE_RESULT_SUCCESS) {
    releaseEventLocked(done);
    return;
  }
  op.captured = slot;
  op.capturedDone = done;
}

void Profiler::deviceResetAppending(ze_command_list_handle_t list, ze_event_handle_t event) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto l = impl_->objects.find(list);
  if (l == impl_->objects.end() || !event) return;
  // Operations of this list timed by the program's event, not yet covered.
  std::vector<std::shared_ptr<Op>> ops;
  if (l->second.immediate) {
    for (auto& inst : impl_->pending)
      if (inst.op->list == l->second.id && !inst.op->ownEvent && inst.op->event == event && !inst.op->captured)
        ops.push_back(inst.op);
  } else {
    for (auto& op : l->second.ops)
      if (!op->ownEvent && op->event == event && !op->captured) ops.push_back(op);
  }
  for (auto& op : ops) impl_->appendTimestampCopyLocked(list, l->second.context, *op, event, false);
}

void Profiler::programEventSignalling(ze_command_list_handle_t list, ze_event_handle_t event) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto e = impl_->programEvents.find(event);
  if (e == impl_->programEvents.end()) return;
  auto pool = impl_->objects.find(e->second);
  if (pool == impl_->objects.end() || !pool->second.counterBased) return;
  auto l = impl_->objects.find(list);
  if (l == impl_->objects.end()) return;
  // This call re-arms the event: its timestamps will be this call's. The
  // calls it timed before are read now if they have finished, else their
  // timestamps are copied on the device before this call can end (the list
  // is in order; a call on another list is waited for).
  auto& pending = impl_->pending;
  for (size_t i = 0; i < pending.size();) {
    Instance& inst = pending[i];
    if (!inst.immediate || inst.op->ownEvent || inst.op->event != event || inst.op->captured) {
      ++i;
      continue;
    }
    if (impl_->tryReadLocked(inst)) {
      impl_->finishInstanceLocked(inst);
      pending.erase(pending.begin() + static_cast<ptrdiff_t>(i));
      continue;
    }
    impl_->appendTimestampCopyLocked(list, l->second.context, *inst.op, event, inst.op->list != l->second.id);
    ++i;
  }
  // A regular list's earlier calls timed by the event run before this one.
  if (!l->second.immediate)
    for (auto& op : l->second.ops)
      if (!op->ownEvent && op->event == event && !op->captured)
        impl_->appendTimestampCopyLocked(list, l->second.context, *op, event, false);
}

void Profiler::contextDestroying(ze_context_handle_t context) {
  resolve();
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto& pending = impl_->pending;
  for (auto it = pending.begin(); it != pending.end();) {
    if (it->context == context) {
      impl_->emitLocked(*it, false, 0, 0, "its context was destroyed before gtap saw it complete");
      it = pending.erase(it);
    } else {
      ++it;
    }
  }
  auto set = impl_->gtapEvents.find(context);
  if (set == impl_->gtapEvents.end()) return;
  for (ze_event_handle_t e : set->second.all) {
    GTAP_ZE_REAL(zeEventDestroy)(e);
    impl_->gtapEventContext.erase(e);
  }
  for (ze_event_pool_handle_t p : set->second.pools) GTAP_ZE_REAL(zeEventPoolDestroy)(p);
  for (void* slab : set->second.slabs) GTAP_ZE_REAL(zeMemFree)(context, slab);
  impl_->gtapEvents.erase(set);
}

// --- device work -----------------------------------------------------------------

bool Profiler::shouldTimeKernel(ze_kernel_handle_t kernel) {
  const core::Config& c = core::config();
  if (!recordKernels() || c.dispatchRange) return false;
  if (c.kernelFilter.empty()) return true;
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto it = impl_->objects.find(kernel);
  return it != impl_->objects.end() && it->second.wanted;
}

bool Profiler::launchStarting(ze_command_list_handle_t list, ze_kernel_handle_t kernel, Op& op) {
  if (!recordKernels()) return false;
  const core::Config& c = core::config();
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto l = impl_->objects.find(list);
  if (l == impl_->objects.end()) return false;  // a list gtap did not see made: nothing is timed
  bool wanted = true;
  if (!c.kernelFilter.empty()) {
    auto k = impl_->objects.find(kernel);
    wanted = k != impl_->objects.end() && k->second.wanted;
  }
  // As replay numbers them: an immediate list's launch when it is appended
  // (refused or not), a regular list's at each execution of the list.
  if (l->second.immediate) {
    op.dispatch = impl_->dispatches++;
    return wanted && core::dispatchNumberWanted(op.dispatch);
  }
  op.listLaunch = l->second.launches++;
  return wanted;
}

void Profiler::launchFailed(ze_command_list_handle_t list, const Op& op) {
  if (op.listLaunch == kNoDispatch) return;
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto l = impl_->objects.find(list);
  if (l != impl_->objects.end() && l->second.launches) --l->second.launches;
}

ze_event_handle_t Profiler::eventForAppend(ze_command_list_handle_t list, ze_event_handle_t programEvent,
                                           bool& signalAfter, bool& known) {
  signalAfter = false;
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto l = impl_->objects.find(list);
  known = l != impl_->objects.end();
  if (!known) return programEvent;
  if (programEvent) {
    auto e = impl_->programEvents.find(programEvent);
    if (e != impl_->programEvents.end()) {
      auto p = impl_->objects.find(e->second);
      if (p != impl_->objects.end() && p->second.timestamps) return programEvent;
    }
  }
  ze_event_handle_t ours = impl_->acquireEventLocked(l->second.context, !l->second.immediate);
  if (!ours) return programEvent;
  signalAfter = programEvent != nullptr;
  return ours;
}

void Profiler::appended(ze_command_list_handle_t list, Op op, ze_event_handle_t event, bool ownEvent,
                        const core::CallScope& scope) {
  op.event = event;
  op.ownEvent = ownEvent;
  op.thread = threadIdOf(scope);
  op.appendIndex = scope.beginIndex();
  if (recordStacks()) op.stack = captureStack();
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto l = impl_->objects.find(list);
  if (l == impl_->objects.end()) return;
  op.list = l->second.id;
  op.device = l->second.device;
  if (op.kind == OpKind::kernel) {
    if (auto k = impl_->objects.find(reinterpret_cast<void*>(op.kernel)); k != impl_->objects.end()) {
      op.groupSize = k->second.groupSize;
      op.kernel = k->second.id;
    } else {
      op.kernel = 0;
    }
  }
  auto shared = std::make_shared<Op>(std::move(op));
  if (l->second.immediate) {
    shared->pending = true;
    impl_->pending.push_back({shared, shared->list, shared->appendTicks, shared->thread, true, l->second.context});
  } else {
    l->second.ops.push_back(std::move(shared));
  }
}

void Profiler::appendFailed(ze_command_list_handle_t, ze_event_handle_t event, bool ownEvent) {
  if (!ownEvent) return;
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->releaseEventLocked(event);
}

void Profiler::Impl::emitLocked(const Instance& inst, bool timed, uint64_t start, uint64_t end, std::string note) {
  const Op& op = *inst.op;
  core::profile::OpRecord r;
  r.recordedBy = schema::Api::LEVEL_ZERO;
  r.kind = opKind(op.kind);
  r.device = op.device;
  r.queue = inst.queue;
  r.list = op.list;
  r.kernel = op.kernel;
  r.groupCount = op.groupCount;
  r.groupSize = op.groupSize;
  r.bytes = op.bytes;
  r.direction = static_cast<schema::CopyDirection>(op.direction);
  r.thread = op.thread;
  r.appendIndex = op.appendIndex;
  r.appendTicks = op.appendTicks;
  r.submitTicks = inst.submitTicks;
  r.submitThread = inst.submitThread;
  r.timed = timed;
  r.start = start;
  r.end = end;
  r.completedNs = core::monotonicNs();
  r.note = std::move(note);
  if (recordStacks()) r.stack = op.stack;
  out.ops.push_back(std::move(r));
}

bool Profiler::Impl::tryReadLocked(const Instance& inst) {
  if (inst.op->capturedDone) {
    // The program's event was reset on the device: its copy is read instead.
    if (GTAP_ZE_REAL(zeEventQueryStatus)(inst.op->capturedDone) != ZE_RESULT_SUCCESS) return false;
    emitLocked(inst, true, inst.op->captured->global.kernelStart, inst.op->captured->global.kernelEnd, {});
    return true;
  }
  ze_event_handle_t e = inst.op->event;
  if (!e) return false;
  // One call while the work runs: the timestamp query answers NOT_READY for
  // an event not yet signaled. Only another answer needs the status asked.
  ze_kernel_timestamp_result_t ts{};
  ze_result_t read = GTAP_ZE_REAL(zeEventQueryKernelTimestamp)(e, &ts);
  if (read == ZE_RESULT_NOT_READY) return false;
  if (read == ZE_RESULT_SUCCESS) {
    emitLocked(inst, true, ts.global.kernelStart, ts.global.kernelEnd, {});
  } else {
    if (GTAP_ZE_REAL(zeEventQueryStatus)(e) != ZE_RESULT_SUCCESS) return false;
    emitLocked(inst, false, 0, 0, "the driver gave no kernel timestamp for its event");
  }
  if (inst.op->device != kNoDevice && inst.op->device < devices.size()) {
    DeviceInfo& d = devices[inst.op->device];
    if (core::monotonicNs() - d.lastSampleNs > kClockSampleIntervalNs) sampleClockLocked(d);
  }
  return true;
}

void Profiler::Impl::finishInstanceLocked(const Instance& inst) {
  inst.op->pending = false;
  // A single-use gtap event (immediate list) goes back to the free list; a
  // regular list's keeps its place in the list until the next execution.
  if (inst.immediate && inst.op->ownEvent) releaseEventLocked(inst.op->event);
  if (inst.immediate && inst.op->capturedDone) releaseEventLocked(inst.op->capturedDone);
}

void Profiler::resolve() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto& pending = impl_->pending;
  size_t kept = 0;
  for (size_t i = 0; i < pending.size(); ++i) {
    if (impl_->tryReadLocked(pending[i])) {
      impl_->finishInstanceLocked(pending[i]);
    } else {
      if (kept != i) pending[kept] = std::move(pending[i]);
      ++kept;
    }
  }
  pending.resize(kept);
}

void Profiler::executing(ze_command_queue_handle_t queue, uint32_t count, ze_command_list_handle_t* lists,
                         const core::CallScope& scope) {
  if (!lists) return;
  uint64_t ticks = core::nowTicks();
  uint32_t thread = threadIdOf(scope);
  std::lock_guard<std::mutex> lock(impl_->mu);
  uint64_t queueId = 0;
  if (auto q = impl_->objects.find(queue); q != impl_->objects.end()) queueId = q->second.id;
  for (uint32_t i = 0; i < count; ++i) {
    auto l = impl_->objects.find(lists[i]);
    if (l == impl_->objects.end()) continue;
    // This execution hands the list's launches to the device: they take the
    // next dispatch numbers, in list order.
    uint64_t firstDispatch = impl_->dispatches;
    impl_->dispatches += l->second.launches;
    for (auto& op : l->second.ops) {
      if (op->pending) {
        // The previous execution: read it now, before this one resets or
        // re-signals its event.
        auto prev = std::find_if(impl_->pending.begin(), impl_->pending.end(),
                                 [&](const Instance& in) { return in.op == op; });
        if (prev != impl_->pending.end()) {
          if (!impl_->tryReadLocked(*prev))
            impl_->emitLocked(*prev, false, 0, 0, "its list was executed again before gtap saw it complete");
          impl_->pending.erase(prev);
        }
        op->pending = false;
      }
      if (op->ownEvent) GTAP_ZE_REAL(zeEventHostReset)(op->event);
      if (op->capturedDone) GTAP_ZE_REAL(zeEventHostReset)(op->capturedDone);
      if (op->listLaunch != kNoDispatch && !core::dispatchNumberWanted(firstDispatch + op->listLaunch))
        continue;  // outside GTAP_DISPATCH_RANGE this time: its event signals unread
      op->pending = true;
      impl_->pending.push_back({op, queueId, ticks, thread, false, l->second.context});
    }
  }
}

void Profiler::listReset(ze_command_list_handle_t list) {
  resolve();
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto l = impl_->objects.find(list);
  if (l == impl_->objects.end()) return;
  for (auto& op : l->second.ops) {
    auto it = std::find_if(impl_->pending.begin(), impl_->pending.end(),
                           [&](const Instance& in) { return in.op == op; });
    if (it != impl_->pending.end()) {
      impl_->emitLocked(*it, false, 0, 0, "its list was reset or destroyed before gtap saw it complete");
      impl_->pending.erase(it);
    }
    // Not reset here: a regular list resets its events before each execution,
    // and an immediate list's use resets one when it takes it.
    if (op->ownEvent) impl_->releaseEventLocked(op->event, false);
    if (op->capturedDone) impl_->releaseEventLocked(op->capturedDone, false);
  }
  l->second.ops.clear();
  l->second.launches = 0;
}

void Profiler::programEventEnding(ze_event_handle_t event) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto& pending = impl_->pending;
  for (auto it = pending.begin(); it != pending.end();) {
    if (!it->op->ownEvent && it->op->event == event && !it->op->capturedDone) {
      if (!impl_->tryReadLocked(*it))
        impl_->emitLocked(*it, false, 0, 0, "the program reset or destroyed its event before gtap saw it complete");
      it->op->pending = false;
      it = pending.erase(it);
    } else {
      ++it;
    }
  }
}

// --- memory --------------------------------------------------------------------------

void Profiler::allocated(uint8_t kind, void* address, size_t size, size_t alignment, ze_device_handle_t device,
                         const core::CallScope& scope) {
  std::vector<uint64_t> stack;
  if (recordStacks() && recordMemory()) stack = captureStack();
  uint32_t thread = threadIdOf(scope);
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto k = static_cast<schema::MemoryKind>(kind);
  uint32_t dev = impl_->deviceIdLocked(device);
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
}

void produceChunks(core::ChunkSink& sink, bool final) { Profiler::get().produce(sink, final); }

__attribute__((constructor(103))) void registerProfiler() {
  core::registerChunkProducer(&produceChunks);
  core::registerExitWork(&exitWork);
}

}  // namespace

void Profiler::produce(core::ChunkSink& sink, bool) {
  core::profile::Outbox out;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    std::swap(out, impl_->out);
  }
  core::profile::writeProfileRecords(sink, out);
}

}  // namespace gtap::ze
