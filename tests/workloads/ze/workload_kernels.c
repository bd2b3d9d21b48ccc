/* Kernels of the Level Zero workloads, built as a module for the simulated
 * device. Every kernel bounds-checks against its element count, so the group
 * count may round the work up.
 *
 * The same source also builds the modules `gtap replay --substitute` is tested
 * with (see CMakeLists.txt), each differing in one known way:
 *   GTAP_WORKLOAD_KERNELS_SUBTRACT  vector_add and add compute a - b, so every
 *                                   result that depends on them changes
 *   GTAP_WORKLOAD_KERNELS_BAD_ARGS  vector_add takes three arguments, not four */
#include "gtap_sim_kernel.h"
#include "workload_args.h"

#include <time.h>

#ifdef GTAP_WORKLOAD_KERNELS_SUBTRACT
#define WORKLOAD_COMBINE(x, y) ((x) - (y))
#else
#define WORKLOAD_COMBINE(x, y) ((x) + (y))
#endif

#ifdef GTAP_WORKLOAD_KERNELS_BAD_ARGS
/* No element count: the grid must match the data exactly. */
GTAP_SIM_KERNEL(vector_add, sizeof(const float*), sizeof(const float*), sizeof(float*)) {
  const float* a = GTAP_SIM_ARG(const float*, 0);
  const float* b = GTAP_SIM_ARG(const float*, 1);
  float* c = GTAP_SIM_ARG(float*, 2);
  uint64_t i = item->global_id[0];
  c[i] = WORKLOAD_COMBINE(a[i], b[i]);
}
#else
GTAP_SIM_KERNEL(vector_add, sizeof(const float*), sizeof(const float*), sizeof(float*), sizeof(uint32_t)) {
  const float* a = GTAP_SIM_ARG(const float*, 0);
  const float* b = GTAP_SIM_ARG(const float*, 1);
  float* c = GTAP_SIM_ARG(float*, 2);
  uint64_t i = item->global_id[0];
  if (i < GTAP_SIM_ARG(uint32_t, 3)) c[i] = WORKLOAD_COMBINE(a[i], b[i]);
}
#endif

/* y = factor * x */
GTAP_SIM_KERNEL(scale, sizeof(const float*), sizeof(float*), sizeof(float), sizeof(uint32_t)) {
  const float* x = GTAP_SIM_ARG(const float*, 0);
  float* y = GTAP_SIM_ARG(float*, 1);
  uint64_t i = item->global_id[0];
  if (i < GTAP_SIM_ARG(uint32_t, 3)) y[i] = GTAP_SIM_ARG(float, 2) * x[i];
}

/* c = a + b; the same arithmetic as vector_add under the name a pipeline uses. */
GTAP_SIM_KERNEL(add, sizeof(const float*), sizeof(const float*), sizeof(float*), sizeof(uint32_t)) {
  const float* a = GTAP_SIM_ARG(const float*, 0);
  const float* b = GTAP_SIM_ARG(const float*, 1);
  float* c = GTAP_SIM_ARG(float*, 2);
  uint64_t i = item->global_id[0];
  if (i < GTAP_SIM_ARG(uint32_t, 3)) c[i] = WORKLOAD_COMBINE(a[i], b[i]);
}

/* partial[group] = sum of the group's elements, added in index order so the
 * host can reproduce the float result exactly. Stages through local memory
 * (argument 3, group_size floats) as a device reduction would. */
GTAP_SIM_GROUP_KERNEL(reduce_partial, sizeof(const float*), sizeof(float*), sizeof(uint32_t), GTAP_SIM_ARG_LOCAL) {
  const float* in = GTAP_SIM_ARG(const float*, 0);
  float* partial = GTAP_SIM_ARG(float*, 1);
  uint32_t n = GTAP_SIM_ARG(uint32_t, 2);
  float* staged = GTAP_SIM_LOCAL_MEM(float, 3);
  uint64_t first = item->global_id[0];
  uint32_t count = 0;
  for (uint32_t i = 0; i < item->group_size[0] && first + i < n; ++i) staged[count++] = in[first + i];
  float sum = 0.0f;
  for (uint32_t i = 0; i < count; ++i) sum += staged[i];
  partial[item->group_id[0]] = sum;
}

/* buf[i] += value */
GTAP_SIM_KERNEL(add_u32, sizeof(uint32_t*), sizeof(uint32_t), sizeof(uint32_t)) {
  uint32_t* buf = GTAP_SIM_ARG(uint32_t*, 0);
  uint64_t i = item->global_id[0];
  if (i < GTAP_SIM_ARG(uint32_t, 2)) buf[i] += GTAP_SIM_ARG(uint32_t, 1);
}

static uint64_t monotonic_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Busy for `ns` per work-group, so its device duration has a known lower
 * bound; marks[group] = group + 1 shows that every group ran. */
GTAP_SIM_GROUP_KERNEL(spin, sizeof(uint64_t), sizeof(uint32_t*)) {
  uint64_t ns = GTAP_SIM_ARG(uint64_t, 0);
  uint32_t* marks = GTAP_SIM_ARG(uint32_t*, 1);
  uint64_t start = monotonic_ns();
  while (monotonic_ns() - start < ns) {
  }
  marks[item->group_id[0]] = item->group_id[0] + 1;
}

/* out[i] = scale * a[i] + b[i], with the buffers and sizes in one by-value
 * struct, as programs that pack their parameters pass them. */
GTAP_SIM_KERNEL(axpy_struct, sizeof(workload_axpy_args)) {
  const workload_axpy_args* args = &GTAP_SIM_ARG(workload_axpy_args, 0);
  uint64_t i = item->global_id[0];
  if (i < args->n) args->out[i] = args->scale * args->a[i] + args->b[i];
}

/* Time spent on one source line: each group steps a recurrence the compiler
 * cannot fold `n` times, the whole loop on the line marked GTAP_HOT_LINE
 * (instruction-sampling tests find it by the marker); writing the result is
 * the only other work. */
GTAP_SIM_GROUP_KERNEL(hot_loop, sizeof(uint64_t*), sizeof(uint64_t)) {
  uint64_t* out = GTAP_SIM_ARG(uint64_t*, 0);
  const uint64_t n = GTAP_SIM_ARG(uint64_t, 1);
  uint64_t x = item->group_id[0] + 1, acc = 0;
  for (uint64_t i = 0; i < n; ++i) { x = x * 6364136223846793005ull + 1442695040888963407ull; acc ^= x >> 17; } /* GTAP_HOT_LINE */
  out[item->group_id[0]] = acc;
}
