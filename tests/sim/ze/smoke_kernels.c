/* Kernels for sim_ze_smoke_test, one per feature of the module format. */
#include "gtap_sim_kernel.h"

#include <time.h>

GTAP_SIM_KERNEL(vector_add, sizeof(const float*), sizeof(const float*), sizeof(float*), sizeof(uint32_t)) {
  const float* a = GTAP_SIM_ARG(const float*, 0);
  const float* b = GTAP_SIM_ARG(const float*, 1);
  float* c = GTAP_SIM_ARG(float*, 2);
  uint64_t i = item->global_id[0];
  if (i < GTAP_SIM_ARG(uint32_t, 3)) c[i] = a[i] + b[i];
}

/* Passed by value, as kernels often take small parameter blocks. */
typedef struct saxpy_params {
  float a;
  float bias;
  uint32_t n;
} saxpy_params;

GTAP_SIM_KERNEL(saxpy_struct, sizeof(saxpy_params), sizeof(const float*), sizeof(float*)) {
  saxpy_params p = GTAP_SIM_ARG(saxpy_params, 0);
  const float* x = GTAP_SIM_ARG(const float*, 1);
  float* y = GTAP_SIM_ARG(float*, 2);
  uint64_t i = item->global_id[0];
  if (i < p.n) y[i] = p.a * x[i] + y[i] + p.bias;
}

/* One call per work-group: stage the group's inputs in local memory, then
 * write their sum. */
GTAP_SIM_GROUP_KERNEL(group_sum, sizeof(const uint32_t*), sizeof(uint32_t*), GTAP_SIM_ARG_LOCAL) {
  const uint32_t* in = GTAP_SIM_ARG(const uint32_t*, 0);
  uint32_t* out = GTAP_SIM_ARG(uint32_t*, 1);
  uint32_t* scratch = GTAP_SIM_LOCAL_MEM(uint32_t, 2);
  uint32_t n = item->group_size[0];
  uint32_t sum = 0;
  for (uint32_t i = 0; i < n; ++i) scratch[i] = in[item->global_id[0] + i];
  for (uint32_t i = 0; i < n; ++i) sum += scratch[i];
  out[item->group_id[0]] = sum;
}

GTAP_SIM_KERNEL_REQD(write_global_id, 64, 1, 1, sizeof(uint64_t*)) {
  uint64_t* out = GTAP_SIM_ARG(uint64_t*, 0);
  out[item->global_id[0] - item->global_offset[0]] = item->global_id[0];
}

/* Busy for the given time, so timestamp durations can be checked. */
GTAP_SIM_GROUP_KERNEL(spin_ns, sizeof(uint64_t)) {
  uint64_t ns = GTAP_SIM_ARG(uint64_t, 0);
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  uint64_t start = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
  uint64_t now = start;
  while (now - start < ns) {
    clock_gettime(CLOCK_MONOTONIC, &ts);
    now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
  }
}

/* For zeModuleGetGlobalPointer. */
__attribute__((visibility("default"))) int32_t smoke_global[4] = {1, 2, 3, 4};
