#include "recorder.h"

#include <array>
#include <atomic>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "chunk_producer.h"
#include "clock.h"
#include "device_work.h"
#include "dispatch_thunks.h"
#include "log.h"
#include "profile_records.h"
#include "session.h"
#include "work_in_flight.h"

namespace gtap::hal {

namespace {

using core::profile::ObjectRecord;
using core::profile::OpRecord;
using core::recordKernels;
using core::recordMemory;

// Caps on what one record copies from the program's memory.
constexpr uint64_t kMaxBindings = 4096;
constexpr uint64_t kMaxConstantBytes = 4096;
constexpr uint64_t kMaxExecutableBytes = uint64_t{1} << 30;
constexpr uint64_t kMaxSemaphores = 4096;
// The device that runs dispatches on IREE's CPU drivers: the host. Its ticks
// are host nanoseconds.
constexpr uint32_t kHostDevice = 0xfffffff0u;

struct Kernel {
  uint64_t id = 0;
  std::array<uint32_t, 3> workgroupSize{};  // from the export's info (0s when unknown)
  bool wanted = true;                       // its name passes GTAP_KERNEL_FILTER
};

struct Executable {
  uint64_t id = 0;
  std::map<uint64_t, Kernel> kernels;  // function token -> its kernel object
};

// A dispatch running on a CPU driver, from its first workgroup's start to
// its last one's end (the workgroups may run on several worker threads).
struct HostDispatch {
  uint64_t number = 0;  // host executions numbered in the order they start (GTAP_DISPATCH_RANGE)
  int64_t startNs = 0;
  uint32_t thread = ~0u;
  uint64_t ticks = 0;
  std::array<uint32_t, 3> count{}, size{};
};

struct Recorder {
  std::mutex mu;
  // The dispatches running on CPU drivers, keyed by executable, export
  // ordinal and the dispatch state's binding pointers (shared by its
  // workgroups, whatever worker runs them): each workgroup's start and end
  // are counted without a lock. The worker that ends the last workgroup only
  // leaves the dispatch there, finished, to be recorded under `mu`: the
  // driver signals the dispatch's end when the function returns, and a
  // program waiting for it (spinning, then sleeping) should not wait for
  // gtap's records too.
  core::WorkInFlight<HostDispatch> running;
  uint64_t hostExecutions = 0;  // host executions started (counted as running makes them)
  std::atomic<uint64_t> dispatches{0};  // the program's dispatches recorded into command buffers
  bool hostDevice = false;  // its DeviceRecord written
  core::profile::Outbox out;
  std::unordered_map<uint64_t, Executable> executables;     // executable object address
  std::unordered_map<uint64_t, uint64_t> commandBuffers;    // command buffer address -> object id
  std::unordered_map<uint64_t, uint64_t> devices;           // device address -> object id
  // allocated buffer address -> kind and size
  std::unordered_map<uint64_t, std::pair<schema::MemoryKind, uint64_t>> buffers;
  std::unordered_map<const void*, ExecutableVtable> executableVtables;  // hooked executable vtables
  std::set<const void*> thunksRefused;  // executable vtables whose refusal of thunks was logged
  bool thunksExhaustedLogged = false;
  std::set<std::string> unrecordedWaits;  // images whose list waits gtap said it does not see
};

// Workgroups counted and still running on this thread: a workgroup that
// starts inside one (a driver's issue_call calling the export's function
// through gtap's thunk) is the same workgroup.
__thread uint32_t t_hostWorkgroups __attribute__((tls_model("initial-exec"))) = 0;

Recorder& recorder() {
  static auto* r = new Recorder();  // outlives static destructors: calls may come after them
  return *r;
}

uint64_t load64(const void* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

uint32_t load32(const void* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

bool printable(const char* s, uint64_t n) {
  if (!s || n == 0 || n > 256) return false;
  for (uint64_t i = 0; i < n; ++i)
    if (s[i] < 0x20 || s[i] > 0x7e) return false;
  return true;
}

uint32_t threadIdOf(core::ThreadState* t) { return t ? t->id : ~0u; }

// A new object's record, its id fresh; the caller may fill in more before the
// next record is added.
ObjectRecord& newObjectLocked(Recorder& r, schema::ObjectKind kind, uint64_t address, uint64_t ticks,
                              uint32_t thread) {
  ObjectRecord& o = r.out.created.emplace_back();
  o.id = core::profile::nextObjectId();
  o.kind = kind;
  o.handle = address;
  o.ticks = ticks;
  o.thread = thread;
  return o;
}

// The id of the object at `address`, made on first sight (named by its implementation).
uint64_t objectLocked(Recorder& r, std::unordered_map<uint64_t, uint64_t>& ids, schema::ObjectKind kind,
                      uint64_t address, const char* implementation, uint64_t ticks, uint32_t thread) {
  auto [it, added] = ids.try_emplace(address, 0);
  if (added) {
    ObjectRecord& o = newObjectLocked(r, kind, address, ticks, thread);
    o.name = implementation;
    it->second = o.id;
  }
  return it->second;
}

// Object ids a thread looked up before, so that recording an operation on
// an object it has seen takes no lock: a small two-way set-associative table
// per thread, valid while no object gtap names has gone since it was filled.
// Two ways, because the few objects a loop uses (its command buffer, device
// and kernel) land in one set now and then, where the program's addresses put
// them: one way would then miss, and lock, on every operation.
struct CachedId {
  uint64_t key = 0, token = 0;  // object address (and a kernel's export)
  uint64_t generation = 0;
  uint64_t id = 0;
  std::array<uint32_t, 3> workgroupSize{};
  uint8_t table = 0;
  bool wanted = true;
};
struct IdCache {
  CachedId entries[64][2];
};
std::atomic<uint64_t> g_idGeneration{1};  // bumped whenever an object gtap named goes
__thread IdCache* t_ids __attribute__((tls_model("initial-exec"))) = nullptr;

enum : uint8_t { kCommandBuffers = 1, kDevices = 2, kKernels = 3 };

CachedId* cachedSet(uint8_t table, uint64_t key, uint64_t token) {
  if (!t_ids) t_ids = new IdCache();  // once per thread
  size_t at = static_cast<size_t>(((key >> 4) ^ (token * 0x9e3779b97f4a7c15ull) ^ table) * 0x9e3779b97f4a7c15ull >> 58);
  return t_ids->entries[at];
}

// The entry for the key, when it is there and still valid; else null.
const CachedId* cacheFind(uint8_t table, uint64_t key, uint64_t token) {
  CachedId* set = cachedSet(table, key, token);
  uint64_t generation = g_idGeneration.load(std::memory_order_acquire);
  for (int way = 0; way < 2; ++way) {
    const CachedId& e = set[way];
    if (e.table == table && e.key == key && e.token == token && e.generation == generation) return &e;
  }
  return nullptr;
}

// The newest entry in the first way, the one it displaces in the second.
const CachedId* cacheStore(const CachedId& entry) {
  CachedId* set = cachedSet(entry.table, entry.key, entry.token);
  set[1] = set[0];
  set[0] = entry;
  return &set[0];
}

// objectLocked through the thread's cache: the lock only on a miss.
uint64_t cachedObject(Recorder& r, uint8_t table, schema::ObjectKind kind, uint64_t address,
                      const char* implementation, uint64_t ticks, uint32_t thread) {
  if (const CachedId* e = cacheFind(table, address, 0)) return e->id;
  uint64_t generation = g_idGeneration.load(std::memory_order_acquire);
  std::lock_guard<std::mutex> lock(r.mu);
  uint64_t id = objectLocked(r, table == kDevices ? r.devices : r.commandBuffers, kind, address, implementation,
                             ticks, thread);
  cacheStore({address, 0, generation, id, {}, table, true});
  return id;
}

// The executable's record, made on first sight when it did not come through
// an executable cache gtap saw.
Executable& executableLocked(Recorder& r, uint64_t address, uint64_t ticks, uint32_t thread) {
  auto [it, added] = r.executables.try_emplace(address);
  if (added) it->second.id = newObjectLocked(r, schema::ObjectKind::EXECUTABLE, address, ticks, thread).id;
  return it->second;
}

const void* const* vtableOf(uint64_t object) {
  return static_cast<const void* const*>(reinterpret_cast<void* const*>(object)[1]);  // after the reference count
}

// The name and workgroup size of an export, asked of the executable through
// its own vtable (the call is gtap's: not recorded).
bool exportInfo(Recorder& r, uint64_t executable, uint64_t token, std::string& name,
                std::array<uint32_t, 3>& workgroupSize) {
  if (executable == 0) return false;  // the call will fail; nothing to ask
  const void* const* vtable = vtableOf(executable);
  if (!vtable) return false;
  auto known = r.executableVtables.find(vtable);
  if (known == r.executableVtables.end() || known->second.infoSlot == SIZE_MAX) return false;
  using InfoFn = uint64_t (*)(void*, uint64_t, void*);
  auto fn = reinterpret_cast<InfoFn>(const_cast<void*>(vtable[known->second.infoSlot]));
  if (!fn) return false;
  // iree_hal_executable_{function,export}_info_t: name (string view) at 0,
  // flags at 16, three counts at 24, workgroup_size[3] at 32; room to spare.
  alignas(16) uint8_t info[512] = {};
  uint8_t saved = core::t_guard;
  core::t_guard |= core::kGuardGtap;
  uint64_t status = fn(reinterpret_cast<void*>(executable), token, info);
  core::t_guard = saved;
  if (status != 0) return false;  // a failed status is the caller's to free; this one is never ours to keep
  auto* data = reinterpret_cast<const char*>(load64(info));
  uint64_t size = load64(info + 8);
  if (!printable(data, size)) return false;
  name.assign(data, size);
  for (int i = 0; i < 3; ++i) workgroupSize[i] = load32(info + 32 + 4 * i);
  return true;
}

uint64_t kernelLocked(Recorder& r, uint64_t executable, uint64_t token, uint64_t ticks, uint32_t thread,
                      std::array<uint32_t, 3>& workgroupSize, bool& wanted) {
  Executable& e = executableLocked(r, executable, ticks, thread);
  auto k = e.kernels.find(token);
  if (k != e.kernels.end()) {
    workgroupSize = k->second.workgroupSize;
    wanted = k->second.wanted;
    return k->second.id;
  }
  Kernel& kernel = e.kernels[token];
  ObjectRecord& o = newObjectLocked(r, schema::ObjectKind::KERNEL, token, ticks, thread);
  kernel.id = o.id;
  o.parent = e.id;
  o.ordinal = static_cast<uint32_t>(token);
  std::array<uint32_t, 3> size{};
  if (exportInfo(r, executable, token, o.name, size)) {
    workgroupSize = kernel.workgroupSize = size;
    o.properties.emplace_back("workgroup_size", std::to_string(size[0]) + "," + std::to_string(size[1]) + "," +
                                                    std::to_string(size[2]));
  } else {
    o.name = "executable#" + std::to_string(e.id) + ":" + std::to_string(token);
  }
  wanted = kernel.wanted = core::kernelNameWanted(o.name);
  return kernel.id;
}

uint64_t cachedKernel(Recorder& r, uint64_t executable, uint64_t token, uint64_t ticks, uint32_t thread,
                      std::array<uint32_t, 3>& workgroupSize, bool& wanted) {
  const CachedId* e = cacheFind(kKernels, executable, token);
  if (!e) {
    uint64_t generation = g_idGeneration.load(std::memory_order_acquire);
    std::lock_guard<std::mutex> lock(r.mu);
    std::array<uint32_t, 3> size{};
    bool w = true;
    uint64_t id = kernelLocked(r, executable, token, ticks, thread, size, w);
    e = cacheStore({executable, token, generation, id, size, kKernels, w});
  }
  workgroupSize = e->workgroupSize;
  wanted = e->wanted;
  return e->id;
}

// What memory an iree_hal_memory_type_t asks for. Bits: 1 HOST_VISIBLE,
// 4 DEVICE_VISIBLE; DEVICE_LOCAL adds bit 5, HOST_LOCAL bit 6.
schema::MemoryKind memoryKind(uint32_t type) {
  return (type & 0x20)            ? schema::MemoryKind::DEVICE
         : (type & 0x40)          ? schema::MemoryKind::HOST
         : (type & 0x12) == 0x12  ? schema::MemoryKind::SHARED
                                  : schema::MemoryKind::UNKNOWN;
}

// The free of a buffer gtap saw allocated (a buffer's destroy, or a
// queue_dealloca before it); nothing for one it did not. Buffers are known
// with kernels too (their memory gives copies a direction), recorded as
// allocations only with memory.
void freeBufferLocked(Recorder& r, uint64_t address, const CallContext& call) {
  auto b = r.buffers.find(address);
  if (b == r.buffers.end()) return;
  if (!recordMemory()) {
    r.buffers.erase(b);
    return;
  }
  core::profile::MemoryRecord m;
  m.isFree = true;
  m.address = address;
  m.kind = b->second.first;
  m.size = b->second.second;
  r.buffers.erase(b);
  m.ticks = call.ticks;
  m.thread = threadIdOf(call.thread);
  r.out.memory.push_back(std::move(m));
}

// A copy between two buffers whose memory gtap saw: host or device memory at
// either end gives the direction. Any other (a buffer gtap did not see made,
// or memory local to neither) keeps the copy device-to-device: the device
// runs it, between buffers it can reach.
void copyDirectionLocked(const Recorder& r, OpRecord& op) {
  if (op.kind != schema::DeviceOpKind::COPY || op.bindings.size() != 2) return;
  auto side = [&](uint64_t buffer) {
    auto b = r.buffers.find(buffer);
    return b == r.buffers.end() ? schema::MemoryKind::UNKNOWN : b->second.first;
  };
  schema::MemoryKind from = side(op.bindings[0].buffer), to = side(op.bindings[1].buffer);
  auto known = [](schema::MemoryKind k) { return k == schema::MemoryKind::HOST || k == schema::MemoryKind::DEVICE; };
  if (!known(from) || !known(to)) return;
  bool fromHost = from == schema::MemoryKind::HOST, toHost = to == schema::MemoryKind::HOST;
  using D = schema::CopyDirection;
  op.direction = fromHost ? (toHost ? D::HOST_TO_HOST : D::HOST_TO_DEVICE) : (toHost ? D::DEVICE_TO_HOST : D::DEVICE_TO_DEVICE);
}

constexpr const char* kQueueNote = "a HAL queue operation: no device times at this level";
constexpr const char* kCommandNote = "recorded into an IREE command buffer: a HAL-level record, without device times";
constexpr const char* kHostNote = "a HAL call on the host: no device work";

// The fields every HAL-level record of the call in progress has: its method,
// level and thread (OpRecord and devicework::Header name them alike).
template <class R>
void setHalFields(R& r, const CallContext& call, schema::DeviceOpKind kind, const char* operation, const char* note) {
  r.kind = kind;
  r.operation = operation;
  r.recordedBy = schema::Api::IREE_HAL;
  r.thread = r.submitThread = threadIdOf(call.thread);
  r.appendIndex = call.beginIndex;
  r.appendTicks = r.submitTicks = call.ticks;
  r.fixedNote = note;
}

std::unique_ptr<OpRecord> halOp(const CallContext& call, schema::DeviceOpKind kind, const char* operation,
                                const char* note) {
  auto op = std::make_unique<OpRecord>();
  setHalFields(*op, call, kind, operation, note);
  return op;
}

// The same as a compact record in the thread's device-work buffer, with room
// for its parts; held pending until the call returns (atCallEnd settles it).
core::devicework::Header* beginOp(const CallContext& call, schema::DeviceOpKind kind, const char* operation,
                                  const char* note, uint32_t bindings, uint32_t waits = 0, uint32_t signals = 0,
                                  uint32_t argumentBytes = 0) {
  core::devicework::Header* h = core::devicework::begin(0, bindings, waits, signals, argumentBytes, 0);
  if (h) setHalFields(*h, call, kind, operation, note);
  return h;
}

// How many semaphores an iree_hal_semaphore_list_t at `list` holds (0 when it
// cannot be read), and its values copied to `out`.
uint32_t semaphoreCount(const uint64_t* list) {
  return list[0] == 0 || list[0] > kMaxSemaphores || !list[1] || !list[2] ? 0 : static_cast<uint32_t>(list[0]);
}
void copySemaphores(const uint64_t* list, uint32_t count, OpRecord::SemaphoreValue* out) {
  auto* semaphores = reinterpret_cast<const uint64_t*>(list[1]);
  auto* values = reinterpret_cast<const uint64_t*>(list[2]);
  for (uint32_t i = 0; i < count; ++i) out[i] = {semaphores[i], values[i]};
}

// Decoders whose records still go through the lock: they change what gtap
// knows of buffers and files (rare calls, not per operation).
bool lockedDecoder(Decoder d) {
  return d == Decoder::queueAllocaOutR8 || d == Decoder::queueAllocaOutR9 || d == Decoder::queueDealloca ||
         d == Decoder::importFile;
}

// iree_hal_semaphore_list_t {count, semaphores, payload_values} at `list`.
void readSemaphoreList(const uint64_t* list, std::vector<OpRecord::SemaphoreValue>& out) {
  uint64_t count = list[0];
  auto* semaphores = reinterpret_cast<const uint64_t*>(list[1]);
  auto* values = reinterpret_cast<const uint64_t*>(list[2]);
  if (count == 0 || count > kMaxSemaphores || !semaphores || !values) return;
  for (uint64_t i = 0; i < count; ++i) out.push_back({semaphores[i], values[i]});
}

// iree_hal_buffer_ref_t {slot word, buffer, offset, length} at `ref`, as a binding.
OpRecord::Binding bufferRef(const void* ref) {
  auto* p = static_cast<const uint8_t*>(ref);
  return {load64(p + 8), load64(p + 16), load64(p + 24), load32(p) >> 8};
}

// A copy's direction from the buffers gtap saw made (copyDirectionLocked),
// for a compact record with two bindings.
void copyDirection(Recorder& r, core::devicework::Header* h) {
  OpRecord op;
  op.kind = schema::DeviceOpKind::COPY;
  op.bindings.assign(h->bindings(), h->bindings() + 2);
  op.direction = h->direction;
  std::lock_guard<std::mutex> lock(r.mu);
  copyDirectionLocked(r, op);
  h->direction = op.direction;
}

// Device queue operations, IREE 3.0 to today: device rdi, affinity rsi, the
// wait and signal lists at stack+0 and +24 (24 bytes each), then the method's
// own arguments in rdx, rcx, r8, r9 and from stack+48.
void queueStart(Decoder decoder, const char* implementation, const SavedRegisters& regs, const uint64_t* stack,
                CallContext& call) {
  using K = schema::DeviceOpKind;
  using D = schema::CopyDirection;
  Recorder& r = recorder();
  if (lockedDecoder(decoder)) {
    auto op = halOp(call, K::OTHER, decoder == Decoder::queueDealloca ? "queue_dealloca" : "queue_alloca", kQueueNote);
    if (decoder == Decoder::queueDealloca) {
      op->bindings.push_back({regs.rdx, 0, 0, 0});
    } else {  // pool rdx, params at stack+48 (32 bytes), size rcx, [flags r8], out buffer
      op->bytes = regs.rcx;
      call.keep[0] = decoder == Decoder::queueAllocaOutR8 ? regs.r8 : regs.r9;
      call.keep[1] = regs.rcx;
      call.keep[2] = load32(stack + 7);  // iree_hal_buffer_params_t.type, at byte 8 of the params
    }
    readSemaphoreList(stack, op->waits);
    readSemaphoreList(stack + 3, op->signals);
    std::lock_guard<std::mutex> lock(r.mu);
    op->queue = objectLocked(r, r.devices, schema::ObjectKind::COMMAND_QUEUE, regs.rdi, implementation, call.ticks,
                             op->thread);
    call.pending = op.release();
    return;
  }
  uint32_t waits = semaphoreCount(stack), signals = semaphoreCount(stack + 3);
  core::devicework::Header* h = nullptr;
  switch (decoder) {
    case Decoder::queueFill:  // target rdx, offset rcx, length r8
      if (!(h = beginOp(call, K::FILL, "queue_fill", kQueueNote, 1, waits, signals))) return;
      h->bytes = regs.r8;
      h->bindings()[0] = {regs.rdx, regs.rcx, regs.r8, 0};
      break;
    case Decoder::queueUpdate:  // source rdx, offset rcx, target r8, offset r9, length stack+48
    case Decoder::queueRead:    // file rdx, offset rcx, target r8, offset r9, length stack+48
      if (!(h = beginOp(call, K::COPY, decoder == Decoder::queueRead ? "queue_read" : "queue_update", kQueueNote, 1,
                        waits, signals)))
        return;
      h->direction = D::HOST_TO_DEVICE;
      h->bytes = stack[6];
      h->bindings()[0] = {regs.r8, regs.r9, stack[6], 0};
      break;
    case Decoder::queueWrite:  // source rdx, offset rcx, file r8, offset r9, length stack+48
      if (!(h = beginOp(call, K::COPY, "queue_write", kQueueNote, 1, waits, signals))) return;
      h->direction = D::DEVICE_TO_HOST;
      h->bytes = stack[6];
      h->bindings()[0] = {regs.rdx, regs.rcx, stack[6], 0};
      break;
    case Decoder::queueCopy:  // source rdx, offset rcx, target r8, offset r9, length stack+48
      if (!(h = beginOp(call, K::COPY, "queue_copy", kQueueNote, 2, waits, signals))) return;
      h->direction = D::DEVICE_TO_DEVICE;
      h->bytes = stack[6];
      h->bindings()[0] = {regs.rdx, regs.rcx, stack[6], 0};
      h->bindings()[1] = {regs.r8, regs.r9, stack[6], 0};
      copyDirection(r, h);
      break;
    case Decoder::queueExecute: {  // command buffer rdx, binding table rcx (count), r8 (bindings)
      auto* bindings = reinterpret_cast<const uint64_t*>(regs.r8);  // iree_hal_buffer_binding_t: buffer, offset, length
      uint32_t count = bindings && regs.rcx <= kMaxBindings ? static_cast<uint32_t>(regs.rcx) : 0;
      // No command buffer: a barrier on the queue (iree_hal_device_queue_barrier).
      if (!(h = beginOp(call, regs.rdx ? K::OTHER : K::BARRIER, regs.rdx ? "queue_execute" : "queue_barrier",
                        kQueueNote, count, waits, signals)))
        return;
      for (uint32_t i = 0; i < count; ++i)
        h->bindings()[i] = {bindings[3 * i], bindings[3 * i + 1], bindings[3 * i + 2], i};
      if (regs.rdx)
        h->list = cachedObject(r, kCommandBuffers, schema::ObjectKind::COMMAND_LIST, regs.rdx, "command_buffer",
                               call.ticks, h->thread);
      break;
    }
    default:
      return;
  }
  copySemaphores(stack, waits, h->waits());
  copySemaphores(stack + 3, signals, h->signals());
  h->queue = cachedObject(r, kDevices, schema::ObjectKind::COMMAND_QUEUE, regs.rdi, implementation, call.ticks,
                          h->thread);
  core::devicework::commitPending(h);
  call.pending = h;
}

// Device calls other than queue work, semaphores, and command-buffer commands
// other than dispatch.
void callStart(Decoder decoder, const char* implementation, const SavedRegisters& regs, const uint64_t* stack,
               CallContext& call) {
  using K = schema::DeviceOpKind;
  Recorder& r = recorder();
  if (decoder == Decoder::importFile) {  // out file r9
    auto op = halOp(call, K::OTHER, "import_file", kHostNote);
    call.keep[0] = regs.r9;
    std::lock_guard<std::mutex> lock(r.mu);
    op->queue = objectLocked(r, r.devices, schema::ObjectKind::COMMAND_QUEUE, regs.rdi, implementation, call.ticks,
                             op->thread);
    call.pending = op.release();
    return;
  }
  core::devicework::Header* h = nullptr;
  bool onDevice = false;  // else on a command buffer (rdi), or a semaphore
  switch (decoder) {
    case Decoder::queueFlush:
      h = beginOp(call, K::OTHER, "queue_flush", kQueueNote, 0);
      onDevice = true;
      break;
    case Decoder::waitSemaphores: {  // wait mode esi, list at stack+0
      uint32_t waits = semaphoreCount(stack);
      if ((h = beginOp(call, K::OTHER, "wait_semaphores", kHostNote, 0, waits))) copySemaphores(stack, waits, h->waits());
      onDevice = true;
      break;
    }
    case Decoder::semaphoreSignal:
      if ((h = beginOp(call, K::OTHER, "semaphore_signal", kHostNote, 0, 0, 1))) h->signals()[0] = {regs.rdi, regs.rsi};
      break;
    case Decoder::semaphoreWait:
      if ((h = beginOp(call, K::OTHER, "semaphore_wait", kHostNote, 0, 1))) h->waits()[0] = {regs.rdi, regs.rsi};
      break;
    case Decoder::commandBufferBegin:
      h = beginOp(call, K::OTHER, "begin", kCommandNote, 0);
      break;
    case Decoder::commandBufferEnd:
      h = beginOp(call, K::OTHER, "end", kCommandNote, 0);
      break;
    case Decoder::executionBarrier:
      h = beginOp(call, K::BARRIER, "execution_barrier", kCommandNote, 0);
      break;
    case Decoder::fillBuffer:  // target ref at stack+0, pattern rsi, its length rdx
      if ((h = beginOp(call, K::FILL, "fill_buffer", kCommandNote, 1))) {
        h->bindings()[0] = bufferRef(stack);
        h->bytes = h->bindings()[0].length;
      }
      break;
    case Decoder::updateBuffer:  // source rsi, offset rdx, target ref at stack+0
      if ((h = beginOp(call, K::COPY, "update_buffer", kCommandNote, 1))) {
        h->direction = schema::CopyDirection::HOST_TO_DEVICE;
        h->bindings()[0] = bufferRef(stack);
        h->bytes = h->bindings()[0].length;
      }
      break;
    case Decoder::copyBuffer:  // source ref at stack+0, target ref at stack+32
      if ((h = beginOp(call, K::COPY, "copy_buffer", kCommandNote, 2))) {
        h->direction = schema::CopyDirection::DEVICE_TO_DEVICE;
        h->bindings()[0] = bufferRef(stack);
        h->bindings()[1] = bufferRef(stack + 4);
        h->bytes = h->bindings()[1].length;
        copyDirection(r, h);
      }
      break;
    default:
      return;
  }
  if (!h) return;
  bool onSemaphore = decoder == Decoder::semaphoreSignal || decoder == Decoder::semaphoreWait;
  if (onDevice)
    h->queue = cachedObject(r, kDevices, schema::ObjectKind::COMMAND_QUEUE, regs.rdi, implementation, call.ticks,
                            h->thread);
  else if (!onSemaphore)
    h->list = h->queue = cachedObject(r, kCommandBuffers, schema::ObjectKind::COMMAND_LIST, regs.rdi,
                                      implementation, call.ticks, h->thread);
  core::devicework::commitPending(h);
  call.pending = h;
}

// issue_call(executable rdi, ordinal rsi, dispatch_state rdx, workgroup_state
// rcx, worker r8): one workgroup, kept in call.keep until the call ends.
void issueCallStart(const SavedRegisters& regs, CallContext& call) {
  HostWorkgroup w;
  if (!hostWorkgroupStart(regs.rdi, regs.rsi, reinterpret_cast<const void*>(regs.rdx), threadIdOf(call.thread),
                          call.ticks, w))
    return;
  call.keep[0] = w.executable;
  call.keep[1] = w.ordinal;
  call.keep[2] = w.bindings;
}

void issueCallEnd(CallContext& call) {
  if (call.keep[0] == 0) return;  // not counted
  hostWorkgroupEnd({call.keep[0], call.keep[1], call.keep[2]});
}

// Once a local executable is prepared: where IREE's driver calls its export
// functions directly (local-task after 3.11), its function table is swapped
// for thunks that count the workgroups (dispatch_thunks.cpp). Its vtable says
// how many exports it has and their names, which its members must agree with.
void installThunks(Recorder& r, uint64_t executable) {
  const void* const* vtable = vtableOf(executable);
  if (!vtable) return;
  ExecutableVtable info;
  uint64_t count = 0;
  std::vector<std::string> names;
  {
    std::lock_guard<std::mutex> lock(r.mu);
    auto known = r.executableVtables.find(vtable);
    if (known == r.executableVtables.end() || !known->second.local.known() || known->second.countSlot == SIZE_MAX)
      return;
    info = known->second;
    using CountFn = uint64_t (*)(void*);
    auto countFn = reinterpret_cast<CountFn>(const_cast<void*>(vtable[info.countSlot]));
    if (!countFn) return;
    uint8_t saved = core::t_guard;
    core::t_guard |= core::kGuardGtap;
    count = countFn(reinterpret_cast<void*>(executable));
    core::t_guard = saved;
    if (count <= dispatchThunkCapacity()) {
      names.resize(count);
      std::array<uint32_t, 3> size{};
      for (uint64_t i = 0; i < count; ++i) exportInfo(r, executable, i, names[i], size);
    }
  }
  std::string why;
  ThunkOutcome outcome = installDispatchThunks(reinterpret_cast<void*>(executable), info.local, count, names, why);
  if (outcome != ThunkOutcome::refused && outcome != ThunkOutcome::exhausted) return;
  {
    std::lock_guard<std::mutex> lock(r.mu);
    bool first = outcome == ThunkOutcome::exhausted ? !std::exchange(r.thunksExhaustedLogged, true)
                                                    : r.thunksRefused.insert(vtable).second;
    if (!first) return;
  }
  if (core::config().quiet) return;
  if (outcome == ThunkOutcome::exhausted)
    core::logLine("IREE HAL: all %llu of gtap's dispatch thunks are in use: executables prepared from now on have "
                  "no host_execution records where their driver calls their functions directly",
                  static_cast<unsigned long long>(dispatchThunkCapacity()));
  else
    core::logLine("IREE HAL: not timing the workgroups of %s executables that their driver runs through their "
                  "functions directly: %s; their dispatches have no host_execution records",
                  info.implementation ? info.implementation : "these", why.c_str());
}

void dispatchStart(Decoder decoder, const char* implementation, const SavedRegisters& regs, const uint64_t* stack,
                   CallContext& call) {
  uint64_t executable = regs.rsi;
  if (executable == 0) return;  // a dispatch of no executable fails: nothing is recorded into the command buffer
  uint64_t token = regs.rdx;
  const uint8_t* constants = nullptr;
  uint64_t constantBytes = 0, bindingCount = 0, bindingValues = 0;
  std::array<uint32_t, 3> groupSize{}, groupCount{};
  if (decoder == Decoder::dispatchConfig) {
    // cb rdi, executable rsi, function rdx, config at stack+0 (64 bytes:
    // workgroup_size[3], workgroup_count[3], ...), constants rcx:r8,
    // bindings at stack+64 (count, values), flags r9.
    auto* config = reinterpret_cast<const uint8_t*>(stack);
    for (int i = 0; i < 3; ++i) {
      groupSize[i] = load32(config + 4 * i);
      groupCount[i] = load32(config + 12 + 4 * i);
    }
    constants = reinterpret_cast<const uint8_t*>(regs.rcx);
    constantBytes = regs.r8;
    bindingCount = stack[8];
    bindingValues = stack[9];
  } else {
    // cb rdi, executable rsi, entry point edx, workgroup_count[3] by pointer
    // rcx, constants r8:r9, bindings at stack+0 (count, values), flags at +16.
    token = static_cast<uint32_t>(regs.rdx);
    if (auto* count = reinterpret_cast<const uint32_t*>(regs.rcx))
      for (int i = 0; i < 3; ++i) groupCount[i] = count[i];
    constants = reinterpret_cast<const uint8_t*>(regs.r8);
    constantBytes = regs.r9;
    bindingCount = stack[0];
    bindingValues = stack[1];
  }
  bool sizeGiven = groupSize[0] != 0;
  uint32_t argumentBytes =
      constants && constantBytes && constantBytes <= kMaxConstantBytes ? static_cast<uint32_t>(constantBytes) : 0;
  uint32_t bindings = bindingValues && bindingCount <= kMaxBindings ? static_cast<uint32_t>(bindingCount) : 0;
  core::devicework::Header* h =
      beginOp(call, schema::DeviceOpKind::KERNEL, "dispatch", kCommandNote, bindings, 0, 0, argumentBytes);
  if (!h) return;
  h->groupSize = groupSize;
  h->groupCount = groupCount;
  h->bytes = constantBytes;
  std::memcpy(h->arguments(), constants, argumentBytes);
  auto* refs = reinterpret_cast<const uint8_t*>(bindingValues);
  for (uint32_t i = 0; i < bindings; ++i) h->bindings()[i] = bufferRef(refs + 32 * i);
  Recorder& r = recorder();
  h->list = h->queue = cachedObject(r, kCommandBuffers, schema::ObjectKind::COMMAND_LIST, regs.rdi, implementation,
                                    call.ticks, h->thread);
  std::array<uint32_t, 3> infoSize{};
  bool wanted = true;
  h->kernel = cachedKernel(r, executable, token, call.ticks, h->thread, infoSize, wanted);
  if (!sizeGiven) h->groupSize = infoSize;
  call.keep[0] = wanted;  // read when the call succeeded (atCallEnd)
  core::devicework::commitPending(h);
  call.pending = h;
}

// The records of the dispatches that ended on CPU drivers since the last
// call: by the writer, and before an executable goes (a record names its
// export, which may have to be asked of the executable). Under r.mu.
void recordFinishedLocked(Recorder& r) {
  r.running.drain([&](const core::WorkInFlight<HostDispatch>::Finished& f) {
    if (!r.hostDevice) {
      r.hostDevice = true;
      core::profile::DeviceRecord host;
      host.id = kHostDevice;
      host.api = schema::Api::IREE_HAL;
      host.name = "host (IREE CPU driver)";
      host.frequency = 1000000000;
      host.kernelBits = host.globalBits = 64;
      r.out.devices.push_back(std::move(host));
      r.out.samples.push_back({kHostDevice, 0, 0});
    }
    const HostDispatch& d = f.info;
    OpRecord op;
    op.kind = schema::DeviceOpKind::KERNEL;
    op.operation = "host_execution";
    op.recordedBy = schema::Api::IREE_HAL;
    op.device = kHostDevice;
    op.thread = op.submitThread = d.thread;
    op.appendTicks = op.submitTicks = d.ticks;
    op.groupCount = d.count;
    op.groupSize = d.size;
    op.timed = true;
    op.start = static_cast<uint64_t>(d.startNs);
    op.end = static_cast<uint64_t>(f.endNs);
    std::array<uint32_t, 3> infoSize{};
    bool wanted = true;
    op.kernel = kernelLocked(r, f.key[0], f.key[1], d.ticks, d.thread, infoSize, wanted);
    if (!wanted || !core::dispatchNumberWanted(d.number)) return;
    // A dispatch recorded with workgroup size 0 (the export's own) may reach
    // the function with 0 (IREE's newest local-task): the export's own, then.
    if (op.groupSize[0] == 0) op.groupSize = infoSize;
    r.out.ops.push_back(std::move(op));
  });
}

}  // namespace

void noteUnrecordedWaits(const std::string& image, uint64_t address, const char* foundBy) {
  Recorder& r = recorder();
  std::lock_guard<std::mutex> lock(r.mu);
  if (!r.unrecordedWaits.insert(image).second) return;
  ObjectRecord& o = newObjectLocked(r, schema::ObjectKind::UNKNOWN, address, core::nowTicks(), 0);
  o.name = "iree_async_semaphore_multi_wait";
  o.properties.emplace_back("image", image);
  o.properties.emplace_back("found_by", foundBy);
  o.properties.emplace_back("waits", "not recorded");
}

void noteExecutableVtable(const void* vtable, const ExecutableVtable& info) {
  Recorder& r = recorder();
  std::lock_guard<std::mutex> lock(r.mu);
  r.executableVtables[vtable] = info;
}

// iree_hal_executable_dispatch_state_v0_t has the workgroup size at 0, 4, 8
// (the last 16 bits), the count at 12, 16, 20 (16 bits), the binding pointers
// at 32 (IREE 3.0 to today).
bool hostWorkgroupStart(uint64_t executable, uint64_t ordinal, const void* dispatchState, uint32_t thread,
                        uint64_t ticks, HostWorkgroup& workgroup) {
  auto* state = static_cast<const uint8_t*>(dispatchState);
  if (!state || executable == 0 || t_hostWorkgroups != 0) return false;
  ++t_hostWorkgroups;
  workgroup = {executable, ordinal, load64(state + 32)};
  int64_t now = core::monotonicNs();
  Recorder& r = recorder();
  // The dispatch is made by its first workgroup, once.
  r.running.begin({workgroup.executable, workgroup.ordinal, workgroup.bindings}, [&](HostDispatch& d) {
    d.number = r.hostExecutions++;
    d.count = {load32(state + 12), load32(state + 16), static_cast<uint32_t>(load32(state + 20) & 0xffff)};
    d.size = {load32(state), load32(state + 4), static_cast<uint32_t>(load32(state + 8) & 0xffff)};
    d.thread = thread;
    d.ticks = ticks;
    d.startNs = now;
    return uint64_t{d.count[0]} * d.count[1] * d.count[2];
  });
  return true;
}

void hostWorkgroupEnd(const HostWorkgroup& workgroup) {
  --t_hostWorkgroups;
  recorder().running.end({workgroup.executable, workgroup.ordinal, workgroup.bindings}, core::monotonicNs());
}

void atCallStart(Decoder decoder, const char* implementation, const SavedRegisters& regs, const uint64_t* stack,
                 CallContext& call) {
  switch (decoder) {
    case Decoder::none:
      return;
    case Decoder::dispatchConfig:
    case Decoder::dispatchCountPointer:
      // The program's dispatches only: a driver replaying a command buffer
      // into another records the same dispatch again (its call is recorded).
      if (recordKernels() && !call.nested) dispatchStart(decoder, implementation, regs, stack, call);
      return;
    case Decoder::queueFill:
    case Decoder::queueUpdate:
    case Decoder::queueCopy:
    case Decoder::queueRead:
    case Decoder::queueWrite:
    case Decoder::queueExecute:
    case Decoder::queueAllocaOutR8:
    case Decoder::queueAllocaOutR9:
    case Decoder::queueDealloca:
      if (recordKernels() && !call.nested) queueStart(decoder, implementation, regs, stack, call);
      return;
    case Decoder::queueFlush:
    case Decoder::waitSemaphores:
    case Decoder::importFile:
    case Decoder::semaphoreSignal:
    case Decoder::semaphoreWait:
    case Decoder::commandBufferBegin:
    case Decoder::commandBufferEnd:
    case Decoder::executionBarrier:
    case Decoder::fillBuffer:
    case Decoder::updateBuffer:
    case Decoder::copyBuffer:
      if (recordKernels() && !call.nested) callStart(decoder, implementation, regs, stack, call);
      return;
    case Decoder::queueHostCall:
    case Decoder::importBuffer:
      return;  // their callbacks were wrapped (vtable_hooks.cpp)
    case Decoder::issueCall:
      // Every workgroup, the driver's own calls too: they are the dispatch running.
      if (recordKernels()) issueCallStart(regs, call);
      return;
    case Decoder::prepareExecutable:
      call.keep[0] = regs.rsi;  // params
      call.keep[1] = regs.rdx;  // out executable
      return;
    case Decoder::allocateBuffer:
      call.keep[0] = regs.rsi;  // params
      call.keep[1] = regs.rdx;  // size
      call.keep[2] = regs.rcx;  // out buffer
      return;
    case Decoder::executableDestroy: {
      // Thunks it was given stay its own: they are never handed out again
      // (dispatch_thunks.cpp).
      Recorder& r = recorder();
      std::lock_guard<std::mutex> lock(r.mu);
      recordFinishedLocked(r);  // while the executable can still name its exports
      auto it = r.executables.find(regs.rdi);
      if (it == r.executables.end()) return;
      r.out.destroyed.emplace_back(it->second.id, call.ticks);
      for (const auto& [token, k] : it->second.kernels) r.out.destroyed.emplace_back(k.id, call.ticks);
      r.executables.erase(it);
      g_idGeneration.fetch_add(1, std::memory_order_release);
      return;
    }
    case Decoder::commandBufferDestroy: {
      Recorder& r = recorder();
      std::lock_guard<std::mutex> lock(r.mu);
      auto it = r.commandBuffers.find(regs.rdi);
      if (it == r.commandBuffers.end()) return;
      r.out.destroyed.emplace_back(it->second, call.ticks);
      r.commandBuffers.erase(it);
      g_idGeneration.fetch_add(1, std::memory_order_release);
      return;
    }
    case Decoder::bufferDestroy: {
      Recorder& r = recorder();
      std::lock_guard<std::mutex> lock(r.mu);
      freeBufferLocked(r, regs.rdi, call);
      return;
    }
  }
}

void atCallEnd(Decoder decoder, uint64_t status, CallContext& call) {
  if (decoder == Decoder::issueCall) {  // ended, failed or not: the workgroup is over
    issueCallEnd(call);
    return;
  }
  if (call.pending && !lockedDecoder(decoder)) {
    auto* h = static_cast<core::devicework::Header*>(call.pending);
    call.pending = nullptr;
    // The program's dispatches are numbered in the order they were recorded
    // into command buffers; one the filters leave out is not recorded.
    bool keep = status == 0;
    if (keep && (decoder == Decoder::dispatchConfig || decoder == Decoder::dispatchCountPointer))
      keep = core::dispatchNumberWanted(recorder().dispatches.fetch_add(1, std::memory_order_relaxed)) &&
             call.keep[0];
    core::devicework::settle(h, keep);
    return;
  }
  std::unique_ptr<OpRecord> op(static_cast<OpRecord*>(call.pending));
  call.pending = nullptr;
  if (status != 0) return;  // failed: nothing was recorded into the command buffer or made
  Recorder& r = recorder();
  if (op) {
    std::lock_guard<std::mutex> lock(r.mu);
    auto** out = reinterpret_cast<void**>(call.keep[0]);
    if (decoder == Decoder::queueAllocaOutR8 || decoder == Decoder::queueAllocaOutR9) {
      uint64_t buffer = out ? reinterpret_cast<uint64_t>(*out) : 0;
      op->bindings.push_back({buffer, 0, call.keep[1], 0});
      if (buffer) {
        core::profile::MemoryRecord m;
        m.address = buffer;
        m.size = call.keep[1];
        m.kind = memoryKind(static_cast<uint32_t>(call.keep[2]));
        m.ticks = call.ticks;
        m.thread = op->thread;
        r.buffers[m.address] = {m.kind, m.size};
        if (recordMemory()) r.out.memory.push_back(std::move(m));
      }
    } else if (decoder == Decoder::queueDealloca) {
      freeBufferLocked(r, op->bindings[0].buffer, call);
    } else if (decoder == Decoder::importFile && out) {
      op->bindings.push_back({reinterpret_cast<uint64_t>(*out), 0, 0, 0});
    }
    r.out.ops.push_back(std::move(*op));
    return;
  }
  switch (decoder) {
    case Decoder::prepareExecutable: {
      auto** out = reinterpret_cast<void**>(call.keep[1]);
      auto* params = reinterpret_cast<const uint8_t*>(call.keep[0]);
      if (!out || !*out) return;
      uint64_t address = reinterpret_cast<uint64_t>(*out);
      if (params) {
        // iree_hal_executable_params_t: from IREE 3.4 queue_affinity at 0,
        // caching_mode at 8, format (string view) at 16, data (byte span) at
        // 32; before, format at 8 and data at 24. The one whose format reads
        // as a format name is it.
        size_t formatAt = 16, dataAt = 32;
        if (!printable(reinterpret_cast<const char*>(load64(params + 16)), load64(params + 24))) {
          formatAt = 8;
          dataAt = 24;
        }
        auto* format = reinterpret_cast<const char*>(load64(params + formatAt));
        uint64_t formatSize = load64(params + formatAt + 8);
        auto* data = reinterpret_cast<const uint8_t*>(load64(params + dataAt));
        uint64_t dataSize = load64(params + dataAt + 8);
        std::lock_guard<std::mutex> lock(r.mu);
        if (r.executables.erase(address))  // a new executable at a reused address
          g_idGeneration.fetch_add(1, std::memory_order_release);
        ObjectRecord& o =
            newObjectLocked(r, schema::ObjectKind::EXECUTABLE, address, call.ticks, threadIdOf(call.thread));
        r.executables[address].id = o.id;
        if (printable(format, formatSize)) o.binaryFormat.assign(format, formatSize);
        o.name = o.binaryFormat;
        if (data && dataSize && dataSize <= kMaxExecutableBytes) o.binary.assign(data, data + dataSize);
      }
      // Before the program has the executable: a command buffer takes its
      // functions when a dispatch is recorded into it.
      if (recordKernels()) installThunks(r, address);
      return;
    }
    case Decoder::allocateBuffer: {
      auto** out = reinterpret_cast<void**>(call.keep[2]);
      auto* params = reinterpret_cast<const uint8_t*>(call.keep[0]);
      if (!out || !*out) return;
      core::profile::MemoryRecord m;
      m.address = reinterpret_cast<uint64_t>(*out);
      m.size = call.keep[1];
      // iree_hal_buffer_params_t: type (iree_hal_memory_type_t) at 8.
      m.kind = memoryKind(params ? load32(params + 8) : 0);
      m.ticks = call.ticks;
      m.thread = threadIdOf(call.thread);
      std::lock_guard<std::mutex> lock(r.mu);
      r.buffers[m.address] = {m.kind, m.size};
      if (recordMemory()) r.out.memory.push_back(std::move(m));
      return;
    }
    default:
      return;
  }
}

namespace {

void produceChunks(core::ChunkSink& sink, bool) {
  core::profile::Outbox out;
  {
    Recorder& r = recorder();
    std::lock_guard<std::mutex> lock(r.mu);
    recordFinishedLocked(r);
    std::swap(out, r.out);
  }
  core::profile::writeProfileRecords(sink, out);
}

__attribute__((constructor(103))) void registerRecorder() { core::registerChunkProducer(&produceChunks); }

}  // namespace

}  // namespace gtap::hal
