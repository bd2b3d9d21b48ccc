// A program on the real IREE runtime that dispatches work, built only when
// GTAP_TEST_IREE_BUILD names a runtime-only IREE build (tests/workloads/hal/
// CMakeLists.txt). IREE's samples/hal/hello moves bytes but runs no
// executable, and every IREE tool that runs one needs a compiled .vmfb; this
// program prepares a system-library executable (iree_elementwise_mul.c:
// dst = lhs * rhs over 4 floats) and dispatches it.
//
//   iree_dispatch --device=local-sync|local-task --executable=PATH
//                 [--dispatches=N] [--workgroups=W] [--replay_output=PATH]
//
// Each round records one command buffer (a fill, a barrier, the dispatch),
// executes it on the queue and waits on a semaphore; the program then reads
// the result and prints it with a checksum. --replay_output has IREE's own
// replay recorder write what the device did to a .ireereplay file, for
// iree-run-replay. Prints "ns_per_dispatch" (a round, end to end) on stderr.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "iree/async/frontier_tracker.h"
#include "iree/async/util/proactor_pool.h"
#include "iree/base/api.h"
#include "iree/base/threading/numa.h"
#include "iree/hal/api.h"
#include "iree/hal/drivers/init.h"
#include "iree/hal/replay/recorder.h"
#include "iree/io/file_handle.h"

#define ELEMENTS 4

typedef struct {
  const char* device;
  const char* executable;
  const char* replay_output;
  int dispatches;
  uint32_t workgroups;
} options_t;

typedef struct {
  iree_hal_device_group_t* base_group;
  iree_hal_device_group_t* replay_group;
  iree_hal_replay_recorder_t* recorder;
  iree_hal_device_t* device;  // borrowed from the group in use
  iree_hal_executable_cache_t* cache;
  iree_hal_executable_t* executable;
  iree_hal_buffer_t* buffers[3];
  iree_hal_semaphore_t* semaphore;
} state_t;

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static iree_status_t read_file(const char* path, iree_allocator_t allocator, uint8_t** out_data,
                               iree_host_size_t* out_size) {
  FILE* f = fopen(path, "rb");
  if (!f) return iree_make_status(IREE_STATUS_NOT_FOUND, "cannot open executable '%s'", path);
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  iree_status_t status = iree_allocator_malloc(allocator, (iree_host_size_t)size, (void**)out_data);
  if (iree_status_is_ok(status) && fread(*out_data, 1, (size_t)size, f) != (size_t)size)
    status = iree_make_status(IREE_STATUS_DATA_LOSS, "short read of '%s'", path);
  fclose(f);
  *out_size = (iree_host_size_t)size;
  return status;
}

static iree_status_t create_device(const options_t* o, iree_allocator_t allocator, state_t* s) {
  IREE_RETURN_IF_ERROR(iree_hal_register_all_available_drivers(iree_hal_driver_registry_default()));
  iree_async_proactor_pool_t* pool = NULL;
  IREE_RETURN_IF_ERROR(iree_async_proactor_pool_create(iree_numa_node_count(), NULL,
                                                       iree_async_proactor_pool_options_default(), allocator,
                                                       &pool));
  iree_hal_device_create_params_t params = iree_hal_device_create_params_default();
  params.proactor_pool = pool;
  iree_hal_device_t* device = NULL;
  iree_status_t status = iree_hal_create_device(iree_hal_driver_registry_default(),
                                                iree_make_cstring_view(o->device), &params, allocator, &device);
  iree_async_proactor_pool_release(pool);
  iree_async_frontier_tracker_t* tracker = NULL;
  if (iree_status_is_ok(status))
    status = iree_async_frontier_tracker_create(iree_async_frontier_tracker_options_default(), allocator, &tracker);
  if (iree_status_is_ok(status))
    status = iree_hal_device_group_create_from_device(device, tracker, allocator, &s->base_group);
  iree_async_frontier_tracker_release(tracker);
  iree_hal_device_release(device);  // the group holds it
  IREE_RETURN_IF_ERROR(status);
  iree_hal_device_group_t* group = s->base_group;
  if (o->replay_output) {
    iree_io_file_handle_t* file = NULL;
    IREE_RETURN_IF_ERROR(iree_io_file_handle_create(
        IREE_IO_FILE_MODE_WRITE | IREE_IO_FILE_MODE_SEQUENTIAL_SCAN | IREE_IO_FILE_MODE_SHARE_READ,
        iree_make_cstring_view(o->replay_output), 0, allocator, &file));
    iree_hal_replay_recorder_options_t ro = iree_hal_replay_recorder_options_default();
    status = iree_hal_replay_recorder_create(file, &ro, allocator, &s->recorder);
    iree_io_file_handle_release(file);
    IREE_RETURN_IF_ERROR(status);
    IREE_RETURN_IF_ERROR(iree_hal_replay_wrap_device_group(s->recorder, group, allocator, &s->replay_group));
    group = s->replay_group;
  }
  s->device = iree_hal_device_group_device_at(group, 0);
  return iree_ok_status();
}

static iree_status_t prepare(const options_t* o, iree_allocator_t allocator, state_t* s) {
  IREE_RETURN_IF_ERROR(iree_hal_executable_cache_create(s->device, IREE_SV("gtap"), &s->cache));
  uint8_t* data = NULL;
  iree_host_size_t size = 0;
  iree_status_t status = read_file(o->executable, allocator, &data, &size);
  if (iree_status_is_ok(status)) {
    iree_hal_executable_params_t params;
    iree_hal_executable_params_initialize(&params);
    params.caching_mode = IREE_HAL_EXECUTABLE_CACHING_MODE_ALLOW_OPTIMIZATION;
    params.executable_format = IREE_SV("system-elf-x86_64");
    params.executable_data = iree_make_const_byte_span(data, size);
    status = iree_hal_executable_cache_prepare_executable(s->cache, &params, &s->executable);
  }
  iree_allocator_free(allocator, data);
  IREE_RETURN_IF_ERROR(status);
  iree_hal_buffer_params_t params = {
      .type = IREE_HAL_MEMORY_TYPE_HOST_LOCAL | IREE_HAL_MEMORY_TYPE_DEVICE_VISIBLE,
      .usage = IREE_HAL_BUFFER_USAGE_DISPATCH_STORAGE | IREE_HAL_BUFFER_USAGE_TRANSFER |
               IREE_HAL_BUFFER_USAGE_MAPPING,
  };
  for (int i = 0; i < 3; ++i) {
    IREE_RETURN_IF_ERROR(iree_hal_allocator_allocate_buffer(iree_hal_device_allocator(s->device), params,
                                                            ELEMENTS * sizeof(float), &s->buffers[i]));
  }
  const float lhs[ELEMENTS] = {1, 2, 3, 4};
  IREE_RETURN_IF_ERROR(iree_hal_buffer_map_write(s->buffers[0], 0, lhs, sizeof(lhs)));
  return iree_hal_semaphore_create(s->device, IREE_HAL_QUEUE_AFFINITY_ANY, 0, IREE_HAL_SEMAPHORE_FLAG_NONE,
                                   &s->semaphore);
}

// One round: rhs filled with `round + 1`, dst = lhs * rhs, then waited for.
static iree_status_t run_round(const options_t* o, state_t* s, int round) {
  iree_hal_command_buffer_t* cb = NULL;
  IREE_RETURN_IF_ERROR(iree_hal_command_buffer_create(
      s->device, IREE_HAL_COMMAND_BUFFER_MODE_ONE_SHOT,
      IREE_HAL_COMMAND_CATEGORY_DISPATCH | IREE_HAL_COMMAND_CATEGORY_TRANSFER, IREE_HAL_QUEUE_AFFINITY_ANY, 0,
      &cb));
  iree_hal_executable_function_t function;
  iree_status_t status =
      iree_hal_executable_lookup_function_by_name(s->executable, IREE_SV("elementwise_mul"), &function);
  if (iree_status_is_ok(status)) status = iree_hal_command_buffer_begin(cb);
  float factor = (float)(round + 1);
  if (iree_status_is_ok(status))
    status = iree_hal_command_buffer_fill_buffer(cb, iree_hal_make_buffer_ref(s->buffers[1], 0, sizeof(float) * ELEMENTS),
                                                 &factor, sizeof(factor), IREE_HAL_FILL_FLAG_NONE);
  iree_hal_memory_barrier_t barrier = {
      .source_scope = IREE_HAL_ACCESS_SCOPE_TRANSFER_WRITE,
      .target_scope = IREE_HAL_ACCESS_SCOPE_DISPATCH_READ,
  };
  if (iree_status_is_ok(status))
    status = iree_hal_command_buffer_execution_barrier(cb, IREE_HAL_EXECUTION_STAGE_TRANSFER,
                                                       IREE_HAL_EXECUTION_STAGE_DISPATCH,
                                                       IREE_HAL_EXECUTION_BARRIER_FLAG_NONE, 1, &barrier, 0, NULL);
  iree_hal_buffer_ref_t refs[3];
  for (int i = 0; i < 3; ++i) refs[i] = iree_hal_make_buffer_ref(s->buffers[i], 0, sizeof(float) * ELEMENTS);
  iree_hal_buffer_ref_list_t bindings = {.count = 3, .values = refs};
  iree_hal_dispatch_config_t config = iree_hal_make_static_dispatch_config(o->workgroups, 1, 1);
  if (iree_status_is_ok(status))
    status = iree_hal_command_buffer_dispatch(cb, s->executable, function, config, iree_const_byte_span_empty(),
                                              bindings, IREE_HAL_DISPATCH_FLAG_NONE);
  if (iree_status_is_ok(status)) status = iree_hal_command_buffer_end(cb);
  uint64_t value = (uint64_t)round + 1;
  iree_hal_semaphore_list_t signal = {.count = 1, .semaphores = &s->semaphore, .payload_values = &value};
  if (iree_status_is_ok(status))
    status = iree_hal_device_queue_execute(s->device, IREE_HAL_QUEUE_AFFINITY_ANY, iree_hal_semaphore_list_empty(),
                                           signal, cb, iree_hal_buffer_binding_table_empty(),
                                           IREE_HAL_EXECUTE_FLAG_NONE);
  if (iree_status_is_ok(status))
    status = iree_hal_semaphore_wait(s->semaphore, value, iree_infinite_timeout(), IREE_ASYNC_WAIT_FLAG_NONE);
  iree_hal_command_buffer_release(cb);
  return status;
}

static iree_status_t run(const options_t* o, state_t* s) {
  iree_allocator_t allocator = iree_allocator_system();
  IREE_RETURN_IF_ERROR(create_device(o, allocator, s));
  IREE_RETURN_IF_ERROR(prepare(o, allocator, s));
  int64_t start = now_ns();
  for (int round = 0; round < o->dispatches; ++round) {
    IREE_RETURN_IF_ERROR(run_round(o, s, round));
  }
  int64_t elapsed = now_ns() - start;
  float dst[ELEMENTS] = {0};
  IREE_RETURN_IF_ERROR(iree_hal_buffer_map_read(s->buffers[2], 0, dst, sizeof(dst)));
  double checksum = 0;
  printf("result:");
  for (int i = 0; i < ELEMENTS; ++i) {
    printf(" %g", dst[i]);
    checksum += dst[i] * (i + 1);
  }
  printf("\nchecksum %.1f\n", checksum);
  fprintf(stderr, "ns_per_dispatch %.1f\n", o->dispatches ? (double)elapsed / o->dispatches : 0.0);
  return iree_ok_status();
}

static void release(state_t* s) {
  iree_hal_semaphore_release(s->semaphore);
  for (int i = 0; i < 3; ++i) iree_hal_buffer_release(s->buffers[i]);
  iree_hal_executable_release(s->executable);
  iree_hal_executable_cache_release(s->cache);
  iree_hal_device_group_release(s->replay_group);
  iree_hal_device_group_release(s->base_group);
}

static int flag(const char* arg, const char* name, const char** value) {
  size_t n = strlen(name);
  if (strncmp(arg, name, n) != 0 || arg[n] != '=') return 0;
  *value = arg + n + 1;
  return 1;
}

int main(int argc, char** argv) {
  options_t o = {.device = "local-sync", .dispatches = 1, .workgroups = 1};
  for (int i = 1; i < argc; ++i) {
    const char* v = NULL;
    if (flag(argv[i], "--device", &v)) o.device = v;
    else if (flag(argv[i], "--executable", &v)) o.executable = v;
    else if (flag(argv[i], "--replay_output", &v)) o.replay_output = v;
    else if (flag(argv[i], "--dispatches", &v)) o.dispatches = atoi(v);
    else if (flag(argv[i], "--workgroups", &v)) o.workgroups = (uint32_t)atoi(v);
    else {
      fprintf(stderr, "iree_dispatch: unknown argument '%s'\n", argv[i]);
      return 2;
    }
  }
  if (!o.executable || o.dispatches < 0 || o.workgroups == 0) {
    fprintf(stderr, "iree_dispatch: needs --executable=PATH, --dispatches >= 0, --workgroups >= 1\n");
    return 2;
  }
  state_t s = {0};
  iree_status_t status = run(&o, &s);
  if (s.recorder) {
    release(&s);
    status = iree_status_join(status, iree_hal_replay_recorder_close(s.recorder));
    iree_hal_replay_recorder_release(s.recorder);
  } else {
    release(&s);
  }
  if (iree_status_is_ok(status)) return 0;
  iree_status_fprint(stderr, status);
  fprintf(stderr, "\n");
  iree_status_free(status);
  return 1;
}
