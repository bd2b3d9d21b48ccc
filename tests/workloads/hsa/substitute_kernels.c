/* Replacement code objects for replay's --substitute tests, built twice from
 * this file. GTAP_SUBSTITUTE_SAME_ABI: vector_add with the workloads' own
 * argument layout (hsa_workload_args.h) computing c = a - b, so a replay that
 * uses it passes the ABI check and its read-backs differ. Otherwise:
 * vector_add taking one more argument (a scale factor), whose kernarg segment
 * differs from the captured one, so a replay refuses it. */
#include "gtap_sim_hsa_kernel.h"
#include "hsa_workload_args.h"

#ifdef GTAP_SUBSTITUTE_SAME_ABI
GTAP_SIM_HSA_KERNEL(vector_add, hsa_vector_add_args) {
  const hsa_vector_add_args* args = GTAP_SIM_HSA_ARGS(hsa_vector_add_args);
  uint64_t i = item->global_id[0];
  if (i < args->n) args->c[i] = args->a[i] - args->b[i];
}
GTAP_SIM_HSA_ARGUMENTS(vector_add, hsa_vector_add_args, GTAP_SIM_HSA_ARG_BUFFER(a), GTAP_SIM_HSA_ARG_BUFFER(b),
                       GTAP_SIM_HSA_ARG_BUFFER(c), GTAP_SIM_HSA_ARG_VALUE(n));
#else
typedef struct scaled_add_args {
  const float* a;
  const float* b;
  float* c;
  float scale;
  uint32_t n;
} scaled_add_args;

GTAP_SIM_HSA_KERNEL(vector_add, scaled_add_args) {
  const scaled_add_args* args = GTAP_SIM_HSA_ARGS(scaled_add_args);
  uint64_t i = item->global_id[0];
  if (i < args->n) args->c[i] = args->scale * (args->a[i] + args->b[i]);
}
GTAP_SIM_HSA_ARGUMENTS(vector_add, scaled_add_args, GTAP_SIM_HSA_ARG_BUFFER(a), GTAP_SIM_HSA_ARG_BUFFER(b),
                       GTAP_SIM_HSA_ARG_BUFFER(c), GTAP_SIM_HSA_ARG_VALUE(scale), GTAP_SIM_HSA_ARG_VALUE(n));
#endif
