/* Kernels of the HSA workloads, built as a code object for the simulated HSA
 * runtime (gtap_add_sim_hsa_code_object). Their kernarg segments are the
 * structs of hsa_workload_args.h. Kernels that run per work-item bound-check
 * against their element count, so a grid may round the work up. */
#include "gtap_sim_hsa_kernel.h"
#include "hsa_workload_args.h"

#include <time.h>

GTAP_SIM_HSA_KERNEL(vector_add, hsa_vector_add_args) {
  const hsa_vector_add_args* args = GTAP_SIM_HSA_ARGS(hsa_vector_add_args);
  uint64_t i = item->global_id[0];
  if (i < args->n) args->c[i] = args->a[i] + args->b[i];
}
GTAP_SIM_HSA_ARGUMENTS(vector_add, hsa_vector_add_args, GTAP_SIM_HSA_ARG_BUFFER(a), GTAP_SIM_HSA_ARG_BUFFER(b),
                       GTAP_SIM_HSA_ARG_BUFFER(c), GTAP_SIM_HSA_ARG_VALUE(n));

GTAP_SIM_HSA_KERNEL(scale, hsa_scale_args) {
  const hsa_scale_args* args = GTAP_SIM_HSA_ARGS(hsa_scale_args);
  uint64_t i = item->global_id[0];
  if (i < args->n) args->y[i] = args->factor * args->x[i];
}
GTAP_SIM_HSA_ARGUMENTS(scale, hsa_scale_args, GTAP_SIM_HSA_ARG_BUFFER(x), GTAP_SIM_HSA_ARG_BUFFER(y),
                       GTAP_SIM_HSA_ARG_VALUE(factor), GTAP_SIM_HSA_ARG_VALUE(n));

GTAP_SIM_HSA_KERNEL(add, hsa_add_args) {
  const hsa_add_args* args = GTAP_SIM_HSA_ARGS(hsa_add_args);
  uint64_t i = item->global_id[0];
  if (i < args->n) args->c[i] = args->a[i] + args->b[i];
}
GTAP_SIM_HSA_ARGUMENTS(add, hsa_add_args, GTAP_SIM_HSA_ARG_BUFFER(a), GTAP_SIM_HSA_ARG_BUFFER(b),
                       GTAP_SIM_HSA_ARG_BUFFER(c), GTAP_SIM_HSA_ARG_VALUE(n));

/* The group's inputs go to group memory first, as a GPU kernel would stage
 * them, then are summed in index order (the order the workloads check). */
GTAP_SIM_HSA_GROUP_KERNEL(reduce_partial, hsa_reduce_partial_args, 0) {
  const hsa_reduce_partial_args* args = GTAP_SIM_HSA_ARGS(hsa_reduce_partial_args);
  float* staged = (float*)item->group_segment;
  uint64_t first = item->global_id[0];
  uint32_t count = 0;
  if (staged == 0 || item->group_segment_size < item->group_size[0] * sizeof(float)) {
    /* Not enough dynamic group memory: a result the workload rejects. */
    args->partial[item->group_id[0]] = -1.0f;
    return;
  }
  for (uint32_t i = 0; i < item->group_size[0] && first + i < args->n; ++i) staged[count++] = args->in[first + i];
  float sum = 0.0f;
  for (uint32_t i = 0; i < count; ++i) sum += staged[i];
  args->partial[item->group_id[0]] = sum;
}
GTAP_SIM_HSA_ARGUMENTS(reduce_partial, hsa_reduce_partial_args, GTAP_SIM_HSA_ARG_BUFFER(in),
                       GTAP_SIM_HSA_ARG_BUFFER(partial), GTAP_SIM_HSA_ARG_VALUE(n));

static uint64_t monotonic_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

GTAP_SIM_HSA_GROUP_KERNEL(spin, hsa_spin_args, 0) {
  const hsa_spin_args* args = GTAP_SIM_HSA_ARGS(hsa_spin_args);
  uint64_t start = monotonic_ns();
  while (monotonic_ns() - start < args->ns) {
  }
  args->marks[item->group_id[0]] += item->group_id[0] + 1;
}
GTAP_SIM_HSA_ARGUMENTS(spin, hsa_spin_args, GTAP_SIM_HSA_ARG_VALUE(ns), GTAP_SIM_HSA_ARG_BUFFER(marks));

GTAP_SIM_HSA_KERNEL(tiny, hsa_tiny_args) {
  const hsa_tiny_args* args = GTAP_SIM_HSA_ARGS(hsa_tiny_args);
  __atomic_fetch_add(&args->counter[0], 1, __ATOMIC_RELAXED);
}
GTAP_SIM_HSA_ARGUMENTS(tiny, hsa_tiny_args, GTAP_SIM_HSA_ARG_BUFFER(counter));
