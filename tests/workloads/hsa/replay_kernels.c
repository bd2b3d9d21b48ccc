/* Kernels of hsa_two_queues and hsa_ring_writer, built as their own code
 * object (hsa_replay_kernels) for the simulated HSA runtime. Their kernarg
 * segments are the structs of hsa_replay_args.h, each argument declared with
 * its kind so the code object's metadata says which bytes are addresses (what
 * replay translates), which are values and which are hidden. Every kernel
 * bound-checks against its element count, so a grid may round the work up. */
#include "gtap_sim_hsa_kernel.h"
#include "hsa_replay_args.h"

GTAP_SIM_HSA_KERNEL(scale_offset, hsa_scale_offset_args) {
  const hsa_scale_offset_args* args = GTAP_SIM_HSA_ARGS(hsa_scale_offset_args);
  /* As a HIP kernel's global id: the dispatch's id plus the global offset
   * its runtime passes in the hidden arguments. */
  uint64_t i = item->global_id[0] + args->hidden_global_offset_x;
  if (i < args->params.n) args->out[i] = args->params.scale * args->in[i] + (float)args->params.offset;
}
GTAP_SIM_HSA_ARGUMENTS(scale_offset, hsa_scale_offset_args, GTAP_SIM_HSA_ARG_BUFFER(in), GTAP_SIM_HSA_ARG_BUFFER(out),
                       GTAP_SIM_HSA_ARG_VALUE(params),
                       GTAP_SIM_HSA_ARG_HIDDEN(hidden_global_offset_x, "hidden_global_offset_x"));

GTAP_SIM_HSA_KERNEL(combine, hsa_combine_args) {
  const hsa_combine_args* args = GTAP_SIM_HSA_ARGS(hsa_combine_args);
  uint64_t i = item->global_id[0];
  if (i < args->n) args->b[i] = args->a[i] * args->x[i] + args->bias;
}
GTAP_SIM_HSA_ARGUMENTS(combine, hsa_combine_args, GTAP_SIM_HSA_ARG_BUFFER(a), GTAP_SIM_HSA_ARG_BUFFER(x),
                       GTAP_SIM_HSA_ARG_BUFFER(b), GTAP_SIM_HSA_ARG_VALUE(bias), GTAP_SIM_HSA_ARG_VALUE(n));

GTAP_SIM_HSA_KERNEL(blend, hsa_blend_args) {
  const hsa_blend_args* args = GTAP_SIM_HSA_ARGS(hsa_blend_args);
  uint64_t i = item->global_id[0];
  if (i < args->n) args->c[i] = args->b[i] + args->weight * args->host[i];
}
GTAP_SIM_HSA_ARGUMENTS(blend, hsa_blend_args, GTAP_SIM_HSA_ARG_BUFFER(b), GTAP_SIM_HSA_ARG_BUFFER(host),
                       GTAP_SIM_HSA_ARG_BUFFER(c), GTAP_SIM_HSA_ARG_VALUE(weight), GTAP_SIM_HSA_ARG_VALUE(n));

GTAP_SIM_HSA_KERNEL(ring_fill, hsa_ring_fill_args) {
  const hsa_ring_fill_args* args = GTAP_SIM_HSA_ARGS(hsa_ring_fill_args);
  uint64_t k = item->global_id[0];
  if (k < args->n) args->out[k] = args->value + 3u * (uint32_t)k;
}
GTAP_SIM_HSA_ARGUMENTS(ring_fill, hsa_ring_fill_args, GTAP_SIM_HSA_ARG_BUFFER(out), GTAP_SIM_HSA_ARG_VALUE(value),
                       GTAP_SIM_HSA_ARG_VALUE(n));
