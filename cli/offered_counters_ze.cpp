// The counters Level Zero devices offer: metric groups and their metrics
// through the tools API (offered_counters.h).
#include <dlfcn.h>
#include <level_zero/ze_api.h>
#include <level_zero/zet_api.h>

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "offered_counters.h"

namespace gtap::cli {

namespace {

#define GTAP_COUNTERS_ZE(X)                                                                                  \
  X(zeInit) X(zeDriverGet) X(zeDeviceGet) X(zeDeviceGetProperties) X(zetMetricGroupGet)                      \
  X(zetMetricGroupGetProperties) X(zetMetricGet) X(zetMetricGetProperties)

struct ZeCounterFunctions {
#define GTAP_COUNTERS_DECLARE(name) decltype(&::name) name = nullptr;
  GTAP_COUNTERS_ZE(GTAP_COUNTERS_DECLARE)
#undef GTAP_COUNTERS_DECLARE
};

// Opens the loader (never linked: --sim must point it at the simulated driver
// first). Empty `error` on success.
ZeCounterFunctions loadLoader(std::string& error) {
  ZeCounterFunctions f;
  void* loader = dlopen("libze_loader.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!loader) {
    error = std::string("cannot open the Level Zero loader libze_loader.so.1: ") + dlerror();
    return f;
  }
#define GTAP_COUNTERS_LOOKUP(name)                                        \
  f.name = reinterpret_cast<decltype(f.name)>(dlsym(loader, #name));      \
  if (!f.name && error.empty()) error = "the Level Zero loader has no " #name;
  GTAP_COUNTERS_ZE(GTAP_COUNTERS_LOOKUP)
#undef GTAP_COUNTERS_LOOKUP
  return f;
}

const char* samplingName(zet_metric_group_sampling_type_flags_t flags) {
  bool event = flags & ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_EVENT_BASED;
  bool time = flags & ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_TIME_BASED;
  return event && time ? "per-dispatch,time" : event ? "per-dispatch" : time ? "time" : "-";
}

const char* metricTypeName(zet_metric_type_t t) {
  switch (t) {
    case ZET_METRIC_TYPE_DURATION: return "duration";
    case ZET_METRIC_TYPE_EVENT: return "event";
    case ZET_METRIC_TYPE_EVENT_WITH_RANGE: return "event-range";
    case ZET_METRIC_TYPE_THROUGHPUT: return "throughput";
    case ZET_METRIC_TYPE_TIMESTAMP: return "timestamp";
    case ZET_METRIC_TYPE_FLAG: return "flag";
    case ZET_METRIC_TYPE_RATIO: return "ratio";
    case ZET_METRIC_TYPE_RAW: return "raw";
    default: return "other";
  }
}

}  // namespace

std::vector<OfferedDevice> offeredLevelZeroCounters(std::string& note) {
  std::vector<OfferedDevice> out;
  // Intel's driver offers metric groups only with this set, as the tools
  // that read them set it.
  setenv("ZET_ENABLE_METRICS", "1", 0);
  std::string error;
  ZeCounterFunctions ze = loadLoader(error);
  if (!error.empty()) {
    note = error;
    return out;
  }
  ze_result_t r = ze.zeInit(0);
  uint32_t drivers = 0;
  if (r == ZE_RESULT_SUCCESS) r = ze.zeDriverGet(&drivers, nullptr);
  if (r != ZE_RESULT_SUCCESS || drivers == 0) {
    std::ostringstream s;
    s << "no Level Zero driver (zeInit/zeDriverGet returned 0x" << std::hex << static_cast<uint32_t>(r) << ")";
    note = s.str();
    return out;
  }
  std::vector<ze_driver_handle_t> driverList(drivers);
  ze.zeDriverGet(&drivers, driverList.data());
  uint32_t index = 0;
  for (uint32_t d = 0; d < drivers; ++d) {
    uint32_t devices = 0;
    if (ze.zeDeviceGet(driverList[d], &devices, nullptr) != ZE_RESULT_SUCCESS) continue;
    std::vector<ze_device_handle_t> deviceList(devices);
    ze.zeDeviceGet(driverList[d], &devices, deviceList.data());
    for (uint32_t i = 0; i < devices; ++i) {
      OfferedDevice& dev = out.emplace_back();
      dev.runtime = "level-zero";
      dev.index = index++;
      ze_device_properties_t dp{};
      dp.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
      dev.label = std::to_string(d) + "." + std::to_string(i);
      if (ze.zeDeviceGetProperties(deviceList[i], &dp) == ZE_RESULT_SUCCESS) dev.label += " " + std::string(dp.name);
      uint32_t groups = 0;
      if (ze.zetMetricGroupGet(deviceList[i], &groups, nullptr) != ZE_RESULT_SUCCESS) continue;
      std::vector<zet_metric_group_handle_t> groupList(groups);
      ze.zetMetricGroupGet(deviceList[i], &groups, groupList.data());
      for (uint32_t g = 0; g < groups; ++g) {
        zet_metric_group_properties_t gp{};
        gp.stype = ZET_STRUCTURE_TYPE_METRIC_GROUP_PROPERTIES;
        if (ze.zetMetricGroupGetProperties(groupList[g], &gp) != ZE_RESULT_SUCCESS) continue;
        uint32_t count = 0;
        if (ze.zetMetricGet(groupList[g], &count, nullptr) != ZE_RESULT_SUCCESS) continue;
        std::vector<zet_metric_handle_t> metricList(count);
        ze.zetMetricGet(groupList[g], &count, metricList.data());
        for (uint32_t m = 0; m < count; ++m) {
          zet_metric_properties_t mp{};
          mp.stype = ZET_STRUCTURE_TYPE_METRIC_PROPERTIES;
          if (ze.zetMetricGetProperties(metricList[m], &mp) != ZE_RESULT_SUCCESS) continue;
          OfferedDevice::Counter c;
          c.offer.group = gp.name;
          c.offer.name = mp.name;
          // One group per pass: gtap activates one group at a time.
          c.offer.exclusive = true;
          c.sampling = samplingName(gp.samplingType);
          c.domain = std::to_string(gp.domain);
          c.type = metricTypeName(mp.metricType);
          c.units = mp.resultUnits;
          c.description = mp.description;
          c.perDispatch = gp.samplingType & ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_EVENT_BASED;
          dev.counters.push_back(std::move(c));
        }
      }
    }
  }
  return out;
}

}  // namespace gtap::cli
