/* Kernels for sim_ze_sampling_test: a hot loop for instruction sampling. */
#include "gtap_sim_kernel.h"

/* `rounds` steps of a linear congruential generator per work-group: all the
 * kernel's time is spent in this one loop, in this one function. */
GTAP_SIM_GROUP_KERNEL(hot_loop, sizeof(uint64_t), sizeof(uint64_t*)) {
  uint64_t rounds = GTAP_SIM_ARG(uint64_t, 0);
  uint64_t x = item->group_id[0] + 1;
  for (uint64_t i = 0; i < rounds; ++i) x = x * 6364136223846793005ull + 1442695040888963407ull;
  GTAP_SIM_ARG(uint64_t*, 1)[item->group_id[0]] = x;
}

/* A global the test finds with zeModuleGetGlobalPointer, to learn where the
 * module was loaded. */
__attribute__((visibility("default"))) uint64_t sampling_anchor = 1;
