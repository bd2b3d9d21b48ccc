// State shared by the profiling entry points and the parts they time.
#pragma once

namespace sim_hsa {

// hsa_amd_profiling_async_copy_enable: copies submitted while it is on record
// their start and end in their completion signal.
bool asyncCopyProfilingEnabled();

}  // namespace sim_hsa
