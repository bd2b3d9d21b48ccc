/* Kernarg segments of the kernels in replay_kernels.c (the code object
 * hsa_replay_kernels), shared by the kernels (C) and the workloads that use
 * them (hsa_two_queues, hsa_ring_writer, C++), laid out as a compiler lays out
 * the arguments of such kernels: pointers, then values (a struct passed by
 * value is one argument), then, where a kernel has them, the hidden arguments
 * the program fills itself, as HIP's runtime does. */
#ifndef GTAP_HSA_REPLAY_ARGS_H
#define GTAP_HSA_REPLAY_ARGS_H

#include <stdint.h>

/* What scale_offset takes by value: one 12-byte argument. */
typedef struct hsa_scale_offset_params {
  float scale;
  int32_t offset;
  uint32_t n;
} hsa_scale_offset_params;

/* scale_offset: out[i] = params.scale * in[i] + params.offset for i < params.n,
 * where i is the work-item's global id plus hidden_global_offset_x (the
 * program writes 0 there). 40 bytes: in 0, out 8, params 16, 4 bytes of
 * padding, hidden_global_offset_x 32. */
typedef struct hsa_scale_offset_args {
  const float* in;
  float* out;
  hsa_scale_offset_params params;
  uint64_t hidden_global_offset_x;
} hsa_scale_offset_args;

/* combine: b[i] = a[i] * x[i] + bias for i < n. 32 bytes. */
typedef struct hsa_combine_args {
  const float* a;
  const float* x;
  float* b;
  float bias;
  uint32_t n;
} hsa_combine_args;

/* blend: c[i] = b[i] + weight * host[i] for i < n. 32 bytes. */
typedef struct hsa_blend_args {
  const float* b;
  const float* host;
  float* c;
  float weight;
  uint32_t n;
} hsa_blend_args;

/* ring_fill: out[k] = value + 3 k for k < n. 16 bytes. */
typedef struct hsa_ring_fill_args {
  uint32_t* out;
  uint32_t value;
  uint32_t n;
} hsa_ring_fill_args;

#endif /* GTAP_HSA_REPLAY_ARGS_H */
