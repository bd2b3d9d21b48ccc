/* A program shaped like IREE's HAL, for the HAL front end's tests: objects
 * that start with a reference count and a pointer to a const vtable (offset 8),
 * vtables that are local objects named iree_hal_<impl>_vtable, and slot
 * functions named iree_hal_<impl>_<method>. The command buffer's layout is
 * IREE's (3.7 and later): 15 slots, in this order. Calls go through the
 * vtable, as IREE's public functions do.
 *
 * A second implementation, "odd_command_buffer", has fill_buffer and
 * copy_buffer swapped: no IREE version has that layout, so it must be left
 * alone (and say so).
 *
 *   hal_fixture [N=1000] [THREADS=1] [miscounted|typed-copies|host-calls]
 *
 * Each thread records N fills (plus one that fails with INVALID_ARGUMENT),
 * N/2 copies and one update into its own command buffer, prepares an
 * executable with two exports through an executable cache (IREE's newest
 * layouts, the executable object laid out as IREE's newest local executable)
 * and records N/10+1 dispatches of them (every third the second export, and
 * one of no executable, which fails), runs two dispatches' workgroups through
 * the executable's issue_call and two through the export functions its
 * dispatch_ptrs holds (as IREE's newest local-task does), queues N/20+1 fills
 * (256 bytes), updates (14) and copies (512) on a device (36 slots), then N
 * fills through the odd command buffer. With "miscounted", each thread also
 * prepares an executable whose export_count member disagrees with its
 * function_count and runs one dispatch through its dispatch_ptrs. With
 * "typed-copies", each thread also allocates a host-local and a device-local
 * buffer on the device's queue and records a copy_buffer of 256 bytes each
 * way between them. Each round's submission is waited for through a fence
 * (iree_hal_fence_wait), and the last value once on the device
 * (iree_hal_device_wait_semaphores), both through
 * iree_async_semaphore_multi_wait as in IREE's newest sources: no vtable
 * slot. With "host-calls", each thread also queues three host calls
 * (queue_host_call, run inline as IREE's local-sync does) whose function
 * queues a fill and signals a semaphore through the HAL. Prints
 * per-thread totals and a checksum; the output is the same with and without
 * a tool watching. On stderr, thread 0's host time per fill and per dispatch
 * (benchmarks/compare reads them). */
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hal_device_slots.h"
#include "../op_counters.h"

typedef uintptr_t status_t; /* as iree_status_t: 0 is OK, else the code is in the low 5 bits */
enum { kOk = 0, kInvalidArgument = 3 };

typedef struct {
  intptr_t ref_count;
  const void* const* vtable;
} resource_t;

/* As iree_hal_buffer_ref_t: 32 bytes, passed on the stack. */
typedef struct {
  uint32_t reserved;
  uint32_t buffer_slot;
  uint8_t* buffer;
  uint64_t offset;
  uint64_t length;
} buffer_ref_t;

/* As iree_hal_dispatch_config_t (IREE 3.7 and later): 64 bytes, passed on the stack. */
typedef struct {
  uint32_t workgroup_size[3];
  uint32_t workgroup_count[3];
  buffer_ref_t workgroup_count_ref;
  uint32_t dynamic_workgroup_local_memory;
} dispatch_config_t;

typedef struct {
  resource_t resource;
  uint64_t fills, copies, updates, dispatches, bytes, sum;
} command_buffer_t;

/* A failed status: an allocated, 32-byte-aligned object whose low bits carry the code. */
static status_t make_status(int code) {
  void* p = aligned_alloc(32, 32);
  return (status_t)p | (status_t)code;
}
static void free_status(status_t s) { free((void*)(s & ~(status_t)31)); }

#define SLOT __attribute__((noinline, used)) static

/* --- the command buffer ---------------------------------------------------- */
SLOT void iree_hal_fake_command_buffer_destroy(command_buffer_t* cb) { free(cb); }
SLOT status_t iree_hal_fake_command_buffer_begin(command_buffer_t* cb) { cb->sum = 17; return kOk; }
SLOT status_t iree_hal_fake_command_buffer_end(command_buffer_t* cb) { cb->sum ^= cb->bytes; return kOk; }
SLOT status_t iree_hal_fake_command_buffer_begin_debug_group(command_buffer_t* cb, const char* label, size_t length,
                                                             uint32_t color, const void* location) {
  (void)cb; (void)label; (void)length; (void)color; (void)location; return kOk;
}
SLOT status_t iree_hal_fake_command_buffer_end_debug_group(command_buffer_t* cb) { (void)cb; return kOk; }
SLOT status_t iree_hal_fake_command_buffer_execution_barrier(command_buffer_t* cb, uint32_t source, uint32_t target,
                                                             uint32_t flags, size_t memory_count, const void* memory,
                                                             size_t buffer_count, const void* buffers) {
  (void)cb; (void)source; (void)target; (void)flags; (void)memory_count; (void)memory; (void)buffer_count;
  (void)buffers; return kOk;
}
SLOT status_t iree_hal_fake_command_buffer_signal_event(command_buffer_t* cb, void* e, uint32_t s) {
  (void)cb; (void)e; (void)s; return kOk;
}
SLOT status_t iree_hal_fake_command_buffer_reset_event(command_buffer_t* cb, void* e, uint32_t s) {
  (void)cb; (void)e; (void)s; return kOk;
}
SLOT status_t iree_hal_fake_command_buffer_wait_events(command_buffer_t* cb, size_t n, const void** e, uint32_t s,
                                                       uint32_t t, size_t mn, const void* m, size_t bn,
                                                       const void* b) {
  (void)cb; (void)n; (void)e; (void)s; (void)t; (void)mn; (void)m; (void)bn; (void)b; return kOk;
}
SLOT status_t iree_hal_fake_command_buffer_advise_buffer(command_buffer_t* cb, buffer_ref_t ref, uint32_t flags,
                                                         uint64_t a0, uint64_t a1) {
  (void)cb; (void)ref; (void)flags; (void)a0; (void)a1; return kOk;
}
SLOT status_t iree_hal_fake_command_buffer_fill_buffer(command_buffer_t* cb, buffer_ref_t target, const void* pattern,
                                                       size_t pattern_length, uint64_t flags) {
  if (pattern_length != 1 && pattern_length != 2 && pattern_length != 4) return make_status(kInvalidArgument);
  for (uint64_t i = 0; i + pattern_length <= target.length; i += pattern_length)
    memcpy(target.buffer + target.offset + i, pattern, pattern_length);
  cb->fills++;
  cb->bytes += target.length;
  cb->sum = cb->sum * 31 + target.length + flags + target.buffer_slot;
  return kOk;
}
SLOT status_t iree_hal_fake_command_buffer_update_buffer(command_buffer_t* cb, const void* source, size_t source_offset,
                                                         buffer_ref_t target, uint64_t flags) {
  memcpy(target.buffer + target.offset, (const uint8_t*)source + source_offset, target.length);
  cb->updates++;
  cb->sum = cb->sum * 31 + target.length + flags;
  return kOk;
}
SLOT status_t iree_hal_fake_command_buffer_copy_buffer(command_buffer_t* cb, buffer_ref_t source, buffer_ref_t target,
                                                       uint64_t flags) {
  memcpy(target.buffer + target.offset, source.buffer + source.offset, source.length);
  cb->copies++;
  cb->bytes += source.length;
  cb->sum = cb->sum * 31 + source.length + target.offset + flags;
  return kOk;
}
SLOT status_t iree_hal_fake_command_buffer_collective(command_buffer_t* cb, void* channel, uint32_t op, uint32_t param,
                                                      buffer_ref_t send, buffer_ref_t recv, uint64_t count) {
  (void)cb; (void)channel; (void)op; (void)param; (void)send; (void)recv; (void)count; return kOk;
}
/* As iree_hal_buffer_ref_list_t: 16 bytes; after a dispatch's constants no
 * two registers are left, so it is passed on the stack. */
typedef struct {
  size_t count;
  const buffer_ref_t* values;
} buffer_ref_list_t;

SLOT status_t iree_hal_fake_command_buffer_dispatch(command_buffer_t* cb, void* executable, uint64_t function,
                                                    const dispatch_config_t config, const void* constants,
                                                    size_t constants_length, const buffer_ref_list_t bindings,
                                                    uint64_t flags) {
  if (!executable || function >= 2) return make_status(kInvalidArgument);
  cb->dispatches++;
  uint64_t groups = (uint64_t)config.workgroup_count[0] * config.workgroup_count[1] * config.workgroup_count[2];
  cb->sum = cb->sum * 31 + groups + function + constants_length + bindings.count + flags +
            (constants ? *(const uint32_t*)constants : 0) + bindings.values[bindings.count - 1].length;
  return kOk;
}

static const void* const iree_hal_fake_command_buffer_vtable[15] = {
    (const void*)iree_hal_fake_command_buffer_destroy,       (const void*)iree_hal_fake_command_buffer_begin,
    (const void*)iree_hal_fake_command_buffer_end,           (const void*)iree_hal_fake_command_buffer_begin_debug_group,
    (const void*)iree_hal_fake_command_buffer_end_debug_group, (const void*)iree_hal_fake_command_buffer_execution_barrier,
    (const void*)iree_hal_fake_command_buffer_signal_event,  (const void*)iree_hal_fake_command_buffer_reset_event,
    (const void*)iree_hal_fake_command_buffer_wait_events,   (const void*)iree_hal_fake_command_buffer_advise_buffer,
    (const void*)iree_hal_fake_command_buffer_fill_buffer,   (const void*)iree_hal_fake_command_buffer_update_buffer,
    (const void*)iree_hal_fake_command_buffer_copy_buffer,   (const void*)iree_hal_fake_command_buffer_collective,
    (const void*)iree_hal_fake_command_buffer_dispatch,
};

/* --- an executable cache and its executables (IREE's newest layouts) ---------- */
typedef struct {
  const char* data;
  size_t size;
} string_view_t;

/* As iree_hal_executable_params_t (IREE 3.4 and later), passed by pointer. */
typedef struct {
  uint64_t queue_affinity;
  uint32_t caching_mode;
  string_view_t executable_format;
  struct {
    const uint8_t* data;
    size_t data_length;
  } executable_data;
  size_t constant_count;
  const uint32_t* constants;
} executable_params_t;

/* As iree_hal_executable_dispatch_state_v0_t and ..._workgroup_state_v0_t. */
typedef struct {
  uint32_t workgroup_size_x, workgroup_size_y;
  uint16_t workgroup_size_z, constant_count;
  uint32_t workgroup_count_x, workgroup_count_y;
  uint16_t workgroup_count_z;
  uint8_t max_concurrency, binding_count;
  const uint32_t* constants;
  void* const* binding_ptrs;
  const size_t* binding_lengths;
} dispatch_state_t;
typedef struct {
  uint32_t workgroup_id_x, workgroup_id_y;
  uint16_t workgroup_id_z, reserved;
  uint32_t processor_id;
  void* local_memory;
  uint32_t local_memory_size;
} workgroup_state_t;

/* As iree_hal_executable_dispatch_v0_t: an export's function, one workgroup per call. */
typedef int (*export_fn)(const void* environment, const dispatch_state_t* dispatch, const workgroup_state_t* workgroup);

/* As iree_hal_local_executable_t (IREE after 3.11): the resource, the host
 * allocator, then dispatch_attrs at 32, dispatch_ptrs at 40, export_count at
 * 48, export_names at 56, profile_id, the environment. */
typedef struct {
  resource_t resource;
  struct {
    void* self;
    void* ctl;
  } host_allocator;
  const void* dispatch_attrs;
  const export_fn* dispatch_ptrs;
  size_t export_count;
  const char* const* export_names;
  uint64_t profile_id;
  uint64_t environment[8]; /* iree_hal_executable_environment_v0_t: opaque here */
  size_t bytes;
} executable_t;
_Static_assert(offsetof(executable_t, dispatch_ptrs) == 40 && offsetof(executable_t, export_count) == 48 &&
                   offsetof(executable_t, export_names) == 56,
               "IREE's local executable layout");

static const char* const kExports[2] = {"fixture_fill_export", "fixture_copy_export"};
static const uint32_t kExportGroupSize[2][3] = {{64, 1, 1}, {8, 8, 1}};

/* The exports' code (a library's functions): each adds its workgroup's id,
 * weighted by its ordinal + 1, into the first binding. */
static int run_workgroup(size_t ordinal, const dispatch_state_t* dispatch, const workgroup_state_t* workgroup) {
  uint64_t* sum = (uint64_t*)dispatch->binding_ptrs[0];
  *sum += (ordinal + 1) * (workgroup->workgroup_id_x + 10 * workgroup->workgroup_id_y + 1);
  return 0;
}
__attribute__((noinline)) static int fixture_fill_export(const void* environment, const dispatch_state_t* dispatch,
                                                         const workgroup_state_t* workgroup) {
  (void)environment;
  return run_workgroup(0, dispatch, workgroup);
}
__attribute__((noinline)) static int fixture_copy_export(const void* environment, const dispatch_state_t* dispatch,
                                                         const workgroup_state_t* workgroup) {
  (void)environment;
  return run_workgroup(1, dispatch, workgroup);
}
static const export_fn kExportFunctions[2] = {fixture_fill_export, fixture_copy_export};

SLOT void iree_hal_fake_executable_destroy(executable_t* e) { free(e); }
SLOT size_t iree_hal_fake_executable_function_count(executable_t* e) { (void)e; return 2; }
/* As iree_hal_executable_function_info_t: name (string view) first, flags,
 * three counts, then workgroup_size[3] at byte 32. */
SLOT status_t iree_hal_fake_executable_function_info(executable_t* e, uint64_t function, uint8_t* info) {
  (void)e;
  if (function >= 2) return make_status(kInvalidArgument);
  string_view_t name = {kExports[function], strlen(kExports[function])};
  memcpy(info, &name, sizeof name);
  memcpy(info + 32, kExportGroupSize[function], sizeof kExportGroupSize[function]);
  return kOk;
}
SLOT status_t iree_hal_fake_executable_function_parameters(executable_t* e, uint64_t f, size_t c, void* p) {
  (void)e; (void)f; (void)c; (void)p; return kOk;
}
SLOT status_t iree_hal_fake_executable_lookup_function_by_name(executable_t* e, string_view_t n, uint64_t* out) {
  (void)e; (void)n; *out = 0; return kOk;
}
SLOT status_t iree_hal_fake_executable_lookup_global_by_name(executable_t* e, string_view_t n, uint64_t a, void** o) {
  (void)e; (void)n; (void)a; *o = NULL; return kOk;
}
/* A CPU driver runs one workgroup. Through the object's own dispatch_ptrs
 * (IREE's libraries call their own table; an implementation may read the
 * object's): the workgroup is one, whichever way it is counted. */
SLOT status_t iree_hal_fake_executable_issue_call(executable_t* e, size_t ordinal, const dispatch_state_t* dispatch,
                                                  const workgroup_state_t* workgroup, uint32_t worker) {
  (void)worker;
  return e->dispatch_ptrs[ordinal](e->environment, dispatch, workgroup) == 0 ? kOk : make_status(13);
}
/* IREE's newest local executable: the executable's six slots, then issue_call. */
static const void* const iree_hal_fake_executable_vtable[7] = {
    (const void*)iree_hal_fake_executable_destroy,       (const void*)iree_hal_fake_executable_function_count,
    (const void*)iree_hal_fake_executable_function_info, (const void*)iree_hal_fake_executable_function_parameters,
    (const void*)iree_hal_fake_executable_lookup_function_by_name,
    (const void*)iree_hal_fake_executable_lookup_global_by_name, (const void*)iree_hal_fake_executable_issue_call,
};

typedef struct {
  resource_t resource;
} executable_cache_t;

SLOT void iree_hal_fake_executable_cache_destroy(executable_cache_t* c) { free(c); }
SLOT status_t iree_hal_fake_executable_cache_infer_format(executable_cache_t* c, uint32_t mode, const void* d,
                                                          size_t n, size_t cap, char* f, size_t* out) {
  (void)c; (void)mode; (void)d; (void)n; (void)cap; (void)f; (void)out; return kOk;
}
SLOT int iree_hal_fake_executable_cache_can_prepare_format(executable_cache_t* c, uint32_t mode, string_view_t f) {
  (void)c; (void)mode; (void)f; return 1;
}
/* As IREE's loaders fill a local executable: the library's function table
 * and names. Executable data starting with "miscounted" gets an export_count
 * that disagrees with function_count (a layout gtap must not trust). */
static executable_t* new_executable(const executable_params_t* p) {
  executable_t* e = calloc(1, sizeof *e);
  e->resource.ref_count = 1;
  e->resource.vtable = iree_hal_fake_executable_vtable;
  e->dispatch_ptrs = kExportFunctions;
  e->export_count = 2;
  e->export_names = kExports;
  e->bytes = p->executable_data.data_length;
  if (p->executable_data.data_length >= 10 && !memcmp(p->executable_data.data, "miscounted", 10)) e->export_count = 1;
  return e;
}
SLOT status_t iree_hal_fake_executable_cache_prepare_executable(executable_cache_t* c, const executable_params_t* p,
                                                                executable_t** out) {
  (void)c;
  *out = new_executable(p);
  return kOk;
}
static const void* const iree_hal_fake_executable_cache_vtable[4] = {
    (const void*)iree_hal_fake_executable_cache_destroy, (const void*)iree_hal_fake_executable_cache_infer_format,
    (const void*)iree_hal_fake_executable_cache_can_prepare_format,
    (const void*)iree_hal_fake_executable_cache_prepare_executable,
};

/* --- an executable loader (IREE's local drivers): its slots agree with an
 * executable cache's in two places (destroy, infer_format), and with a
 * loader's in all four; try_load's third argument is a worker count. ------ */
typedef struct {
  resource_t resource;
} loader_t;

SLOT void iree_hal_fake_loader_destroy(loader_t* l) { free(l); }
SLOT status_t iree_hal_fake_loader_infer_format(loader_t* l, uint32_t mode, const void* d, size_t n, size_t cap,
                                                char* f, size_t* out) {
  (void)l; (void)mode; (void)d; (void)n; (void)cap; (void)f; (void)out; return kOk;
}
SLOT int iree_hal_fake_loader_query_support(loader_t* l, uint32_t mode, string_view_t f) {
  (void)l; (void)mode; (void)f; return 1;
}
SLOT status_t iree_hal_fake_loader_try_load(loader_t* l, const executable_params_t* p, size_t worker_capacity,
                                            executable_t** out) {
  (void)l; (void)worker_capacity;
  *out = new_executable(p);
  return kOk;
}
static const void* const iree_hal_fake_loader_vtable[4] = {
    (const void*)iree_hal_fake_loader_destroy, (const void*)iree_hal_fake_loader_infer_format,
    (const void*)iree_hal_fake_loader_query_support, (const void*)iree_hal_fake_loader_try_load,
};

/* --- a device (IREE's newest layout: 36 slots) with queue transfers --------- */
typedef struct {
  size_t count;
  void** semaphores;
  uint64_t* payload_values;
} semaphore_list_t; /* as iree_hal_semaphore_list_t: 24 bytes, passed on the stack */

typedef struct {
  resource_t resource;
  uint64_t filled, copied;
} device_t;

/* The slots the fixture never calls share one body; each keeps its own name. */
#define UNUSED_DEVICE_SLOT(name) \
  SLOT status_t iree_hal_fake_device_##name(device_t* d) { (void)d; return make_status(12); }
UNUSED_DEVICE_SLOT(id)
UNUSED_DEVICE_SLOT(host_allocator)
UNUSED_DEVICE_SLOT(device_allocator)
UNUSED_DEVICE_SLOT(replace_device_allocator)
UNUSED_DEVICE_SLOT(replace_channel_provider)
UNUSED_DEVICE_SLOT(trim)
UNUSED_DEVICE_SLOT(query_i64)
UNUSED_DEVICE_SLOT(query_capabilities)
UNUSED_DEVICE_SLOT(topology_info)
UNUSED_DEVICE_SLOT(refine_topology_edge)
UNUSED_DEVICE_SLOT(assign_topology_info)
UNUSED_DEVICE_SLOT(create_channel)
UNUSED_DEVICE_SLOT(create_command_buffer)
UNUSED_DEVICE_SLOT(create_event)
UNUSED_DEVICE_SLOT(create_executable_cache)
UNUSED_DEVICE_SLOT(create_semaphore)
UNUSED_DEVICE_SLOT(query_semaphore_compatibility)
UNUSED_DEVICE_SLOT(query_queue_pool_backend)
UNUSED_DEVICE_SLOT(queue_dispatch)
UNUSED_DEVICE_SLOT(profiling_begin)
UNUSED_DEVICE_SLOT(profiling_flush)
UNUSED_DEVICE_SLOT(profiling_end)
UNUSED_DEVICE_SLOT(external_capture_begin)
UNUSED_DEVICE_SLOT(external_capture_end)

/* --- a timeline semaphore (IREE's newest layout: 7 slots) ------------------- */
typedef struct {
  resource_t resource;
  uint64_t value;
} semaphore_t;

typedef struct {
  uint32_t type; /* 0 absolute, 1 relative */
  int64_t nanos;
} timeout_t; /* as iree_timeout_t: 16 bytes, in two registers */

SLOT void iree_hal_fake_semaphore_destroy(semaphore_t* s) { free(s); }
SLOT uint64_t iree_hal_fake_semaphore_query(semaphore_t* s) { return s->value; }
SLOT status_t iree_hal_fake_semaphore_signal(semaphore_t* s, uint64_t value, const void* frontier) {
  (void)frontier;
  if (value <= s->value) return make_status(kInvalidArgument);
  s->value = value;
  return kOk;
}
SLOT void iree_hal_fake_semaphore_on_fail(semaphore_t* s, uint32_t code) { (void)s; (void)code; }
/* Nothing runs asynchronously here: a value not reached yet never will be. */
SLOT status_t iree_hal_fake_semaphore_wait(semaphore_t* s, uint64_t value, timeout_t timeout, uint64_t flags) {
  (void)timeout; (void)flags;
  return s->value >= value ? kOk : make_status(4 /* DEADLINE_EXCEEDED */);
}
SLOT status_t iree_hal_fake_semaphore_import_timepoint(semaphore_t* s) { (void)s; return make_status(12); }
SLOT status_t iree_hal_fake_semaphore_export_timepoint(semaphore_t* s) { (void)s; return make_status(12); }
static const void* const iree_hal_fake_semaphore_vtable[7] = {
    (const void*)iree_hal_fake_semaphore_destroy,      (const void*)iree_hal_fake_semaphore_query,
    (const void*)iree_hal_fake_semaphore_signal,       (const void*)iree_hal_fake_semaphore_on_fail,
    (const void*)iree_hal_fake_semaphore_wait,         (const void*)iree_hal_fake_semaphore_import_timepoint,
    (const void*)iree_hal_fake_semaphore_export_timepoint,
};

/* Signals each semaphore of a list to its value, as the device would. */
static void signal_list(const semaphore_list_t* list) {
  for (size_t i = 0; i < list->count; ++i) ((semaphore_t*)list->semaphores[i])->value = list->payload_values[i];
}

/* IREE's host waits on semaphore lists since its semaphores became async
 * semaphores (after 3.11): iree_hal_semaphore_list_wait, iree_hal_fence_wait
 * and iree_hal_device_wait_semaphores all go to
 * iree_async_semaphore_multi_wait, which reads each semaphore's timeline
 * value itself and blocks on a notification, calling no vtable slot. Nothing
 * runs asynchronously here: a value not reached yet never will be. */
enum { kWaitModeAll = 0, kWaitModeAny = 1 };
typedef struct {
  void* self;
  void* ctl;
} allocator_t; /* as iree_allocator_t */
__attribute__((noinline, used)) static status_t iree_async_semaphore_multi_wait(
    uint32_t wait_mode, semaphore_t** semaphores, const uint64_t* minimum_values, size_t count, timeout_t timeout,
    uint64_t flags, allocator_t allocator) {
  (void)timeout; (void)flags; (void)allocator;
  size_t reached = 0;
  for (size_t i = 0; i < count; ++i)
    if (__atomic_load_n(&semaphores[i]->value, __ATOMIC_ACQUIRE) >= minimum_values[i]) ++reached;
  int done = wait_mode == kWaitModeAll ? reached == count : reached > 0 || count == 0;
  return done ? kOk : (status_t)4 /* DEADLINE_EXCEEDED, as a code-only status */;
}
__attribute__((noinline)) static status_t iree_hal_semaphore_list_wait(semaphore_list_t list, timeout_t timeout,
                                                                        uint64_t flags) {
  if (!list.count) return kOk;
  allocator_t system = {NULL, NULL};
  return iree_async_semaphore_multi_wait(kWaitModeAll, (semaphore_t**)list.semaphores, list.payload_values,
                                         list.count, timeout, flags, system);
}
typedef struct {
  intptr_t ref_count;
  semaphore_list_t list;
} fence_t; /* a fence: a list of semaphore values */
__attribute__((noinline)) static status_t iree_hal_fence_wait(fence_t* fence, timeout_t timeout, uint64_t flags) {
  if (!fence || !fence->list.count) return kOk;
  return iree_hal_semaphore_list_wait(fence->list, timeout, flags);
}
__attribute__((noinline)) static status_t iree_hal_device_wait_semaphores(device_t* device, uint32_t wait_mode,
                                                                           semaphore_list_t list, timeout_t timeout,
                                                                           uint64_t flags) {
  (void)device;
  if (!list.count) return kOk;
  allocator_t system = {NULL, NULL};
  return iree_async_semaphore_multi_wait(wait_mode, (semaphore_t**)list.semaphores, list.payload_values,
                                         list.count, timeout, flags, system);
}

/* As iree_hal_host_call_t and iree_hal_host_call_context_t. */
typedef struct {
  device_t* device;
  uint64_t queue_affinity;
  semaphore_list_t signal_semaphore_list;
} host_call_context_t;
typedef status_t (*host_call_fn)(void* user_data, const uint64_t args[4], host_call_context_t* context);
typedef struct {
  host_call_fn fn;
  void* user_data;
} host_call_t;

/* As IREE's local-sync device does it: wait for the wait list (its own
 * iree_hal_semaphore_list_wait), call the program's function inline, then
 * signal the signal list through each semaphore's signal slot
 * (iree_hal_semaphore_list_signal). */
SLOT status_t iree_hal_fake_device_queue_host_call(device_t* d, uint64_t affinity, const semaphore_list_t wait,
                                                   const semaphore_list_t signal, host_call_t call,
                                                   const uint64_t args[4], uint64_t flags) {
  (void)flags;
  timeout_t forever = {0, INT64_MAX};
  status_t waited = iree_hal_semaphore_list_wait(wait, forever, 0);
  if (waited) return waited;
  host_call_context_t context = {d, affinity, signal};
  status_t called = call.fn(call.user_data, args, &context);
  if (called) return called;
  for (size_t i = 0; i < signal.count; ++i) {
    semaphore_t* s = signal.semaphores[i];
    status_t signalled = ((status_t(*)(semaphore_t*, uint64_t, const void*))s->resource.vtable[2])(
        s, signal.payload_values[i], NULL);
    if (signalled) return signalled;
  }
  return kOk;
}

typedef struct {
  uint32_t usage;
  uint16_t access;
  uint32_t type;
  uint64_t queue_affinity;
  uint64_t min_alignment;
} buffer_params_t; /* as iree_hal_buffer_params_t: 32 bytes, passed on the stack */

typedef struct {
  void* buffer;
  uint64_t offset, length;
} buffer_binding_t;

typedef struct {
  size_t count;
  const buffer_binding_t* bindings;
} binding_table_t; /* as iree_hal_buffer_binding_table_t: 16 bytes, in two registers */

SLOT status_t iree_hal_fake_device_import_file(device_t* d, uint64_t affinity, uint32_t access, void* handle,
                                               uint64_t flags, void** out_file) {
  (void)d; (void)affinity; (void)access; (void)flags;
  *out_file = malloc(16);
  memcpy(*out_file, &handle, sizeof handle);
  return kOk;
}
SLOT status_t iree_hal_fake_device_queue_alloca(device_t* d, uint64_t affinity, const semaphore_list_t wait,
                                                const semaphore_list_t signal, void* pool, buffer_params_t params,
                                                uint64_t size, uint64_t flags, void** out_buffer) {
  (void)d; (void)affinity; (void)wait; (void)pool; (void)params; (void)flags;
  *out_buffer = calloc(1, size);
  signal_list(&signal);
  return kOk;
}
SLOT status_t iree_hal_fake_device_queue_dealloca(device_t* d, uint64_t affinity, const semaphore_list_t wait,
                                                  const semaphore_list_t signal, void* buffer, uint64_t flags) {
  (void)d; (void)affinity; (void)wait; (void)flags;
  free(buffer);
  signal_list(&signal);
  return kOk;
}
SLOT status_t iree_hal_fake_device_queue_execute(device_t* d, uint64_t affinity, const semaphore_list_t wait,
                                                 const semaphore_list_t signal, command_buffer_t* cb,
                                                 binding_table_t table, uint64_t flags) {
  (void)affinity; (void)flags; (void)cb;
  for (size_t i = 0; i < wait.count; ++i)
    if (((semaphore_t*)wait.semaphores[i])->value < wait.payload_values[i]) return make_status(4);
  for (size_t i = 0; i < table.count; ++i) d->copied += table.bindings[i].length;
  signal_list(&signal);
  return kOk;
}
SLOT status_t iree_hal_fake_device_queue_flush(device_t* d, uint64_t affinity) {
  (void)d; (void)affinity;
  return kOk;
}

SLOT void iree_hal_fake_device_destroy(device_t* d) { free(d); }
SLOT status_t iree_hal_fake_device_queue_fill(device_t* d, uint64_t affinity, const semaphore_list_t wait,
                                              const semaphore_list_t signal, uint8_t* target, uint64_t offset,
                                              uint64_t length, const void* pattern, size_t pattern_length,
                                              uint64_t flags) {
  (void)affinity; (void)wait; (void)signal; (void)flags;
  for (uint64_t i = 0; i + pattern_length <= length; i += pattern_length)
    memcpy(target + offset + i, pattern, pattern_length);
  d->filled += length;
  return kOk;
}
SLOT status_t iree_hal_fake_device_queue_update(device_t* d, uint64_t affinity, const semaphore_list_t wait,
                                                const semaphore_list_t signal, const uint8_t* source,
                                                size_t source_offset, uint8_t* target, uint64_t target_offset,
                                                uint64_t length, uint64_t flags) {
  (void)affinity; (void)wait; (void)signal; (void)flags;
  memcpy(target + target_offset, source + source_offset, length);
  d->copied += length;
  return kOk;
}
SLOT status_t iree_hal_fake_device_queue_copy(device_t* d, uint64_t affinity, const semaphore_list_t wait,
                                              const semaphore_list_t signal, uint8_t* source, uint64_t source_offset,
                                              uint8_t* target, uint64_t target_offset, uint64_t length,
                                              uint64_t flags) {
  (void)affinity; (void)wait; (void)signal; (void)flags;
  memmove(target + target_offset, source + source_offset, length);
  d->copied += length;
  return kOk;
}
SLOT status_t iree_hal_fake_device_queue_read(device_t* d, uint64_t a, const semaphore_list_t w,
                                              const semaphore_list_t s, void* f, uint64_t fo, uint8_t* t,
                                              uint64_t to, uint64_t length, uint64_t flags) {
  (void)d; (void)a; (void)w; (void)s; (void)f; (void)fo; (void)t; (void)to; (void)length; (void)flags;
  return make_status(12);
}
SLOT status_t iree_hal_fake_device_queue_write(device_t* d, uint64_t a, const semaphore_list_t w,
                                               const semaphore_list_t s, uint8_t* b, uint64_t bo, void* f,
                                               uint64_t fo, uint64_t length, uint64_t flags) {
  (void)d; (void)a; (void)w; (void)s; (void)b; (void)bo; (void)f; (void)fo; (void)length; (void)flags;
  return make_status(12);
}

#define DEVICE_SLOT(name) (const void*)iree_hal_fake_device_##name,
static const void* const iree_hal_fake_device_vtable[36] = {HAL_DEVICE_SLOTS(DEVICE_SLOT)};

/* --- the odd one: fill_buffer and copy_buffer swapped ------------------------ */
SLOT void iree_hal_odd_command_buffer_destroy(command_buffer_t* cb) { free(cb); }
SLOT status_t iree_hal_odd_command_buffer_begin(command_buffer_t* cb) { cb->sum = 5; return kOk; }
SLOT status_t iree_hal_odd_command_buffer_end(command_buffer_t* cb) { (void)cb; return kOk; }
SLOT status_t iree_hal_odd_command_buffer_fill_buffer(command_buffer_t* cb, buffer_ref_t target, const void* pattern,
                                                      size_t pattern_length, uint64_t flags) {
  return iree_hal_fake_command_buffer_fill_buffer(cb, target, pattern, pattern_length, flags);
}
SLOT status_t iree_hal_odd_command_buffer_copy_buffer(command_buffer_t* cb, buffer_ref_t source, buffer_ref_t target,
                                                      uint64_t flags) {
  return iree_hal_fake_command_buffer_copy_buffer(cb, source, target, flags);
}

static const void* const iree_hal_odd_command_buffer_vtable[15] = {
    (const void*)iree_hal_odd_command_buffer_destroy,  (const void*)iree_hal_odd_command_buffer_begin,
    (const void*)iree_hal_odd_command_buffer_end,      NULL, NULL, NULL, NULL, NULL, NULL, NULL,
    (const void*)iree_hal_odd_command_buffer_copy_buffer, NULL,
    (const void*)iree_hal_odd_command_buffer_fill_buffer, NULL, NULL,
};

/* --- the program ----------------------------------------------------------- */
typedef status_t (*begin_fn)(command_buffer_t*);
typedef status_t (*fill_fn)(command_buffer_t*, buffer_ref_t, const void*, size_t, uint64_t);
typedef status_t (*copy_fn)(command_buffer_t*, buffer_ref_t, buffer_ref_t, uint64_t);
typedef status_t (*update_fn)(command_buffer_t*, const void*, size_t, buffer_ref_t, uint64_t);
typedef status_t (*dispatch_fn)(command_buffer_t*, void*, uint64_t, const dispatch_config_t, const void*, size_t,
                                const buffer_ref_list_t, uint64_t);
typedef void (*destroy_fn)(command_buffer_t*);

__attribute__((noinline)) static void* create_resource(size_t size, const void* const* vtable) {
  __asm__ volatile("" : "+r"(vtable)); /* the vtable is data, as in IREE: no call is resolved at compile time */
  resource_t* r = calloc(1, size);
  r->ref_count = 1;
  r->vtable = vtable;
  return r;
}

__attribute__((noinline)) static command_buffer_t* create(const void* const* vtable) {
  __asm__ volatile("" : "+r"(vtable)); /* the vtable is data, as in IREE: no call is resolved at compile time */
  command_buffer_t* cb = calloc(1, sizeof *cb);
  cb->resource.ref_count = 1;
  cb->resource.vtable = vtable;
  return cb;
}

#define CALL(cb, slot, type) ((type)((cb)->resource.vtable[slot]))

static uint32_t g_n = 1000;
static int g_host_calls = 0;
enum { kHostCalls = 3 };

/* The program's host call: a fill queued on the device the call came from
 * (64 bytes) and a signal of the program's own semaphore, both through the
 * HAL, from inside the driver's queue_host_call. */
typedef struct {
  semaphore_t* semaphore;
  uint64_t value;
  uint8_t* memory;
  uint32_t pattern;
  uint64_t calls;
} host_call_data_t;
static status_t program_host_call(void* user_data, const uint64_t args[4], host_call_context_t* context) {
  host_call_data_t* data = user_data;
  device_t* d = context->device;
  semaphore_list_t none = {0, NULL, NULL};
  status_t filled = ((status_t(*)(device_t*, uint64_t, const semaphore_list_t, const semaphore_list_t, uint8_t*,
                                  uint64_t, uint64_t, const void*, size_t, uint64_t))d->resource.vtable[22])(
      d, ~0ull, none, none, data->memory, 40000 + args[0] * 64, 64, &data->pattern, 4, 0);
  if (filled) return filled;
  status_t signalled = ((status_t(*)(semaphore_t*, uint64_t, const void*))data->semaphore->resource.vtable[2])(
      data->semaphore, ++data->value, NULL);
  if (signalled) return signalled;
  data->calls++;
  return kOk;
}
static int g_miscounted = 0;
static int g_typed_copies = 0;
static int g_failures = 0;

/* Runs dispatches as IREE's newest local-task does: each export's function
 * taken from the executable's dispatch_ptrs after it was prepared (when a
 * command buffer records the dispatch), then called per workgroup, the
 * dispatches' workgroups interleaved. Returns a checksum of what they added. */
static uint64_t run_direct(executable_t* executable, size_t count, const size_t* ordinals,
                           const uint32_t (*groups)[2]) {
  export_fn functions[2];
  uint64_t sums[2] = {0, 0};
  void* pointers[2][1] = {{&sums[0]}, {&sums[1]}};
  size_t lengths[1] = {8};
  dispatch_state_t states[2];
  memset(states, 0, sizeof states);
  for (size_t d = 0; d < count; ++d) {
    functions[d] = executable->dispatch_ptrs[ordinals[d]];
    states[d].workgroup_size_x = kExportGroupSize[ordinals[d]][0];
    states[d].workgroup_size_y = kExportGroupSize[ordinals[d]][1];
    states[d].workgroup_size_z = (uint16_t)kExportGroupSize[ordinals[d]][2];
    states[d].workgroup_count_x = groups[d][0];
    states[d].workgroup_count_y = groups[d][1];
    states[d].workgroup_count_z = 1;
    states[d].max_concurrency = 1;
    states[d].binding_count = 1;
    states[d].binding_ptrs = pointers[d];
    states[d].binding_lengths = lengths;
  }
  for (uint32_t tile = 0; tile < 16; ++tile)
    for (size_t d = 0; d < count; ++d) {
      if (tile >= groups[d][0] * groups[d][1]) continue;
      workgroup_state_t wg = {tile % groups[d][0], tile / groups[d][0], 0, 0, 0, NULL, 0};
      if (functions[d](executable->environment, &states[d], &wg) != 0) __atomic_add_fetch(&g_failures, 1, __ATOMIC_RELAXED);
    }
  return sums[0] * 1000 + sums[1];
}

typedef struct {
  uint64_t fills, copies, updates, dispatches, bytes, sum, odd_fills;
  uint64_t fill_ns, dispatch_ns; /* host time of the fill and dispatch loops */
  uint64_t device_bytes;          /* filled, updated and copied on the device's queue */
  uint64_t host_calls;            /* the program's host calls that ran */
} result_t;

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static result_t* g_thread0; /* whose loops print their op_counts */

static void* work(void* out) {
  result_t* r = out;
  op_counts counted;
  /* Keeps a HAL name in the read-only data; as long as the update reads. */
  static const char label[32] = "iree_hal_fake";
  uint8_t* memory = calloc(1, 1 << 16);
  command_buffer_t* cb = create(iree_hal_fake_command_buffer_vtable);
  CALL(cb, 1, begin_fn)(cb);
  uint32_t pattern = 0xabcd0123u;
  counted = op_counts_now();
  uint64_t start = now_ns();
  for (uint32_t i = 0; i < g_n; ++i) {
    buffer_ref_t target = {0, i & 7, memory, (i * 64) % 60000, 64 + (i % 4) * 4};
    CALL(cb, 10, fill_fn)(cb, target, &pattern, 4, i & 1);
  }
  r->fill_ns = now_ns() - start;
  if (r == g_thread0) op_counts_report("hal-fill", counted);
  buffer_ref_t bad = {0, 0, memory, 0, 16};
  status_t failed = CALL(cb, 10, fill_fn)(cb, bad, &pattern, 3, 0);
  if ((failed & 31) == kInvalidArgument) __atomic_add_fetch(&g_failures, 1, __ATOMIC_RELAXED);
  if (failed) free_status(failed);
  for (uint32_t i = 0; i < g_n / 2; ++i) {
    buffer_ref_t source = {0, 1, memory, 0, 128};
    buffer_ref_t target = {0, 2, memory, 4096 + (i % 16) * 128, 128};
    CALL(cb, 12, copy_fn)(cb, source, target, 0);
  }
  buffer_ref_t update_target = {0, 3, memory, 8192, 32};
  CALL(cb, 11, update_fn)(cb, label, 0, update_target, 0);
  /* An executable from the cache, and dispatches of its two exports. */
  executable_cache_t* cache = (executable_cache_t*)create_resource(sizeof(executable_cache_t),
                                                                    iree_hal_fake_executable_cache_vtable);
  static const uint8_t kExecutableBytes[] = "fixture executable bytes";
  executable_params_t params = {~0ull, 0, {"fixture-format", 14}, {kExecutableBytes, sizeof kExecutableBytes},
                                0, NULL};
  executable_t* executable = NULL;
  ((status_t(*)(executable_cache_t*, const executable_params_t*, executable_t**))cache->resource.vtable[3])(
      cache, &params, &executable);
  buffer_ref_t binding_refs[3] = {{0, 0, memory, 0, 256}, {0, 1, memory, 256, 256}, {0, 2, memory, 512, 512}};
  buffer_ref_list_t bindings = {3, binding_refs};
  uint32_t constants[2] = {7, 9};
  counted = op_counts_now();
  start = now_ns();
  for (uint32_t i = 0; i < g_n / 10 + 1; ++i) {
    /* workgroup_size 0: the export's own; the count differs per dispatch. */
    dispatch_config_t config = {{0, 0, 0}, {4 + (i & 1), 2, 1}, {0, 0, NULL, 0, 0}, 0};
    uint64_t function = i % 3 == 2 ? 1 : 0;
    CALL(cb, 14, dispatch_fn)(cb, executable, (uint32_t)function, config, constants, sizeof constants, bindings, 0);
  }
  r->dispatch_ns = now_ns() - start;
  if (r == g_thread0) op_counts_report("hal-dispatch", counted);
  {
    /* Two dispatches run as a CPU driver runs them, their workgroups
     * interleaved: the fill export over 4x2x1, the copy export over 3x1x1. */
    typedef status_t (*issue_fn)(executable_t*, size_t, const dispatch_state_t*, const workgroup_state_t*, uint32_t);
    uint64_t sums[2] = {0, 0};
    void* pointers[2][1] = {{&sums[0]}, {&sums[1]}};
    size_t lengths[1] = {8};
    dispatch_state_t states[2] = {{64, 1, 1, 0, 4, 2, 1, 1, 1, NULL, pointers[0], lengths},
                                  {8, 8, 1, 0, 3, 1, 1, 1, 1, NULL, pointers[1], lengths}};
    for (uint32_t tile = 0; tile < 8; ++tile)
      for (size_t d = 0; d < 2; ++d) {
        uint32_t tiles = states[d].workgroup_count_x * states[d].workgroup_count_y;
        if (tile >= tiles) continue;
        workgroup_state_t wg = {tile % states[d].workgroup_count_x, tile / states[d].workgroup_count_x, 0, 0, 0, NULL, 0};
        ((issue_fn)executable->resource.vtable[6])(executable, d, &states[d], &wg, 0);
      }
    cb->sum += sums[0] * 1000 + sums[1];
  }
  {
    /* Two more as local-task runs them: the copy export over 2x2x1, the fill
     * export over 5x1x1. */
    static const size_t ordinals[2] = {1, 0};
    static const uint32_t groups[2][2] = {{2, 2}, {5, 1}};
    cb->sum += run_direct(executable, 2, ordinals, groups) * 3;
  }
  if (g_miscounted) {
    /* An executable whose members disagree with its vtable: one dispatch of
     * the fill export over 3x1x1, run the same way. */
    static const uint8_t kMiscounted[] = "miscounted executable bytes";
    executable_params_t odd = {~0ull, 0, {"fixture-format", 14}, {kMiscounted, sizeof kMiscounted}, 0, NULL};
    executable_t* miscounted = NULL;
    ((status_t(*)(executable_cache_t*, const executable_params_t*, executable_t**))cache->resource.vtable[3])(
        cache, &odd, &miscounted);
    static const size_t ordinals[1] = {0};
    static const uint32_t groups[1][2] = {{3, 1}};
    cb->sum += run_direct(miscounted, 1, ordinals, groups) * 5;
    ((void (*)(executable_t*))miscounted->resource.vtable[0])(miscounted);
  }
  {
    /* A dispatch of no executable fails, as IREE's validation would have it. */
    dispatch_config_t config = {{0, 0, 0}, {1, 1, 1}, {0, 0, NULL, 0, 0}, 0};
    status_t bad_dispatch = CALL(cb, 14, dispatch_fn)(cb, NULL, 0, config, constants, sizeof constants, bindings, 0);
    if ((bad_dispatch & 31) == kInvalidArgument) __atomic_add_fetch(&g_failures, 1, __ATOMIC_RELAXED);
    if (bad_dispatch) free_status(bad_dispatch);
  }
  ((void (*)(executable_t*))executable->resource.vtable[0])(executable);
  ((void (*)(executable_cache_t*))cache->resource.vtable[0])(cache);
  /* A local driver's cache loads through a loader, asked for one worker. */
  loader_t* loader = (loader_t*)create_resource(sizeof(loader_t), iree_hal_fake_loader_vtable);
  executable_t* loaded = NULL;
  ((status_t(*)(loader_t*, const executable_params_t*, size_t, executable_t**))loader->resource.vtable[3])(
      loader, &params, 1, &loaded);
  ((void (*)(executable_t*))loaded->resource.vtable[0])(loaded);
  ((void (*)(loader_t*))loader->resource.vtable[0])(loader);
  CALL(cb, 2, begin_fn)(cb);

  /* Queue transfers on a device: fills of 256 bytes, updates and copies of 512. */
  device_t* device = (device_t*)create_resource(sizeof(device_t), iree_hal_fake_device_vtable);
  semaphore_list_t none = {0, NULL, NULL};
  typedef status_t (*queue_fill_fn)(device_t*, uint64_t, const semaphore_list_t, const semaphore_list_t, uint8_t*,
                                    uint64_t, uint64_t, const void*, size_t, uint64_t);
  typedef status_t (*queue_transfer_fn)(device_t*, uint64_t, const semaphore_list_t, const semaphore_list_t,
                                        const void*, uint64_t, void*, uint64_t, uint64_t, uint64_t);
  for (uint32_t i = 0; i < g_n / 20 + 1; ++i) {
    ((queue_fill_fn)device->resource.vtable[22])(device, ~0ull, none, none, memory, 16384, 256, &pattern, 4, 0);
    ((queue_transfer_fn)device->resource.vtable[23])(device, ~0ull, none, none, label, 0, memory, 20000, 14, 0);
    ((queue_transfer_fn)device->resource.vtable[24])(device, ~0ull, none, none, memory, 0, memory, 32768, 512, 0);
  }
  /* Queue work ordered by a timeline semaphore, per round: an allocation
   * (signals 3i+1), a submission of the command buffer binding it (waits for
   * 3i+1, signals 3i+2), a signal from the host (3i+3) and a wait for it, the
   * buffer given back, a flush. One file imported. */
  semaphore_t* semaphore = (semaphore_t*)create_resource(sizeof(semaphore_t), iree_hal_fake_semaphore_vtable);
  void* semaphores[1] = {semaphore};
  typedef status_t (*alloca_fn)(device_t*, uint64_t, const semaphore_list_t, const semaphore_list_t, void*,
                                buffer_params_t, uint64_t, uint64_t, void**);
  typedef status_t (*dealloca_fn)(device_t*, uint64_t, const semaphore_list_t, const semaphore_list_t, void*, uint64_t);
  typedef status_t (*execute_fn)(device_t*, uint64_t, const semaphore_list_t, const semaphore_list_t,
                                 command_buffer_t*, binding_table_t, uint64_t);
  for (uint32_t i = 0; i < g_n / 20 + 1; ++i) {
    uint64_t allocated = 3 * i + 1, executed = 3 * i + 2, signalled = 3 * i + 3;
    semaphore_list_t after_alloca = {1, semaphores, &allocated}, after_execute = {1, semaphores, &executed};
    buffer_params_t params = {0, 0, 0x30 /* DEVICE_LOCAL */, ~0ull, 0};
    void* buffer = NULL;
    ((alloca_fn)device->resource.vtable[20])(device, ~0ull, none, after_alloca, NULL, params, 4096, 0, &buffer);
    buffer_binding_t binding = {buffer, 0, 4096};
    binding_table_t table = {1, &binding};
    ((execute_fn)device->resource.vtable[29])(device, ~0ull, after_alloca, after_execute, cb, table, 0);
    /* The host waits for the submission through its fence, as IREE's tools
     * do after every submission (iree_hal_fence_wait: no vtable slot). */
    timeout_t forever = {0, INT64_MAX};
    fence_t fence = {1, after_execute};
    if (iree_hal_fence_wait(&fence, forever, 0)) __atomic_add_fetch(&g_failures, 1, __ATOMIC_RELAXED);
    ((status_t(*)(semaphore_t*, uint64_t, const void*))semaphore->resource.vtable[2])(semaphore, signalled, NULL);
    ((status_t(*)(semaphore_t*, uint64_t, timeout_t, uint64_t))semaphore->resource.vtable[4])(semaphore, signalled,
                                                                                             forever, 0);
    ((dealloca_fn)device->resource.vtable[21])(device, ~0ull, none, none, buffer, 0);
    ((status_t(*)(device_t*, uint64_t))device->resource.vtable[30])(device, ~0ull);
  }
  {
    /* And once on the device for the last value (iree_hal_device_wait_semaphores). */
    uint64_t last = 3 * (g_n / 20 + 1);
    semaphore_list_t all = {1, semaphores, &last};
    timeout_t forever = {0, INT64_MAX};
    if (iree_hal_device_wait_semaphores(device, kWaitModeAll, all, forever, 0))
      __atomic_add_fetch(&g_failures, 1, __ATOMIC_RELAXED);
  }
  if (g_host_calls) {
    /* Host calls on the queue, each after the last value: the program's
     * function queues a fill and signals a semaphore of its own; the driver
     * then signals the call's signal list. The host waits for each through a fence. */
    semaphore_t* marks = (semaphore_t*)create_resource(sizeof(semaphore_t), iree_hal_fake_semaphore_vtable);
    semaphore_t* done = (semaphore_t*)create_resource(sizeof(semaphore_t), iree_hal_fake_semaphore_vtable);
    host_call_data_t data = {marks, 0, memory, pattern, 0};
    uint64_t last = 3 * (g_n / 20 + 1);
    typedef status_t (*host_call_slot)(device_t*, uint64_t, const semaphore_list_t, const semaphore_list_t,
                                       host_call_t, const uint64_t*, uint64_t);
    for (uint64_t k = 1; k <= kHostCalls; ++k) {
      void* done_list[1] = {done};
      semaphore_list_t wait = {1, semaphores, &last}, signal = {1, done_list, &k};
      uint64_t args[4] = {k, 0, 0, 0};
      host_call_t call = {program_host_call, &data};
      if (((host_call_slot)device->resource.vtable[27])(device, ~0ull, wait, signal, call, args, 0))
        __atomic_add_fetch(&g_failures, 1, __ATOMIC_RELAXED);
      timeout_t forever = {0, INT64_MAX};
      fence_t fence = {1, signal};
      if (iree_hal_fence_wait(&fence, forever, 0)) __atomic_add_fetch(&g_failures, 1, __ATOMIC_RELAXED);
    }
    r->host_calls = data.calls;
    ((void (*)(semaphore_t*))marks->resource.vtable[0])(marks);
    ((void (*)(semaphore_t*))done->resource.vtable[0])(done);
  }
  if (g_typed_copies) {
    buffer_params_t host_params = {0, 0, 0x46 /* HOST_LOCAL | HOST_VISIBLE | DEVICE_VISIBLE */, ~0ull, 0};
    buffer_params_t device_params = {0, 0, 0x30 /* DEVICE_LOCAL */, ~0ull, 0};
    void* host = NULL;
    void* on_device = NULL;
    ((alloca_fn)device->resource.vtable[20])(device, ~0ull, none, none, NULL, host_params, 256, 0, &host);
    ((alloca_fn)device->resource.vtable[20])(device, ~0ull, none, none, NULL, device_params, 256, 0, &on_device);
    command_buffer_t* typed = create(iree_hal_fake_command_buffer_vtable);
    buffer_ref_t host_ref = {0, 0, host, 0, 256}, device_ref = {0, 0, on_device, 0, 256};
    CALL(typed, 12, copy_fn)(typed, host_ref, device_ref, 0);
    CALL(typed, 12, copy_fn)(typed, device_ref, host_ref, 0);
    CALL(typed, 0, destroy_fn)(typed);
    ((dealloca_fn)device->resource.vtable[21])(device, ~0ull, none, none, host, 0);
    ((dealloca_fn)device->resource.vtable[21])(device, ~0ull, none, none, on_device, 0);
  }
  void* file = NULL;
  ((status_t(*)(device_t*, uint64_t, uint32_t, void*, uint64_t, void**))device->resource.vtable[16])(
      device, ~0ull, 1, (void*)label, 0, &file);
  free(file);
  ((void (*)(semaphore_t*))semaphore->resource.vtable[0])(semaphore);
  r->device_bytes = device->filled + device->copied;
  ((void (*)(device_t*))device->resource.vtable[0])(device);
  r->fills = cb->fills;
  r->copies = cb->copies;
  r->updates = cb->updates;
  r->dispatches = cb->dispatches;
  r->bytes = cb->bytes;
  r->sum = cb->sum;
  CALL(cb, 0, destroy_fn)(cb);

  command_buffer_t* odd = create(iree_hal_odd_command_buffer_vtable);
  CALL(odd, 1, begin_fn)(odd);
  for (uint32_t i = 0; i < g_n; ++i) {
    buffer_ref_t target = {0, 0, memory, 0, 32};
    CALL(odd, 12, fill_fn)(odd, target, &pattern, 4, 0); /* slot 12 holds fill_buffer here */
  }
  CALL(odd, 2, begin_fn)(odd);
  r->odd_fills = odd->fills;
  CALL(odd, 0, destroy_fn)(odd);
  free(memory);
  return NULL;
}

#ifdef HAL_FIXTURE_LIBRARY
/* Built as a library too (libhal_fixture.so): hal_fixture_dlopen loads it with
 * dlopen and runs this, so its vtables come into the process after start. */
__attribute__((visibility("default"))) int hal_fixture_main(int argc, char** argv) {
#else
int main(int argc, char** argv) {
#endif
  if (argc > 1) g_n = (uint32_t)strtoul(argv[1], NULL, 10);
  int threads = argc > 2 ? atoi(argv[2]) : 1;
  g_miscounted = argc > 3 && !strcmp(argv[3], "miscounted");
  g_typed_copies = argc > 3 && !strcmp(argv[3], "typed-copies");
  g_host_calls = argc > 3 && !strcmp(argv[3], "host-calls");
  if (g_n == 0 || threads < 1 || threads > 64 || (argc > 3 && !g_miscounted && !g_typed_copies && !g_host_calls)) {
    fprintf(stderr, "usage: %s [N>0] [THREADS 1..64] [miscounted|typed-copies|host-calls]\n", argv[0]);
    return 64;
  }
  pthread_t ids[64];
  result_t results[64];
  memset(results, 0, sizeof results);
  g_thread0 = &results[0];
  for (int t = 0; t < threads; ++t) pthread_create(&ids[t], NULL, work, &results[t]);
  for (int t = 0; t < threads; ++t) pthread_join(ids[t], NULL);
  for (int t = 0; t < threads; ++t)
    printf("thread %d fills %llu copies %llu updates %llu dispatches %llu bytes %llu sum %016llx odd_fills %llu "
           "queue_bytes %llu\n", t,
           (unsigned long long)results[t].fills, (unsigned long long)results[t].copies,
           (unsigned long long)results[t].updates, (unsigned long long)results[t].dispatches,
           (unsigned long long)results[t].bytes, (unsigned long long)results[t].sum,
           (unsigned long long)results[t].odd_fills, (unsigned long long)results[t].device_bytes);
  if (g_host_calls)
    for (int t = 0; t < threads; ++t) printf("thread %d host_calls %llu\n", t, (unsigned long long)results[t].host_calls);
  printf("failures %d\n", g_failures);
  /* Timing goes to stderr: stdout stays the same with and without a tool. */
  fprintf(stderr, "ns_per_fill %.3f\nns_per_dispatch %.3f\n", (double)results[0].fill_ns / g_n,
          (double)results[0].dispatch_ns / (g_n / 10 + 1));
  return 0;
}
