/* Kernels for sim_hsa_smoke_test, one per feature of the code-object format. */
#include "gtap_sim_hsa_kernel.h"

#include <time.h>

typedef struct vector_add_args {
  const float* a;
  const float* b;
  float* c;
  uint32_t n;
} vector_add_args;

GTAP_SIM_HSA_KERNEL(vector_add, vector_add_args) {
  const vector_add_args* args = GTAP_SIM_HSA_ARGS(vector_add_args);
  uint64_t i = item->global_id[0];
  if (i < args->n) args->c[i] = args->a[i] + args->b[i];
}
GTAP_SIM_HSA_ARGUMENTS(vector_add, vector_add_args, GTAP_SIM_HSA_ARG_BUFFER(a), GTAP_SIM_HSA_ARG_BUFFER(b),
                       GTAP_SIM_HSA_ARG_BUFFER(c), GTAP_SIM_HSA_ARG_VALUE(n));

/* Appends `value` to a log, so tests see the order kernels ran in. */
typedef struct append_args {
  uint32_t* log;    /* log[0] counts the entries that follow */
  uint32_t value;
} append_args;

GTAP_SIM_HSA_GROUP_KERNEL(append, append_args, 0) {
  const append_args* args = GTAP_SIM_HSA_ARGS(append_args);
  uint32_t n = __atomic_add_fetch(&args->log[0], 1, __ATOMIC_SEQ_CST);
  args->log[n] = args->value;
}
GTAP_SIM_HSA_ARGUMENTS(append, append_args, GTAP_SIM_HSA_ARG_BUFFER(log), GTAP_SIM_HSA_ARG_VALUE(value));

/* Busy for `ns`, recording the device clock when it starts and ends. */
typedef struct spin_args {
  uint64_t ns;
  uint64_t* ticks; /* [0] start, [1] end */
} spin_args;

static uint64_t monotonic_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

GTAP_SIM_HSA_GROUP_KERNEL(spin, spin_args, 0) {
  const spin_args* args = GTAP_SIM_HSA_ARGS(spin_args);
  args->ticks[0] = item->device_ticks();
  uint64_t start = monotonic_ns();
  while (monotonic_ns() - start < args->ns) {
  }
  args->ticks[1] = item->device_ticks();
}
GTAP_SIM_HSA_ARGUMENTS(spin, spin_args, GTAP_SIM_HSA_ARG_VALUE(ns), GTAP_SIM_HSA_ARG_BUFFER(ticks));

/* Each work-group sums its inputs through 1 KiB of static group memory;
 * the last group may be partial. */
typedef struct group_sum_args {
  const uint32_t* in;
  uint32_t* out;
} group_sum_args;

GTAP_SIM_HSA_GROUP_KERNEL(group_sum, group_sum_args, 1024) {
  const group_sum_args* args = GTAP_SIM_HSA_ARGS(group_sum_args);
  uint32_t* staged = (uint32_t*)item->group_segment;
  uint32_t n = item->group_size[0];
  uint32_t sum = 0;
  for (uint32_t i = 0; i < n; ++i) staged[i] = args->in[item->global_id[0] + i];
  for (uint32_t i = 0; i < n; ++i) sum += staged[i];
  args->out[item->group_id[0]] = sum;
}
GTAP_SIM_HSA_ARGUMENTS(group_sum, group_sum_args, GTAP_SIM_HSA_ARG_BUFFER(in), GTAP_SIM_HSA_ARG_BUFFER(out));

/* Writes every work-item's linear global id at its position in a 3-D grid,
 * plus the size of its work-group, through 8 bytes of private memory. */
typedef struct geometry_args {
  uint32_t* ids;
  uint32_t* group_items;
} geometry_args;

GTAP_SIM_HSA_KERNEL_FULL(geometry, GTAP_SIM_HSA_PER_WORK_ITEM, sizeof(geometry_args), 8, 0, 8) {
  const geometry_args* args = GTAP_SIM_HSA_ARGS(geometry_args);
  uint32_t* scratch = (uint32_t*)item->private_segment;
  scratch[0] += 1; /* zeroed for every work-item: always 1 */
  uint64_t x = item->global_id[0], y = item->global_id[1], z = item->global_id[2];
  uint64_t at = (z * item->grid_size[1] + y) * item->grid_size[0] + x;
  args->ids[at] = (uint32_t)at + scratch[0] - 1;
  args->group_items[at] = item->group_size[0] * item->group_size[1] * item->group_size[2];
}
GTAP_SIM_HSA_ARGUMENTS(geometry, geometry_args, GTAP_SIM_HSA_ARG_BUFFER(ids), GTAP_SIM_HSA_ARG_BUFFER(group_items));

/* A global variable: an executable variable symbol. */
__attribute__((visibility("default"))) uint32_t smoke_counter[4] = {7, 8, 9, 10};
__attribute__((visibility("default"))) const uint64_t smoke_constant = 42;
