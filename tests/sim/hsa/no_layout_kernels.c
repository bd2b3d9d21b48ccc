/* A code object whose second kernel has no argument layout, built without
 * gtap_add_sim_hsa_code_object: test sim_hsa_metadata_refuses_missing_layout
 * checks that the metadata generator refuses it, naming the kernel. */
#include "gtap_sim_hsa_kernel.h"

typedef struct fill_args {
  uint32_t* out;
  uint32_t value;
} fill_args;

GTAP_SIM_HSA_KERNEL(fill, fill_args) {
  const fill_args* args = GTAP_SIM_HSA_ARGS(fill_args);
  args->out[item->global_id[0]] = args->value;
}
GTAP_SIM_HSA_ARGUMENTS(fill, fill_args, GTAP_SIM_HSA_ARG_BUFFER(out), GTAP_SIM_HSA_ARG_VALUE(value));

GTAP_SIM_HSA_KERNEL(unlisted, fill_args) {
  const fill_args* args = GTAP_SIM_HSA_ARGS(fill_args);
  args->out[0] = args->value;
}
