// An IREE-shaped HAL driver that runs its dispatches on HSA, as IREE's GPU
// drivers for AMD do: its objects start with a reference count and a pointer to
// a const vtable, the vtables are local objects named
// iree_hal_hsa_fixture_<type>_vtable (IREE's newest layouts: device 36 slots,
// command buffer 15, executable cache 4, executable 6, semaphore 7), and the
// program calls through them as IREE's public functions do. The executable is
// a code object for the simulated HSA runtime (tests/sim/hsa); its exports are
// its kernels, named as their symbols. queue_execute writes one AQL kernel
// dispatch packet per dispatch the command buffer holds, in order, waits for
// it, and signals the semaphores.
//
//   hal_on_hsa [ROUNDS=3]
//
// Before any HAL work the driver dispatches `scale` once itself (a warm-up: no
// HAL dispatch made it). Command buffer A holds vector_add, scale, vector_add
// over 1024 elements; it is submitted ROUNDS times, each round waited for on a
// timeline semaphore. Command buffer B holds one scale and is submitted once.
// Command buffer C holds a vector_add and is never submitted.
//
// Lines: "hal dispatch EXPORT" per dispatch recorded into a command buffer,
// "hal submit BUFFER" per queue_execute, "hsa dispatch KERNEL" per packet the
// driver writes (the warm-up included), "checksum out HEX".
#include "hsa_workload.h"
#include "hsa_workload_args.h"
#include "hal_device_slots.h"

using namespace workload;

namespace {

using status_t = uintptr_t;  // as iree_status_t: 0 is OK
constexpr status_t kOk = 0;
constexpr int kInvalidArgument = 3;
constexpr uint32_t kElements = 1024;
constexpr uint32_t kGroupSize = 64;

status_t makeStatus(int code) { return reinterpret_cast<status_t>(aligned_alloc(32, 32)) | status_t(code); }

struct Resource {
  intptr_t refCount;
  const void* const* vtable;
};

struct StringView {
  const char* data;
  size_t size;
};

// As iree_hal_buffer_ref_t: 32 bytes, passed on the stack.
struct BufferRef {
  uint32_t reserved;
  uint32_t bufferSlot;
  float* buffer;
  uint64_t offset;
  uint64_t length;
};

// As iree_hal_dispatch_config_t (IREE 3.7 and later): 64 bytes, passed on the stack.
struct DispatchConfig {
  uint32_t workgroupSize[3];
  uint32_t workgroupCount[3];
  BufferRef workgroupCountRef;
  uint32_t dynamicWorkgroupLocalMemory;
};

// As iree_hal_buffer_ref_list_t: 16 bytes; after a dispatch's constants no
// two registers are left, so it is passed on the stack.
struct BufferRefList {
  size_t count;
  const BufferRef* values;
};

// As iree_hal_semaphore_list_t: 24 bytes, passed on the stack.
struct SemaphoreList {
  size_t count;
  void** semaphores;
  uint64_t* values;
};

// As iree_hal_buffer_binding_table_t: 16 bytes, in two registers.
struct BindingTable {
  size_t count;
  const void* bindings;
};

// As iree_hal_executable_params_t (IREE 3.4 and later), passed by pointer.
struct ExecutableParams {
  uint64_t queueAffinity;
  uint32_t cachingMode;
  StringView format;
  StringView data;
  size_t constantCount;
  const uint32_t* constants;
};

struct Executable {
  Resource resource;
  Kernel kernels[2];
};

struct Recorded {
  const Executable* executable;
  uint64_t function;
  uint32_t workgroupCount[3];
  float* buffers[3];
  float factor;
};

struct CommandBuffer {
  Resource resource;
  std::vector<Recorded> dispatches;
};

struct Semaphore {
  Resource resource;
  uint64_t value;
};

struct Device {
  Resource resource;
  Runtime* runtime;
  Memory* memory;
  Queue* queue;
  hsa_signal_t done;
};

const char* const kExports[2] = {"vector_add", "scale"};

__attribute__((format(printf, 1, 2))) void say(const char* format, ...) {
  va_list args;
  va_start(args, format);
  std::vprintf(format, args);
  va_end(args);
  std::putchar('\n');
  std::fflush(stdout);
}

// One kernel dispatch packet, waited for.
template <class Args>
void runOnHsa(Device* d, const Kernel& kernel, const Args& args, uint32_t groups) {
  auto* kernarg = d->memory->kernarg(d->runtime->kernargPool, kernel, args);
  hsa_signal_store_relaxed(d->done, 1);
  const hsa_kernel_dispatch_packet_t packet = dispatchPacket1d(kernel, groups * kGroupSize, kGroupSize, kernarg, d->done);
  d->queue->submit(packet);
  say("hsa dispatch %s", kernel.name.c_str());
  waitComplete(d->done);
  d->memory->free(kernarg);
}

}  // namespace

// Slot functions keep C names (IREE's are C): iree_hal_<impl>_<method>.
// Vtables keep C names too; C++ would mangle a local const array's, so they
// are hidden globals (IREE's are local: gtap takes either).
#define SLOT __attribute__((noinline, used)) static
#define VTABLE extern __attribute__((visibility("hidden"))) const void* const
extern "C" {

// --- the command buffer ------------------------------------------------------
SLOT void iree_hal_hsa_fixture_command_buffer_destroy(CommandBuffer* cb) { delete cb; }
SLOT status_t iree_hal_hsa_fixture_command_buffer_begin(CommandBuffer* cb) {
  cb->dispatches.clear();
  return kOk;
}
SLOT status_t iree_hal_hsa_fixture_command_buffer_end(CommandBuffer*) { return kOk; }
// The commands this driver has no use for share one body; each keeps its own name.
#define UNUSED_COMMAND(name) \
  SLOT status_t iree_hal_hsa_fixture_command_buffer_##name(CommandBuffer*) { return makeStatus(12); }
UNUSED_COMMAND(begin_debug_group)
UNUSED_COMMAND(end_debug_group)
UNUSED_COMMAND(execution_barrier)
UNUSED_COMMAND(signal_event)
UNUSED_COMMAND(reset_event)
UNUSED_COMMAND(wait_events)
UNUSED_COMMAND(advise_buffer)
UNUSED_COMMAND(fill_buffer)
UNUSED_COMMAND(update_buffer)
UNUSED_COMMAND(copy_buffer)
UNUSED_COMMAND(collective)
SLOT status_t iree_hal_hsa_fixture_command_buffer_dispatch(CommandBuffer* cb, Executable* executable,
                                                           uint64_t function, const DispatchConfig config,
                                                           const void* constants, size_t constantsLength,
                                                           const BufferRefList bindings, uint64_t) {
  if (!executable || function >= 2 || bindings.count < 2 || constantsLength < sizeof(float))
    return makeStatus(kInvalidArgument);
  Recorded r{executable, function, {}, {}, 0};
  std::memcpy(r.workgroupCount, config.workgroupCount, sizeof r.workgroupCount);
  for (size_t i = 0; i < bindings.count && i < 3; ++i) r.buffers[i] = bindings.values[i].buffer;
  std::memcpy(&r.factor, constants, sizeof r.factor);
  cb->dispatches.push_back(r);
  return kOk;
}
VTABLE iree_hal_hsa_fixture_command_buffer_vtable[15] = {
    (const void*)iree_hal_hsa_fixture_command_buffer_destroy,
    (const void*)iree_hal_hsa_fixture_command_buffer_begin,
    (const void*)iree_hal_hsa_fixture_command_buffer_end,
    (const void*)iree_hal_hsa_fixture_command_buffer_begin_debug_group,
    (const void*)iree_hal_hsa_fixture_command_buffer_end_debug_group,
    (const void*)iree_hal_hsa_fixture_command_buffer_execution_barrier,
    (const void*)iree_hal_hsa_fixture_command_buffer_signal_event,
    (const void*)iree_hal_hsa_fixture_command_buffer_reset_event,
    (const void*)iree_hal_hsa_fixture_command_buffer_wait_events,
    (const void*)iree_hal_hsa_fixture_command_buffer_advise_buffer,
    (const void*)iree_hal_hsa_fixture_command_buffer_fill_buffer,
    (const void*)iree_hal_hsa_fixture_command_buffer_update_buffer,
    (const void*)iree_hal_hsa_fixture_command_buffer_copy_buffer,
    (const void*)iree_hal_hsa_fixture_command_buffer_collective,
    (const void*)iree_hal_hsa_fixture_command_buffer_dispatch,
};

// --- the executable and its cache --------------------------------------------
SLOT void iree_hal_hsa_fixture_executable_destroy(Executable* e) { delete e; }
SLOT size_t iree_hal_hsa_fixture_executable_function_count(Executable*) { return 2; }
// As iree_hal_executable_function_info_t: the name (a string view) first,
// workgroup_size[3] at byte 32.
SLOT status_t iree_hal_hsa_fixture_executable_function_info(Executable*, uint64_t function, uint8_t* info) {
  if (function >= 2) return makeStatus(kInvalidArgument);
  StringView name = {kExports[function], std::strlen(kExports[function])};
  std::memcpy(info, &name, sizeof name);
  const uint32_t size[3] = {kGroupSize, 1, 1};
  std::memcpy(info + 32, size, sizeof size);
  return kOk;
}
SLOT status_t iree_hal_hsa_fixture_executable_function_parameters(Executable*) { return makeStatus(12); }
SLOT status_t iree_hal_hsa_fixture_executable_lookup_function_by_name(Executable*) { return makeStatus(12); }
SLOT status_t iree_hal_hsa_fixture_executable_lookup_global_by_name(Executable*) { return makeStatus(12); }
VTABLE iree_hal_hsa_fixture_executable_vtable[6] = {
    (const void*)iree_hal_hsa_fixture_executable_destroy,
    (const void*)iree_hal_hsa_fixture_executable_function_count,
    (const void*)iree_hal_hsa_fixture_executable_function_info,
    (const void*)iree_hal_hsa_fixture_executable_function_parameters,
    (const void*)iree_hal_hsa_fixture_executable_lookup_function_by_name,
    (const void*)iree_hal_hsa_fixture_executable_lookup_global_by_name,
};

struct ExecutableCache {
  Resource resource;
  Runtime* runtime;
};

SLOT void iree_hal_hsa_fixture_executable_cache_destroy(ExecutableCache* c) { delete c; }
SLOT status_t iree_hal_hsa_fixture_executable_cache_infer_format(ExecutableCache*) { return makeStatus(12); }
SLOT int iree_hal_hsa_fixture_executable_cache_can_prepare_format(ExecutableCache*) { return 1; }
// The exports are the code object's kernels of the same names (the runtime
// loaded the code object when it opened).
SLOT status_t iree_hal_hsa_fixture_executable_cache_prepare_executable(ExecutableCache* c, const ExecutableParams* p,
                                                                       Executable** out) {
  if (p->data.size == 0) return makeStatus(kInvalidArgument);
  auto* e = new Executable{};
  e->resource = {1, iree_hal_hsa_fixture_executable_vtable};
  e->kernels[0] = c->runtime->kernel(kExports[0], sizeof(hsa_vector_add_args));
  e->kernels[1] = c->runtime->kernel(kExports[1], sizeof(hsa_scale_args));
  *out = e;
  return kOk;
}
VTABLE iree_hal_hsa_fixture_executable_cache_vtable[4] = {
    (const void*)iree_hal_hsa_fixture_executable_cache_destroy,
    (const void*)iree_hal_hsa_fixture_executable_cache_infer_format,
    (const void*)iree_hal_hsa_fixture_executable_cache_can_prepare_format,
    (const void*)iree_hal_hsa_fixture_executable_cache_prepare_executable,
};

// --- a timeline semaphore ----------------------------------------------------
struct Timeout {
  uint32_t type;
  int64_t nanos;
};

SLOT void iree_hal_hsa_fixture_semaphore_destroy(Semaphore* s) { delete s; }
SLOT uint64_t iree_hal_hsa_fixture_semaphore_query(Semaphore* s) { return s->value; }
SLOT status_t iree_hal_hsa_fixture_semaphore_signal(Semaphore* s, uint64_t value, const void*) {
  if (value <= s->value) return makeStatus(kInvalidArgument);
  s->value = value;
  return kOk;
}
SLOT void iree_hal_hsa_fixture_semaphore_on_fail(Semaphore*) {}
// queue_execute has waited for its packets: a value not reached yet never will be.
SLOT status_t iree_hal_hsa_fixture_semaphore_wait(Semaphore* s, uint64_t value, Timeout, uint64_t) {
  return s->value >= value ? kOk : makeStatus(4);
}
SLOT status_t iree_hal_hsa_fixture_semaphore_import_timepoint(Semaphore*) { return makeStatus(12); }
SLOT status_t iree_hal_hsa_fixture_semaphore_export_timepoint(Semaphore*) { return makeStatus(12); }
VTABLE iree_hal_hsa_fixture_semaphore_vtable[7] = {
    (const void*)iree_hal_hsa_fixture_semaphore_destroy,
    (const void*)iree_hal_hsa_fixture_semaphore_query,
    (const void*)iree_hal_hsa_fixture_semaphore_signal,
    (const void*)iree_hal_hsa_fixture_semaphore_on_fail,
    (const void*)iree_hal_hsa_fixture_semaphore_wait,
    (const void*)iree_hal_hsa_fixture_semaphore_import_timepoint,
    (const void*)iree_hal_hsa_fixture_semaphore_export_timepoint,
};

// --- the device --------------------------------------------------------------
#define UNUSED_DEVICE(name) \
  SLOT status_t iree_hal_hsa_fixture_device_##name(Device*) { return makeStatus(12); }
UNUSED_DEVICE(id)
UNUSED_DEVICE(host_allocator)
UNUSED_DEVICE(device_allocator)
UNUSED_DEVICE(replace_device_allocator)
UNUSED_DEVICE(replace_channel_provider)
UNUSED_DEVICE(trim)
UNUSED_DEVICE(query_i64)
UNUSED_DEVICE(query_capabilities)
UNUSED_DEVICE(topology_info)
UNUSED_DEVICE(refine_topology_edge)
UNUSED_DEVICE(assign_topology_info)
UNUSED_DEVICE(create_channel)
UNUSED_DEVICE(create_command_buffer)
UNUSED_DEVICE(create_event)
UNUSED_DEVICE(create_executable_cache)
UNUSED_DEVICE(import_file)
UNUSED_DEVICE(create_semaphore)
UNUSED_DEVICE(query_semaphore_compatibility)
UNUSED_DEVICE(query_queue_pool_backend)
UNUSED_DEVICE(queue_alloca)
UNUSED_DEVICE(queue_dealloca)
UNUSED_DEVICE(queue_fill)
UNUSED_DEVICE(queue_update)
UNUSED_DEVICE(queue_copy)
UNUSED_DEVICE(queue_read)
UNUSED_DEVICE(queue_write)
UNUSED_DEVICE(queue_host_call)
UNUSED_DEVICE(queue_dispatch)
UNUSED_DEVICE(profiling_begin)
UNUSED_DEVICE(profiling_flush)
UNUSED_DEVICE(profiling_end)
UNUSED_DEVICE(external_capture_begin)
UNUSED_DEVICE(external_capture_end)
SLOT void iree_hal_hsa_fixture_device_destroy(Device* d) { delete d; }
SLOT status_t iree_hal_hsa_fixture_device_queue_flush(Device*, uint64_t) { return kOk; }
SLOT status_t iree_hal_hsa_fixture_device_queue_execute(Device* d, uint64_t, const SemaphoreList wait,
                                                        const SemaphoreList signal, CommandBuffer* cb, BindingTable,
                                                        uint64_t) {
  for (size_t i = 0; i < wait.count; ++i)
    if (static_cast<Semaphore*>(wait.semaphores[i])->value < wait.values[i]) return makeStatus(4);
  for (const Recorded& r : cb->dispatches) {
    const Kernel& kernel = r.executable->kernels[r.function];
    if (r.function == 0) {
      hsa_vector_add_args args{r.buffers[0], r.buffers[1], r.buffers[2], kElements};
      runOnHsa(d, kernel, args, r.workgroupCount[0]);
    } else {
      hsa_scale_args args{r.buffers[0], r.buffers[1], r.factor, kElements};
      runOnHsa(d, kernel, args, r.workgroupCount[0]);
    }
  }
  for (size_t i = 0; i < signal.count; ++i) static_cast<Semaphore*>(signal.semaphores[i])->value = signal.values[i];
  return kOk;
}
#define DEVICE_SLOT(name) (const void*)iree_hal_hsa_fixture_device_##name,
VTABLE iree_hal_hsa_fixture_device_vtable[36] = {HAL_DEVICE_SLOTS(DEVICE_SLOT)};

}  // extern "C"

// --- the program -------------------------------------------------------------
namespace {

// Calls through an object's vtable, as IREE's public functions do.
template <class Fn, class Object, class... Args>
auto call(Object* object, size_t slot, Args... args) {
  auto* resource = reinterpret_cast<Resource*>(object);
  const void* const* vtable = resource->vtable;
  __asm__ volatile("" : "+r"(vtable));  // the vtable is data: no call is resolved at compile time
  return reinterpret_cast<Fn>(const_cast<void*>(vtable[slot]))(object, args...);
}

template <class T>
T* create(const void* const* vtable) {
  auto* object = new T{};
  object->resource = {1, vtable};
  return object;
}

using DispatchFn = status_t (*)(CommandBuffer*, Executable*, uint64_t, const DispatchConfig, const void*, size_t,
                                const BufferRefList, uint64_t);
using ExecuteFn = status_t (*)(Device*, uint64_t, const SemaphoreList, const SemaphoreList, CommandBuffer*,
                               BindingTable, uint64_t);

void record(CommandBuffer* cb, Executable* e, uint64_t function, float* const buffers[3], float factor) {
  BufferRef bindings[3] = {};
  for (int i = 0; i < 3; ++i) bindings[i] = {0, uint32_t(i), buffers[i], 0, kElements * sizeof(float)};
  DispatchConfig config = {{0, 0, 0}, {kElements / kGroupSize, 1, 1}, {}, 0};
  const BufferRefList list = {size_t(function == 0 ? 3 : 2), bindings};
  status_t s = call<DispatchFn>(cb, 14, e, function, config, static_cast<const void*>(&factor), sizeof factor, list,
                                uint64_t(0));
  if (s != kOk) setupFailed("dispatch of %s failed", kExports[function]);
  say("hal dispatch %s", kExports[function]);
}

}  // namespace

int main(int argc, char** argv) {
  const char* usage = "[ROUNDS]";
  const uint32_t rounds = countArgument(argc, argv, 1, 3, usage, 1000);
  noMoreArguments(argc, argv, 1, usage);

  Report out = Report::immediate();
  Runtime rt;
  rt.open(Runtime::Load::kFromMemory);
  Memory mem(out);
  Queue queue(rt, 64);
  auto* device = create<Device>(iree_hal_hsa_fixture_device_vtable);
  device->runtime = &rt;
  device->memory = &mem;
  device->queue = &queue;
  device->done = createSignal(1);

  float* a = mem.allocate<float>(rt.hostPool, kElements);
  float* b = mem.allocate<float>(rt.hostPool, kElements);
  float* c = mem.allocate<float>(rt.hostPool, kElements);
  for (uint32_t i = 0; i < kElements; ++i) {
    a[i] = 0.5f * float(i);
    b[i] = float(i % 7);
    c[i] = 0;
  }
  // The driver's own warm-up, before any HAL work.
  const Kernel warmup = rt.kernel("scale", sizeof(hsa_scale_args));
  hsa_scale_args warm{a, c, 1.0f, kElements};
  runOnHsa(device, warmup, warm, kElements / kGroupSize);

  auto* cache = create<ExecutableCache>(iree_hal_hsa_fixture_executable_cache_vtable);
  cache->runtime = &rt;
  const std::vector<uint8_t> code = readCodeObject(codeObjectPath());
  ExecutableParams params = {~0ull, 0, {"amdgcn-amd-amdhsa--sim", 22},
                             {reinterpret_cast<const char*>(code.data()), code.size()}, 0, nullptr};
  Executable* executable = nullptr;
  using PrepareFn = status_t (*)(ExecutableCache*, const ExecutableParams*, Executable**);
  if (call<PrepareFn>(cache, 3, static_cast<const ExecutableParams*>(&params), &executable) != kOk)
    setupFailed("prepare_executable failed");

  using BeginFn = status_t (*)(CommandBuffer*);
  auto* bufferA = create<CommandBuffer>(iree_hal_hsa_fixture_command_buffer_vtable);
  float* const sum[3] = {a, b, c};  // c = a + b
  float* const scaled[3] = {c, b, nullptr};  // b = 0.5 c
  float* const again[3] = {c, a, c};  // c = c + a
  call<BeginFn>(bufferA, 1);
  record(bufferA, executable, 0, sum, 0);
  record(bufferA, executable, 1, scaled, 0.5f);
  record(bufferA, executable, 0, again, 0);
  call<BeginFn>(bufferA, 2);
  auto* bufferB = create<CommandBuffer>(iree_hal_hsa_fixture_command_buffer_vtable);
  call<BeginFn>(bufferB, 1);
  record(bufferB, executable, 1, scaled, 0.25f);
  call<BeginFn>(bufferB, 2);
  auto* bufferC = create<CommandBuffer>(iree_hal_hsa_fixture_command_buffer_vtable);
  call<BeginFn>(bufferC, 1);
  record(bufferC, executable, 0, sum, 0);
  call<BeginFn>(bufferC, 2);

  auto* semaphore = create<Semaphore>(iree_hal_hsa_fixture_semaphore_vtable);
  void* semaphores[1] = {semaphore};
  using WaitFn = status_t (*)(Semaphore*, uint64_t, Timeout, uint64_t);
  auto submit = [&](CommandBuffer* cb, const char* name, uint64_t value) {
    SemaphoreList none = {0, nullptr, nullptr};
    SemaphoreList signal = {1, semaphores, &value};
    if (call<ExecuteFn>(device, 29, uint64_t(~0ull), none, signal, cb, BindingTable{0, nullptr}, uint64_t(0)) != kOk)
      setupFailed("queue_execute of %s failed", name);
    say("hal submit %s", name);
    if (call<WaitFn>(semaphore, 4, value, Timeout{0, INT64_MAX}, uint64_t(0)) != kOk)
      setupFailed("the wait for %s failed", name);
  };
  uint64_t value = 0;
  for (uint32_t r = 0; r < rounds; ++r) submit(bufferA, "A", ++value);
  submit(bufferB, "B", ++value);

  Checksum result;
  result.add(a, kElements * sizeof(float));
  result.add(b, kElements * sizeof(float));
  result.add(c, kElements * sizeof(float));
  out.checksum("out", result);

  using DestroyFn = void (*)(void*);
  for (void* object : {static_cast<void*>(bufferA), static_cast<void*>(bufferB), static_cast<void*>(bufferC)})
    call<DestroyFn>(static_cast<CommandBuffer*>(object), 0);
  call<void (*)(Executable*)>(executable, 0);
  call<void (*)(ExecutableCache*)>(cache, 0);
  call<void (*)(Semaphore*)>(semaphore, 0);
  HSA_CHECK(hsa_signal_destroy(device->done));
  call<void (*)(Device*)>(device, 0);
  queue.destroy();
  mem.free({a, b, c});
  rt.close();
  return 0;
}
