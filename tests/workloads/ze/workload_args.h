/* Kernel arguments that are structs, shared by the kernels (C) and the
 * workloads (C++) so both sides agree on the layout. */
#ifndef GTAP_WORKLOAD_ARGS_H
#define GTAP_WORKLOAD_ARGS_H

#include <stdint.h>

/* axpy_struct's one argument: pointers first, so each sits in an aligned
 * 8-byte word of the value, then the scalars; 32 bytes, no padding. */
typedef struct workload_axpy_args {
  const float* a;
  const float* b;
  float* out;
  uint32_t n;
  float scale;
} workload_axpy_args;

#endif /* GTAP_WORKLOAD_ARGS_H */
