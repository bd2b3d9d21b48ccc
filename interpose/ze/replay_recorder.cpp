#include "replay_recorder.h"


#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <unordered_map>

#include "chunk_producer.h"
#include "clock.h"
#include "config.h"
#include "handle_index.h"
#include "host_memory.h"
#include "internal_error.h"
#include "log.h"
#include "real.h"
#include "session.h"

namespace gtap::ze {

namespace replay = core::replay;
using Op = schema::ReplayOp;

namespace {

uint32_t threadOf(const core::CallScope& scope) {
  return scope.thread() ? scope.thread()->id : core::currentThreadId();
}

uint64_t u(const void* p) { return reinterpret_cast<uint64_t>(p); }

struct Allocation {
  uint64_t id = 0;
  uint64_t size = 0;
  uint8_t kind = 0;  // schema::MemoryKind
  replay::PageHashes pages;  // host and shared: as last recorded
};

// A regular list's appended operation, as execution needs it.
struct ListOp {
  uint64_t seq = 0;
  ze_event_handle_t signal = nullptr;
  bool readBack = false;  // destination is not device memory
  const void* dst = nullptr;
  uint64_t dstOffset = 0, dstExtent = 0;
  bool hostSource = false;  // source outside every allocation: read at each execution
  bool launch = false;      // a kernel launch: numbered when executed
  const void* src = nullptr;
  uint64_t srcOffset = 0, srcExtent = 0;
};

struct ListState {
  bool immediate = false;
  bool synchronous = false;
  uint64_t position = 0;  // immediate: operations submitted so far
  std::vector<ListOp> ops;
};

struct QueueState {
  bool synchronous = false;
  uint64_t position = 0;  // operations submitted so far, in order
};

// A read-back the program has not yet been told is complete.
struct Pending {
  uint64_t copySeq = 0;
  const void* dst = nullptr;
  uint64_t offset = 0, extent = 0;
  const void* key = nullptr;  // queue or immediate list
  uint64_t position = 0;
};

struct Where {
  const void* key = nullptr;
  uint64_t position = 0;
};

void setDim3(schema::Dim3::Builder d, uint64_t x, uint64_t y, uint64_t z) {
  d.setX(x);
  d.setY(y);
  d.setZ(z);
}

// The operations whose struct names one object and at most a flag word, a
// timeout or a Dim3 (`values`, as the hook passed them).
void setOneObject(schema::ReplayRecord::Builder f, ReplayRecorder::Op op, uint64_t id,
                  const std::vector<uint64_t>& values) {
  using Op = ReplayRecorder::Op;
  auto value = [&](size_t i) { return i < values.size() ? values[i] : 0; };
  switch (op) {
    case Op::CONTEXT_DESTROY: f.initContextDestroy().setContext(id); return;
    case Op::MODULE_DESTROY: f.initModuleDestroy().setModule(id); return;
    case Op::KERNEL_DESTROY: f.initKernelDestroy().setKernel(id); return;
    case Op::KERNEL_SET_GROUP_SIZE: {
      auto k = f.initKernelSetGroupSize();
      k.setKernel(id);
      setDim3(k.initGroupSize(), value(0), value(1), value(2));
      return;
    }
    case Op::KERNEL_SET_INDIRECT_ACCESS: {
      auto k = f.initKernelSetIndirectAccess();
      k.setKernel(id);
      k.setFlags(static_cast<uint32_t>(value(0)));
      return;
    }
    case Op::KERNEL_SET_GLOBAL_OFFSET: {
      auto k = f.initKernelSetGlobalOffset();
      k.setKernel(id);
      setDim3(k.initOffset(), value(0), value(1), value(2));
      return;
    }
    case Op::QUEUE_DESTROY: f.initQueueDestroy().setQueue(id); return;
    case Op::LIST_CLOSE: f.initListClose().setList(id); return;
    case Op::LIST_RESET: f.initListReset().setList(id); return;
    case Op::LIST_DESTROY: f.initListDestroy().setList(id); return;
    case Op::EVENT_POOL_DESTROY: f.initEventPoolDestroy().setPool(id); return;
    case Op::EVENT_DESTROY: f.initEventDestroy().setEvent(id); return;
    case Op::EVENT_HOST_SIGNAL: f.initEventHostSignal().setEvent(id); return;
    case Op::EVENT_HOST_RESET: f.initEventHostReset().setEvent(id); return;
    case Op::EVENT_QUERY_STATUS: f.initEventQueryStatus().setEvent(id); return;
    case Op::EVENT_HOST_SYNCHRONIZE: {
      auto w = f.initEventHostSynchronize();
      w.setEvent(id);
      w.setTimeout(value(0));
      return;
    }
    case Op::FENCE_DESTROY: f.initFenceDestroy().setFence(id); return;
    case Op::FENCE_RESET: f.initFenceReset().setFence(id); return;
    case Op::FENCE_QUERY_STATUS: f.initFenceQueryStatus().setFence(id); return;
    case Op::FENCE_HOST_SYNCHRONIZE: {
      auto w = f.initFenceHostSynchronize();
      w.setFence(id);
      w.setTimeout(value(0));
      return;
    }
    case Op::QUEUE_SYNCHRONIZE: {
      auto w = f.initQueueSynchronize();
      w.setQueue(id);
      w.setTimeout(value(0));
      return;
    }
    default:
      // A hook passed an operation this does not make: replay must stop on it.
      f.initUnsupported().setReason("an operation recorded without its fields");
      return;
  }
}

}  // namespace

// Appends to a regular list are recorded without the lock: Level Zero leaves
// a command list to one thread at a time, so its state is the appending
// thread's, and ids and lists are looked up lock-free (HandleMap). Everything
// else (creation and destruction, which write those maps; submissions,
// immediate lists, copies and fills, which read host memory or the table of
// allocations) holds `mu`.
struct ReplayRecorder::Impl {
  std::mutex mu;
  HandleMap<uint64_t> ids;
  std::map<uint64_t, Allocation> allocations;  // by address
  HandleIndex<ListState> lists;
  std::unordered_map<const void*, std::unique_ptr<ListState>> listStates;  // owns what `lists` points to
  std::unordered_map<const void*, QueueState> queues;
  std::unordered_map<const void*, Where> eventWhere, fenceWhere;
  std::vector<Pending> pending;
  uint64_t dispatches = 0;
  replay::HostBytes hostBytes;  // sources outside every allocation

  uint64_t idOf(const void* h) const { return ids.find(h); }
  uint64_t make(const void* h) {
    uint64_t id = replay::newId();
    ids.put(h, id);
    return id;
  }
  void newList(const void* h, ListState state) {
    auto owned = std::make_unique<ListState>(std::move(state));
    lists.put(h, owned.get());
    listStates[h] = std::move(owned);
  }

  const std::pair<const uint64_t, Allocation>* allocationAt(const void* p) const {
    uint64_t a = u(p);
    auto it = allocations.upper_bound(a);
    if (it == allocations.begin()) return nullptr;
    --it;
    return a < it->first + it->second.size ? &*it : nullptr;
  }

  replay::Record record(uint64_t seq, const core::CallScope& scope) {
    replay::Record r;
    r.seq = seq;
    r.thread = threadOf(scope);
    r.function = scope.function();
    r.ticks = core::nowTicks();
    return r;
  }

  // A command appended to `list`: its kind, place, list, event and the ids
  // of its c.eventCount `events` (the caller sets the rest).
  void commandOf(replay::ListCommand& c, replay::ListCommand::Kind kind, uint64_t seq, const core::CallScope& scope,
                 const void* list, const void* event, ze_event_handle_t* events) const {
    c.kind = kind;
    c.seq = seq;
    c.thread = threadOf(scope);
    c.function = scope.function();
    c.ticks = core::nowTicks();
    c.list = idOf(list);
    c.event = idOf(event);
    for (uint32_t i = 0; i < c.eventCount; ++i) c.events()[i] = idOf(events[i]);
  }
  // In the thread's buffer, when it can be (see beginListCommand).
  template <typename Fill>
  static bool recordDirect(uint32_t eventCount, Fill& fill) {
    replay::ListCommand* c = replay::beginListCommand(eventCount);
    if (!c) return false;
    fill(*c);
    replay::commitListCommand(c);
    return true;
  }
  // As a Record for the locked path.
  template <typename Fill>
  static replay::Record commandRecord(uint32_t eventCount, Fill& fill) {
    std::vector<uint64_t> room(sizeof(replay::ListCommand) / 8 + eventCount);
    auto* c = new (room.data()) replay::ListCommand();
    c->eventCount = eventCount;
    fill(*c);
    return replay::listCommandRecord(*c);
  }

  template <typename Builder>
  void setIds(Builder&& list, uint32_t n, const void* const* handles) {
    for (uint32_t i = 0; i < n; ++i) list.set(i, idOf(handles[i]));
  }
  // An append's signal event and the events it waits for.
  template <typename Op>
  void setEvents(Op op, ze_event_handle_t signal, uint32_t n, ze_event_handle_t* events) {
    op.setSignal(idOf(signal));
    if (!events) n = 0;
    setIds(op.initWaits(n), n, reinterpret_cast<const void* const*>(events));
  }

  // Whether page `i` of the allocation at `address` may be written by a copy
  // still in flight: its bytes are the device's, half-written now, and replay
  // writes them itself.
  bool inFlight(uint64_t address, size_t i) const {
    uint64_t first = address + i * replay::kPage, last = first + replay::kPage;
    for (const Pending& p : pending) {
      uint64_t d = u(p.dst) + p.offset;
      if (d < last && first < d + p.extent) return true;
    }
    return false;
  }

  // A read-back's destination now holds what the device wrote: pages wholly
  // inside it take their new hash, so the next submission does not record the
  // device's bytes as the program's. (A page it shares with other bytes is
  // left to be compared as usual.)
  void deviceWrote(uint64_t dst, uint64_t size) {
    auto* a = allocationAt(reinterpret_cast<const void*>(dst));
    if (!a) return;
    Allocation& alloc = allocations[a->first];
    alloc.pages.refresh(reinterpret_cast<const uint8_t*>(a->first), alloc.size, dst - a->first, size);
  }

  // Host and shared allocations: the runs of pages that changed since they
  // were last recorded become hostData records.
  void recordHostChanges(uint32_t thread) {
    for (auto& [address, a] : allocations) {
      if (a.kind != static_cast<uint8_t>(schema::MemoryKind::HOST) &&
          a.kind != static_cast<uint8_t>(schema::MemoryKind::SHARED))
        continue;
      a.pages.changedRuns(
          reinterpret_cast<const uint8_t*>(address), a.size,
          [&](size_t i) { return !pending.empty() && inFlight(address, i); },
          [&](uint64_t offset, uint64_t length) { replay::addAllocationData(thread, a.id, address, offset, length); });
    }
  }

  // Writes the read-backs the program now knows are complete.
  template <typename Pred>
  void completeWhere(uint32_t thread, Pred&& done) {
    size_t kept = 0;
    for (size_t i = 0; i < pending.size(); ++i) {
      const Pending& p = pending[i];
      if (!done(p)) {
        pending[kept++] = p;
        continue;
      }
      replay::Record r;
      r.seq = replay::nextSeq();
      r.thread = thread;
      auto b = r.fields().initReadBack();
      b.setCopy(p.copySeq);
      b.setOffset(p.offset);
      b.setDst(u(p.dst) + p.offset);
      r.payload = replay::blobPayload(static_cast<const uint8_t*>(p.dst) + p.offset, p.extent);
      r.ticks = core::nowTicks();
      replay::add(std::move(r));
      deviceWrote(u(p.dst) + p.offset, p.extent);
    }
    pending.resize(kept);
  }
  void completeUpTo(uint32_t thread, Where w) {
    completeWhere(thread, [&](const Pending& p) { return p.key == w.key && p.position <= w.position; });
  }

  // An appended operation: a regular list keeps it for its executions; on an
  // immediate list it is submitted now, in the list's order.
  void appendedToList(const void* list, const ListOp& op, uint32_t thread) {
    ListState* l = lists.find(list);
    if (!l) return;
    ListState& s = *l;
    if (!s.immediate) {
      s.ops.push_back(op);
      return;
    }
    ++s.position;
    if (op.signal) eventWhere[op.signal] = {list, s.position};
    if (op.readBack) pending.push_back({op.seq, op.dst, op.dstOffset, op.dstExtent, list, s.position});
    if (s.synchronous) completeUpTo(thread, {list, s.position});
  }

  void forget(const void* handle) {
    ids.erase(handle);
    lists.erase(handle);
    listStates.erase(handle);
    queues.erase(handle);
    eventWhere.erase(handle);
    fenceWhere.erase(handle);
    std::erase_if(pending, [&](const Pending& p) { return p.key == handle; });
  }
};

bool replaying(const core::CallScope& scope) {
  return !scope.nested() && core::replay::enabled() && threadOf(scope) != ~0u;
}

ReplayRecorder& ReplayRecorder::get() {
  static ReplayRecorder* r = new ReplayRecorder();  // used until the very end of the process
  return *r;
}

ReplayRecorder::ReplayRecorder() : impl_(std::make_unique<Impl>()) {}

void ReplayRecorder::devicesSeen(ze_driver_handle_t driver, uint32_t count, ze_device_handle_t* devices,
                                 const core::CallScope& scope) {
  uint32_t driverIndex = 0;
  uint32_t drivers = 0;
  if (GTAP_ZE_REAL(zeDriverGet)(&drivers, nullptr) == ZE_RESULT_SUCCESS && drivers) {
    std::vector<ze_driver_handle_t> all(drivers);
    if (GTAP_ZE_REAL(zeDriverGet)(&drivers, all.data()) == ZE_RESULT_SUCCESS)
      for (uint32_t i = 0; i < drivers; ++i)
        if (all[i] == driver) driverIndex = i;
  }
  std::lock_guard<std::mutex> lock(impl_->mu);
  for (uint32_t i = 0; i < count; ++i) {
    if (!devices[i] || impl_->idOf(devices[i])) continue;
    ze_device_properties_t props{};
    props.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
    bool named = GTAP_ZE_REAL(zeDeviceGetProperties)(devices[i], &props) == ZE_RESULT_SUCCESS;
    auto r = impl_->record(begin(), scope);
    auto d = r.fields().initDevice();
    d.setDevice(impl_->make(devices[i]));
    d.setDriverIndex(driverIndex);
    d.setDeviceIndex(i);
    d.setVendorId(named ? props.vendorId : 0u);
    d.setDeviceId(named ? props.deviceId : 0u);
    if (named) d.setName(props.name);
    replay::add(std::move(r));
  }
}

void ReplayRecorder::contextCreated(uint64_t seq, const core::CallScope& scope, ze_context_handle_t context,
                                    const ze_context_desc_t* desc, uint32_t numDevices, ze_device_handle_t* devices) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto r = impl_->record(seq, scope);
  auto c = r.fields().initContextCreate();
  c.setContext(impl_->make(context));
  if (!devices) numDevices = 0;
  impl_->setIds(c.initDevices(numDevices), numDevices, reinterpret_cast<const void* const*>(devices));
  c.setFlags(desc ? desc->flags : 0u);
  replay::add(std::move(r));
}

void ReplayRecorder::moduleCreated(uint64_t seq, const core::CallScope& scope, ze_module_handle_t module,
                                   ze_context_handle_t context, ze_device_handle_t device,
                                   const ze_module_desc_t* desc) {
  // Hashed and kept outside the lock: binaries can be large.
  replay::Payload binary;
  if (desc && desc->pInputModule) binary = replay::blobPayload(desc->pInputModule, desc->inputSize);
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto r = impl_->record(seq, scope);
  auto m = r.fields().initModuleCreate();
  m.setModule(impl_->make(module));
  m.setContext(impl_->idOf(context));
  m.setDevice(impl_->idOf(device));
  m.setFormat(desc ? static_cast<uint32_t>(desc->format) : 0u);
  if (desc && desc->pBuildFlags && *desc->pBuildFlags) m.setBuildFlags(desc->pBuildFlags);
  r.payload = std::move(binary);
  replay::add(std::move(r));
}

void ReplayRecorder::kernelCreated(uint64_t seq, const core::CallScope& scope, ze_kernel_handle_t kernel,
                                   ze_module_handle_t module, const ze_kernel_desc_t* desc) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto r = impl_->record(seq, scope);
  auto k = r.fields().initKernelCreate();
  k.setKernel(impl_->make(kernel));
  k.setModule(impl_->idOf(module));
  k.setFlags(desc ? desc->flags : 0u);
  k.setName(desc && desc->pKernelName ? desc->pKernelName : "");
  replay::add(std::move(r));
}

void ReplayRecorder::kernelArgument(uint64_t seq, const core::CallScope& scope, ze_kernel_handle_t kernel,
                                    uint32_t index, size_t size, const void* value) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto r = impl_->record(seq, scope);
  auto k = r.fields().initKernelSetArgument();
  k.setKernel(impl_->idOf(kernel));
  k.setIndex(index);
  k.setSize(size);
  k.setHasValue(static_cast<uint8_t>(value ? 1 : 0));
  r.payload = replay::inlinePayload(value, value ? size : 0);
  r.payload.size = size;
  replay::add(std::move(r));
}

void ReplayRecorder::queueCreated(uint64_t seq, const core::CallScope& scope, ze_command_queue_handle_t queue,
                                  ze_context_handle_t context, ze_device_handle_t device,
                                  const ze_command_queue_desc_t* desc) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto r = impl_->record(seq, scope);
  auto q = r.fields().initQueueCreate();
  q.setQueue(impl_->make(queue));
  q.setContext(impl_->idOf(context));
  q.setDevice(impl_->idOf(device));
  if (desc) {
    q.setOrdinal(desc->ordinal);
    q.setIndex(desc->index);
    q.setFlags(desc->flags);
    q.setMode(static_cast<uint32_t>(desc->mode));
    q.setPriority(static_cast<uint32_t>(desc->priority));
  }
  impl_->queues[queue] = {desc && desc->mode == ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS, 0};
  replay::add(std::move(r));
}

void ReplayRecorder::listCreated(uint64_t seq, const core::CallScope& scope, ze_command_list_handle_t list,
                                 ze_context_handle_t context, ze_device_handle_t device,
                                 const ze_command_list_desc_t* desc) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto r = impl_->record(seq, scope);
  auto l = r.fields().initListCreate();
  l.setList(impl_->make(list));
  l.setContext(impl_->idOf(context));
  l.setDevice(impl_->idOf(device));
  if (desc) {
    l.setOrdinal(desc->commandQueueGroupOrdinal);
    l.setFlags(desc->flags);
  }
  impl_->newList(list, {});
  replay::add(std::move(r));
}

void ReplayRecorder::immediateListCreated(uint64_t seq, const core::CallScope& scope, ze_command_list_handle_t list,
                                          ze_context_handle_t context, ze_device_handle_t device,
                                          const ze_command_queue_desc_t* desc) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto r = impl_->record(seq, scope);
  auto i = r.fields().initListCreateImmediate();
  i.setList(impl_->make(list));
  i.setContext(impl_->idOf(context));
  i.setDevice(impl_->idOf(device));
  if (desc) {
    i.setOrdinal(desc->ordinal);
    i.setIndex(desc->index);
    i.setFlags(desc->flags);
    i.setMode(static_cast<uint32_t>(desc->mode));
    i.setPriority(static_cast<uint32_t>(desc->priority));
  }
  ListState l;
  l.immediate = true;
  l.synchronous = desc && desc->mode == ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS;
  impl_->newList(list, std::move(l));
  replay::add(std::move(r));
}

void ReplayRecorder::eventPoolCreated(uint64_t seq, const core::CallScope& scope, ze_event_pool_handle_t pool,
                                      ze_context_handle_t context, const ze_event_pool_desc_t* desc,
                                      uint32_t numDevices, ze_device_handle_t* devices) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto r = impl_->record(seq, scope);
  auto p = r.fields().initEventPoolCreate();
  p.setPool(impl_->make(pool));
  p.setContext(impl_->idOf(context));
  if (!devices) numDevices = 0;
  impl_->setIds(p.initDevices(numDevices), numDevices, reinterpret_cast<const void* const*>(devices));
  p.setFlags(desc ? desc->flags : 0u);
  p.setCount(desc ? desc->count : 0u);
  replay::add(std::move(r));
}

void ReplayRecorder::eventCreated(uint64_t seq, const core::CallScope& scope, ze_event_handle_t event,
                                  ze_event_pool_handle_t pool, const ze_event_desc_t* desc) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto r = impl_->record(seq, scope);
  auto e = r.fields().initEventCreate();
  e.setEvent(impl_->make(event));
  e.setPool(impl_->idOf(pool));
  if (desc) {
    e.setIndex(desc->index);
    e.setSignalScope(desc->signal);
    e.setWaitScope(desc->wait);
  }
  replay::add(std::move(r));
}

void ReplayRecorder::fenceCreated(uint64_t seq, const core::CallScope& scope, ze_fence_handle_t fence,
                                  ze_command_queue_handle_t queue, const ze_fence_desc_t* desc) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto r = impl_->record(seq, scope);
  auto f = r.fields().initFenceCreate();
  f.setFence(impl_->make(fence));
  f.setQueue(impl_->idOf(queue));
  f.setFlags(desc ? desc->flags : 0u);
  replay::add(std::move(r));
}

void ReplayRecorder::simple(uint64_t seq, const core::CallScope& scope, Op op, const void* handle,
                            std::vector<uint64_t> values) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto r = impl_->record(seq, scope);
  setOneObject(r.fields(), op, impl_->idOf(handle), values);
  if (op == Op::LIST_RESET) {
    if (ListState* l = impl_->lists.find(handle)) l->ops.clear();
  } else if (op == Op::EVENT_HOST_RESET) {
    impl_->eventWhere.erase(handle);
  }
  replay::add(std::move(r));
}

void ReplayRecorder::destroyed(uint64_t seq, const core::CallScope& scope, Op op, const void* handle) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto r = impl_->record(seq, scope);
  setOneObject(r.fields(), op, impl_->idOf(handle), {});
  replay::add(std::move(r));
  impl_->forget(handle);
}

void ReplayRecorder::memAllocated(uint64_t seq, const core::CallScope& scope, uint8_t kind,
                                  ze_context_handle_t context, ze_device_handle_t device, size_t size,
                                  size_t alignment, void* ptr) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  uint64_t id = replay::newId();
  auto r = impl_->record(seq, scope);
  auto m = r.fields().initMemAlloc();
  m.setAllocation(id);
  m.setContext(impl_->idOf(context));
  m.setDevice(impl_->idOf(device));
  m.setKind(kind);
  m.setSize(size);
  m.setAlignment(alignment);
  m.setAddress(u(ptr));
  impl_->allocations[u(ptr)] = {id, size, kind, {}};
  replay::add(std::move(r));
}

uint64_t ReplayRecorder::memFreeing(const core::CallScope& scope, ze_context_handle_t context, void* ptr) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto it = impl_->allocations.find(u(ptr));
  if (it == impl_->allocations.end()) return 0;
  uint64_t seq = begin();
  auto r = impl_->record(seq, scope);
  auto m = r.fields().initMemFree();
  m.setAllocation(it->second.id);
  m.setContext(impl_->idOf(context));
  m.setAddress(u(ptr));
  replay::add(std::move(r));
  impl_->allocations.erase(it);
  return seq;
}

ReplayRecorder::Append ReplayRecorder::appending(const core::CallScope& scope, ze_command_list_handle_t list,
                                                 bool launch) {
  Append a;
  uint32_t thread = threadOf(scope);
  ListState* l = impl_->lists.find(list);
  if (!l || !l->immediate) {
    // A regular list's append: only its seq, without the lock. Its launches
    // are numbered at each execution.
    a.seq = begin();
    return a;
  }
  // On an immediate list the append is a submission: host memory first.
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->hostBytes.newSubmission();
  impl_->recordHostChanges(thread);
  if (launch) {
    a.dispatch = impl_->dispatches++;
    replay::dispatchesStarting(a.dispatch, 1, thread);
  }
  a.seq = begin();
  return a;
}

void ReplayRecorder::launched(const Append& a, const core::CallScope& scope, ze_command_list_handle_t list,
                              ze_kernel_handle_t kernel, const ze_group_count_t* groups, bool cooperative,
                              ze_event_handle_t signal, uint32_t numWaits, ze_event_handle_t* waits) {
  if (!waits) numWaits = 0;
  const uint32_t thread = threadOf(scope);
  auto fill = [&](replay::ListCommand& c) {
    impl_->commandOf(c, replay::ListCommand::Kind::launch, a.seq, scope, list, signal, waits);
    c.kernel = impl_->idOf(kernel);
    if (groups) {
      c.hasGroups = true;
      c.groups[0] = groups->groupCountX;
      c.groups[1] = groups->groupCountY;
      c.groups[2] = groups->groupCountZ;
    }
    c.cooperative = cooperative;
    c.dispatch = a.dispatch;
  };
  ListOp op;
  op.seq = a.seq;
  op.signal = signal;
  op.launch = true;
  if (ListState* l = impl_->lists.find(list); l && !l->immediate && Impl::recordDirect(numWaits, fill)) {
    // Kept for the list's executions; no lock, no allocation but the list's
    // own growth.
    l->ops.push_back(op);
    return;
  }
  std::lock_guard<std::mutex> lock(impl_->mu);
  replay::add(Impl::commandRecord(numWaits, fill));
  impl_->appendedToList(list, op, thread);
  if (a.dispatch != ~uint64_t{0}) replay::dispatchesDone(a.dispatch, 1, thread);
}

namespace {
// Bytes from the region's first to its last, relative to the base pointer.
void regionSpan(const ze_copy_region_t* r, uint32_t pitch, uint32_t slicePitch, uint64_t& offset, uint64_t& extent) {
  uint64_t depth = std::max<uint32_t>(r->depth, 1), height = std::max<uint32_t>(r->height, 1);
  offset = uint64_t{r->originZ} * slicePitch + uint64_t{r->originY} * pitch + r->originX;
  extent = (depth - 1) * slicePitch + (height - 1) * pitch + r->width;
}
}  // namespace

void ReplayRecorder::copied(const Append& a, const core::CallScope& scope, ze_command_list_handle_t list, void* dst,
                            const void* src, size_t size, const Region* region, ze_event_handle_t signal,
                            uint32_t numWaits, ze_event_handle_t* waits) {
  uint32_t thread = threadOf(scope);
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto r = impl_->record(a.seq, scope);
  ListOp op;
  op.seq = a.seq;
  op.signal = signal;
  op.dst = dst;
  op.src = src;
  op.dstExtent = op.srcExtent = size;
  // Written once it is known whether the copy is recorded or refused.
  auto setCopy = [&](schema::ReplayRecord::Builder f) {
    if (region) {
      const ze_copy_region_t *d = region->dst, *s = region->src;
      auto c = f.initCopyRegion();
      c.setList(impl_->idOf(list));
      impl_->setEvents(c, signal, numWaits, waits);
      setDim3(c.initDstOrigin(), d->originX, d->originY, d->originZ);
      setDim3(c.initDstExtent(), d->width, d->height, d->depth);
      c.setDstPitch(region->dstPitch);
      c.setDstSlicePitch(region->dstSlicePitch);
      setDim3(c.initSrcOrigin(), s->originX, s->originY, s->originZ);
      setDim3(c.initSrcExtent(), s->width, s->height, s->depth);
      c.setSrcPitch(region->srcPitch);
      c.setSrcSlicePitch(region->srcSlicePitch);
      c.setDst(u(dst));
      c.setSrc(u(src));
    } else {
      auto c = f.initCopy();
      c.setList(impl_->idOf(list));
      impl_->setEvents(c, signal, numWaits, waits);
      c.setSize(size);
      c.setDst(u(dst));
      c.setSrc(u(src));
    }
  };
  if (region) {
    regionSpan(region->dst, region->dstPitch, region->dstSlicePitch, op.dstOffset, op.dstExtent);
    regionSpan(region->src, region->srcPitch, region->srcSlicePitch, op.srcOffset, op.srcExtent);
  }
  auto* dstAlloc = impl_->allocationAt(dst);
  op.readBack = !dstAlloc || dstAlloc->second.kind != static_cast<uint8_t>(schema::MemoryKind::DEVICE);
  // A region copy's read-back would hold the bytes between its rows too,
  // which the copy never writes: only contiguous regions are compared.
  if (region && op.readBack) {
    const ze_copy_region_t* d = region->dst;
    bool contiguous = (d->height <= 1 || region->dstPitch == d->width) &&
                      (d->depth <= 1 || region->dstSlicePitch == uint64_t{d->width} * std::max<uint32_t>(d->height, 1));
    op.readBack = contiguous;
  }
  op.hostSource = src && !impl_->allocationAt(src);
  ListState* l = impl_->lists.find(list);
  bool immediate = l && l->immediate;
  if (immediate && op.hostSource) {
    // Read now: the device reads it from this append on.
    impl_->hostBytes.newSubmission();
    std::string refusal;
    r.payload = impl_->hostBytes.read(static_cast<const uint8_t*>(src) + op.srcOffset, op.srcExtent, refusal);
    if (!refusal.empty()) {
      r.payload = {};
      r.fields().initUnsupported().setReason(refusal);
    }
  }
  if (!r.message) setCopy(r.fields());
  replay::add(std::move(r));
  impl_->appendedToList(list, op, thread);
}

void ReplayRecorder::filled(const Append& a, const core::CallScope& scope, ze_command_list_handle_t list, void* dst,
                            const void* pattern, size_t patternSize, size_t size, ze_event_handle_t signal,
                            uint32_t numWaits, ze_event_handle_t* waits) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto r = impl_->record(a.seq, scope);
  auto f = r.fields().initFill();
  f.setList(impl_->idOf(list));
  impl_->setEvents(f, signal, numWaits, waits);
  f.setSize(size);
  f.setDst(u(dst));
  r.payload = replay::inlinePayload(pattern, patternSize);
  replay::add(std::move(r));
  impl_->appendedToList(list, {a.seq, signal}, threadOf(scope));
}

void ReplayRecorder::listOp(const Append& a, const core::CallScope& scope, Op op, ze_command_list_handle_t list,
                            ze_event_handle_t signal, uint32_t numEvents, ze_event_handle_t* events) {
  using Kind = replay::ListCommand::Kind;
  if (!events || op == Op::SIGNAL_EVENT || op == Op::EVENT_RESET) numEvents = 0;
  Kind kind = op == Op::BARRIER          ? Kind::barrier
              : op == Op::WAIT_ON_EVENTS ? Kind::waitOnEvents
              : op == Op::SIGNAL_EVENT   ? Kind::signalEvent
                                         : Kind::eventReset;
  auto fill = [&](replay::ListCommand& c) {
    impl_->commandOf(c, kind, a.seq, scope, list, kind == Kind::waitOnEvents ? nullptr : signal, events);
  };
  // The event a signal or barrier sets tells, once the program sees it set,
  // that the work before it on this list finished.
  ze_event_handle_t sets = (op == Op::BARRIER || op == Op::SIGNAL_EVENT) ? signal : nullptr;
  if (ListState* l = impl_->lists.find(list); l && !l->immediate && Impl::recordDirect(numEvents, fill)) {
    l->ops.push_back({a.seq, sets});
    return;
  }
  std::lock_guard<std::mutex> lock(impl_->mu);
  replay::add(Impl::commandRecord(numEvents, fill));
  impl_->appendedToList(list, {a.seq, sets}, threadOf(scope));
}

uint64_t ReplayRecorder::executing(const core::CallScope& scope, ze_command_queue_handle_t queue, uint32_t count,
                                   ze_command_list_handle_t* lists, ze_fence_handle_t fence) {
  uint32_t thread = threadOf(scope);
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->hostBytes.newSubmission();
  impl_->recordHostChanges(thread);
  for (uint32_t i = 0; lists && i < count; ++i) {
    ListState* l = impl_->lists.find(lists[i]);
    if (!l) continue;
    for (const ListOp& op : l->ops)
      if (op.hostSource) impl_->hostBytes.addCopySource(thread, op.seq, op.src, op.srcOffset, op.srcExtent);
  }
  uint64_t launches = 0;
  for (uint32_t i = 0; lists && i < count; ++i)
    if (ListState* l = impl_->lists.find(lists[i]))
      for (const ListOp& op : l->ops) launches += op.launch;
  uint64_t firstDispatch = impl_->dispatches;
  impl_->dispatches += launches;
  replay::dispatchesStarting(firstDispatch, launches, thread);
  uint64_t seq = begin();
  auto r = impl_->record(seq, scope);
  auto e = r.fields().initExecute();
  e.setQueue(impl_->idOf(queue));
  e.setFence(impl_->idOf(fence));
  uint32_t listCount = lists ? count : 0;
  impl_->setIds(e.initLists(listCount), listCount, reinterpret_cast<const void* const*>(lists));
  e.setFirstDispatch(firstDispatch);
  e.setDispatches(launches);
  replay::add(std::move(r));
  replay::dispatchesDone(firstDispatch, launches, thread);
  // Where each operation falls in the queue's order, so a later wait tells
  // which read-backs it completed. Registered before the call: another thread
  // may wait for this work as soon as it is submitted.
  QueueState& q = impl_->queues[queue];
  for (uint32_t i = 0; lists && i < count; ++i) {
    ListState* l = impl_->lists.find(lists[i]);
    if (!l) continue;
    for (const ListOp& op : l->ops) {
      ++q.position;
      if (op.signal) impl_->eventWhere[op.signal] = {queue, q.position};
      if (op.readBack) impl_->pending.push_back({op.seq, op.dst, op.dstOffset, op.dstExtent, queue, q.position});
    }
  }
  if (fence) impl_->fenceWhere[fence] = {queue, q.position};
  return seq;
}

void ReplayRecorder::executed(uint64_t seq, const core::CallScope& scope, ze_command_queue_handle_t queue,
                              ze_result_t result) {
  if (result != ZE_RESULT_SUCCESS) {
    failed(seq, scope);
    return;
  }
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto q = impl_->queues.find(queue);
  if (q != impl_->queues.end() && q->second.synchronous)
    impl_->completeUpTo(threadOf(scope), {queue, q->second.position});
}

void ReplayRecorder::waited(const core::CallScope& scope, Op op, const void* handle, uint64_t timeout) {
  uint32_t thread = threadOf(scope);
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto r = impl_->record(begin(), scope);
  setOneObject(r.fields(), op, impl_->idOf(handle), {timeout});
  replay::add(std::move(r));
  switch (op) {
    case Op::QUEUE_SYNCHRONIZE:
      impl_->completeWhere(thread, [&](const Pending& p) { return p.key == handle; });
      break;
    case Op::FENCE_HOST_SYNCHRONIZE:
    case Op::FENCE_QUERY_STATUS:
      if (auto f = impl_->fenceWhere.find(handle); f != impl_->fenceWhere.end()) impl_->completeUpTo(thread, f->second);
      break;
    default:
      if (auto e = impl_->eventWhere.find(handle); e != impl_->eventWhere.end()) impl_->completeUpTo(thread, e->second);
      break;
  }
}

void ReplayRecorder::unsupported(const core::CallScope& scope, std::string reason) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto r = impl_->record(begin(), scope);
  r.fields().initUnsupported().setReason(reason);
  replay::add(std::move(r));
}

void ReplayRecorder::failed(uint64_t seq, const core::CallScope& scope) {
  if (replay::retract(seq)) return;
  // Already written: replay must not take it for work that happened.
  unsupported(scope, "record " + std::to_string(seq) + " was written before its call failed");
}

// After the runtime call, from a generated wrapper: gtap's failure here
// leaves the call's result as it is.
void replayUnsupported(const core::CallScope& scope, const char* name) {
  if (!replaying(scope)) return;
  try {
    ReplayRecorder::get().unsupported(scope, std::string(name) + " is not replayed");
  } GTAP_CATCH_INTERNAL {
    core::stopAfterInternalError("recording a Level Zero call for replay");
  }
}

}  // namespace gtap::ze
