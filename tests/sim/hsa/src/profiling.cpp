// Dispatch and copy timing (hsa_amd_profiling_*). Signals hold raw times, as
// ROCr's do: device ticks for work the GPU did, system-domain ticks for
// copies between CPU memory; queries return the system domain.
#include "profiling.h"

#include "agent.h"
#include "api.h"
#include "clock.h"
#include "signal.h"

#include <atomic>

namespace sim_hsa {

namespace {

std::atomic<bool> g_copyProfiling{false};

}  // namespace

bool asyncCopyProfilingEnabled() { return g_copyProfiling.load(std::memory_order_acquire); }

hsa_status_t hsa_amd_profiling_async_copy_enable(bool enable) {
  SIM_OPEN();
  g_copyProfiling.store(enable, std::memory_order_release);
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_amd_profiling_get_dispatch_time(hsa_agent_t agent, hsa_signal_t signal,
                                                 hsa_amd_profiling_dispatch_time_t* time) {
  SIM_OPEN();
  SIM_NOT_NULL(time);
  const Agent* a = toAgent(agent);
  SIM_CHECK(a != nullptr, HSA_STATUS_ERROR_INVALID_AGENT);
  Signal* s = toSignal(signal);
  SIM_CHECK(s != nullptr, HSA_STATUS_ERROR_INVALID_SIGNAL);
  SIM_CHECK(isGpu(a), HSA_STATUS_ERROR_INVALID_AGENT);
  // The end first, as ROCr does, so clock reads between the two conversions
  // cannot stretch the duration.
  uint64_t start = s->abi.start_ts;
  uint64_t end = s->abi.end_ts;
  time->end = end != 0 ? clock::deviceTicksToSystem(end) : 0;
  time->start = start != 0 ? clock::deviceTicksToSystem(start) : 0;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_amd_profiling_get_async_copy_time(hsa_signal_t signal, hsa_amd_profiling_async_copy_time_t* time) {
  SIM_OPEN();
  SIM_NOT_NULL(time);
  Signal* s = toSignal(signal);
  SIM_CHECK(s != nullptr, HSA_STATUS_ERROR_INVALID_SIGNAL);
  const Agent* timer = s->copy_agent.load(std::memory_order_acquire);
  SIM_CHECK(timer != nullptr, HSA_STATUS_ERROR);  // no profiled copy completed with this signal
  uint64_t start = s->abi.start_ts;
  uint64_t end = s->abi.end_ts;
  if (isGpu(timer)) {
    time->end = clock::deviceTicksToSystem(end);
    time->start = clock::deviceTicksToSystem(start);
  } else {
    time->start = start;
    time->end = end;
  }
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_amd_profiling_convert_tick_to_system_domain(hsa_agent_t agent, uint64_t agent_tick,
                                                             uint64_t* system_tick) {
  SIM_OPEN();
  const Agent* a = toAgent(agent);
  SIM_CHECK(a != nullptr, HSA_STATUS_ERROR_INVALID_AGENT);
  SIM_NOT_NULL(system_tick);
  // The CPU's ticks are system ticks already.
  *system_tick = isGpu(a) ? clock::deviceTicksToSystem(agent_tick) : agent_tick;
  return HSA_STATUS_SUCCESS;
}

}  // namespace sim_hsa
