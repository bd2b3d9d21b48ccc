/* A second module for sim_ze_smoke_test: its kernels must stay its own when
 * another module is already loaded. */
#include "gtap_sim_kernel.h"

GTAP_SIM_KERNEL(write_seven, sizeof(uint32_t*)) {
  GTAP_SIM_ARG(uint32_t*, 0)[item->global_id[0]] = 7;
}
