// Sysman (zes): engine groups and the frequency domain. An engine group's
// active time is the host time during which at least one of its engines was
// running a command (waits for events before a command do not count), so
// activity follows what the device really did. The frequency is the
// simulated clock's, constant.
#include "api.h"
#include "clock.h"
#include "sysman.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace sim {

namespace {

// The engine groups, in the order of zesDeviceEnumEngineGroups.
constexpr zes_engine_group_t kEngineGroups[] = {ZES_ENGINE_GROUP_ALL, ZES_ENGINE_GROUP_COMPUTE_ALL,
                                                ZES_ENGINE_GROUP_COPY_ALL};
constexpr uint32_t kEngineGroupCount = sizeof kEngineGroups / sizeof kEngineGroups[0];
constexpr double kFrequencyMHz = double(clock::kTicksPerSecond) / 1e6;

// Time at least one engine of a group was busy: the busy engines are
// counted, and the time since the first of them started is added when the
// last one stops.
struct Activity {
  std::mutex mutex;
  uint32_t busy = 0;
  uint64_t since = 0;    // host ns the group became busy
  uint64_t totalNs = 0;  // busy time before that

  void begin(uint64_t now) {
    std::lock_guard lock(mutex);
    if (busy++ == 0) since = now;
  }
  void end(uint64_t now) {
    std::lock_guard lock(mutex);
    if (--busy == 0) totalNs += now - since;
  }
  uint64_t read(uint64_t now) {
    std::lock_guard lock(mutex);
    return totalNs + (busy > 0 ? now - since : 0);
  }
};

Activity g_activity[kEngineGroupCount];  // by index in kEngineGroups

struct EngineGroup : Object {
  static constexpr Kind kKind = Kind::EngineGroup;
  explicit EngineGroup(uint32_t i) : Object(kKind), index(i) {}
  const uint32_t index;  // into kEngineGroups
};

struct FrequencyDomain : Object {
  static constexpr Kind kKind = Kind::FrequencyDomain;
  FrequencyDomain() : Object(kKind) {}
};

}  // namespace

activity::Busy::Busy(bool copyEngine) : copy_(copyEngine) {
  const uint64_t now = clock::hostNs();
  g_activity[0].begin(now);
  g_activity[copy_ ? 2 : 1].begin(now);
}

activity::Busy::~Busy() {
  const uint64_t now = clock::hostNs();
  g_activity[copy_ ? 2 : 1].end(now);
  g_activity[0].end(now);
}

namespace {
// Read once, at the first zeInit (which makes the device): as with Intel's
// driver, device handles are Sysman handles only when ZES_ENABLE_SYSMAN=1
// was set by then.
std::atomic<bool> g_sysmanEnabled{false};
}  // namespace

void createSysmanObjects(Device& device) {
  const char* enable = std::getenv("ZES_ENABLE_SYSMAN");
  g_sysmanEnabled.store(enable && std::strcmp(enable, "1") == 0, std::memory_order_release);
  for (uint32_t i = 0; i < kEngineGroupCount; ++i) device.engineGroups.push_back(makeObject<EngineGroup>(i).get());
  device.frequencyDomain = makeObject<FrequencyDomain>().get();
}

ze_result_t zesDeviceEnumEngineGroups(zes_device_handle_t hDevice, uint32_t* pCount, zes_engine_handle_t* phEngine) {
  SIM_LOOKUP(device, Device, hDevice);
  SIM_CHECK(g_sysmanEnabled.load(std::memory_order_acquire), ZE_RESULT_ERROR_UNINITIALIZED);
  SIM_NOT_NULL(pCount);
  countQuery(kEngineGroupCount, pCount, phEngine != nullptr,
             [&](uint32_t i) { phEngine[i] = reinterpret_cast<zes_engine_handle_t>(device->engineGroups[i]); });
  return ZE_RESULT_SUCCESS;
}

ze_result_t zesEngineGetProperties(zes_engine_handle_t hEngine, zes_engine_properties_t* pProperties) {
  SIM_LOOKUP(group, EngineGroup, hEngine);
  SIM_NOT_NULL(pProperties);
  pProperties->type = kEngineGroups[group->index];
  pProperties->onSubdevice = false;
  pProperties->subdeviceId = 0;
  return ZE_RESULT_SUCCESS;
}

ze_result_t zesEngineGetActivity(zes_engine_handle_t hEngine, zes_engine_stats_t* pStats) {
  SIM_LOOKUP(group, EngineGroup, hEngine);
  SIM_NOT_NULL(pStats);
  const uint64_t now = clock::hostNs();
  pStats->activeTime = g_activity[group->index].read(now) / 1000;
  pStats->timestamp = now / 1000;
  return ZE_RESULT_SUCCESS;
}

ze_result_t zesDeviceEnumFrequencyDomains(zes_device_handle_t hDevice, uint32_t* pCount, zes_freq_handle_t* phFrequency) {
  SIM_LOOKUP(device, Device, hDevice);
  SIM_CHECK(g_sysmanEnabled.load(std::memory_order_acquire), ZE_RESULT_ERROR_UNINITIALIZED);
  SIM_NOT_NULL(pCount);
  countQuery(1, pCount, phFrequency != nullptr,
             [&](uint32_t) { phFrequency[0] = reinterpret_cast<zes_freq_handle_t>(device->frequencyDomain); });
  return ZE_RESULT_SUCCESS;
}

ze_result_t zesFrequencyGetProperties(zes_freq_handle_t hFrequency, zes_freq_properties_t* pProperties) {
  SIM_LOOKUP(domain, FrequencyDomain, hFrequency);
  SIM_NOT_NULL(pProperties);
  pProperties->type = ZES_FREQ_DOMAIN_GPU;
  pProperties->onSubdevice = false;
  pProperties->subdeviceId = 0;
  pProperties->canControl = false;
  pProperties->isThrottleEventSupported = false;
  pProperties->min = kFrequencyMHz;
  pProperties->max = kFrequencyMHz;
  return ZE_RESULT_SUCCESS;
}

ze_result_t zesFrequencyGetAvailableClocks(zes_freq_handle_t hFrequency, uint32_t* pCount, double* phFrequency) {
  SIM_LOOKUP(domain, FrequencyDomain, hFrequency);
  SIM_NOT_NULL(pCount);
  countQuery(1, pCount, phFrequency != nullptr, [&](uint32_t) { phFrequency[0] = kFrequencyMHz; });
  return ZE_RESULT_SUCCESS;
}

ze_result_t zesFrequencyGetRange(zes_freq_handle_t hFrequency, zes_freq_range_t* pLimits) {
  SIM_LOOKUP(domain, FrequencyDomain, hFrequency);
  SIM_NOT_NULL(pLimits);
  pLimits->min = kFrequencyMHz;
  pLimits->max = kFrequencyMHz;
  return ZE_RESULT_SUCCESS;
}

ze_result_t zesFrequencyGetState(zes_freq_handle_t hFrequency, zes_freq_state_t* pState) {
  SIM_LOOKUP(domain, FrequencyDomain, hFrequency);
  SIM_NOT_NULL(pState);
  pState->currentVoltage = -1.0;  // not known, as the specification spells it
  pState->request = kFrequencyMHz;
  pState->tdp = kFrequencyMHz;
  pState->efficient = kFrequencyMHz;
  pState->actual = kFrequencyMHz;
  pState->throttleReasons = 0;
  return ZE_RESULT_SUCCESS;
}

}  // namespace sim
