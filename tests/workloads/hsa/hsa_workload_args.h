/* Kernarg segments of the HSA workload kernels (workload_kernels.c), shared by
 * the kernels (C) and the workloads (C++) so both sides agree on the layout.
 * Each struct is a kernel's whole kernarg segment: its size and alignment are
 * what hsa_executable_symbol_get_info reports for "<kernel>.kd" (the
 * alignment raised to 16, the AQL minimum). Pointers first, then scalars. */
#ifndef GTAP_HSA_WORKLOAD_ARGS_H
#define GTAP_HSA_WORKLOAD_ARGS_H

#include <stdint.h>

/* vector_add: c[i] = a[i] + b[i] for i < n; c may be a (in place). 32 bytes. */
typedef struct hsa_vector_add_args {
  const float* a;
  const float* b;
  float* c;
  uint32_t n;
} hsa_vector_add_args;

/* scale: y[i] = factor * x[i] for i < n. 24 bytes. */
typedef struct hsa_scale_args {
  const float* x;
  float* y;
  float factor;
  uint32_t n;
} hsa_scale_args;

/* add: c[i] = a[i] + b[i] for i < n, the arithmetic of vector_add under the
 * name a pipeline uses. 32 bytes. */
typedef struct hsa_add_args {
  const float* a;
  const float* b;
  float* c;
  uint32_t n;
} hsa_add_args;

/* reduce_partial, once per work-group: partial[g] = the sum, in index order,
 * of in[i] over the group's items with i < n, staged through the group
 * segment. The kernel has no static group memory: the dispatch packet's
 * group_segment_size must give it workgroup_size_x floats (dynamic group
 * memory). 24 bytes. */
typedef struct hsa_reduce_partial_args {
  const float* in;
  float* partial;
  uint32_t n;
} hsa_reduce_partial_args;

/* spin, once per work-group: busy for ns nanoseconds of host time, then
 * marks[group] += group + 1. 16 bytes. */
typedef struct hsa_spin_args {
  uint64_t ns;
  uint32_t* marks;
} hsa_spin_args;

/* tiny, meant for one work-item: atomically counter[0] += 1. 8 bytes. */
typedef struct hsa_tiny_args {
  uint64_t* counter;
} hsa_tiny_args;

#endif /* GTAP_HSA_WORKLOAD_ARGS_H */
