// gtap counters --list: the counters and metric groups the devices offer,
// through the runtime's own interface (Level Zero's tools API: metric groups
// and their metrics), so a user can pick names for --counters. Metrics of one
// group are collected in one pass; groups of different domains can be active
// together, groups of one domain only one at a time.
#include <dlfcn.h>
#include <level_zero/ze_api.h>
#include <level_zero/zet_api.h>

#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "commands.h"
#include "exit_status.h"
#include "gtap/readers/table.h"
#include "install_paths.h"

namespace gtap::cli {

namespace {

struct CountersOptions {
  bool list = false;
  bool sim = false;
  std::string format = "text";
};

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

int listCounters(const CountersOptions& o) {
  readers::OutputFormat format;
  if (!readers::parseOutputFormat(o.format, format)) {
    std::cerr << "gtap counters: --format must be text, csv or jsonl\n";
    return kExitUsage;
  }
  std::string error;
  if (o.sim && !useSimulatedZeDriver(error)) {
    std::cerr << "gtap counters --sim: " << error << "\n";
    return kExitError;
  }
  // Intel's driver offers metric groups only with this set, as the tools
  // that read them set it.
  setenv("ZET_ENABLE_METRICS", "1", 0);
  ZeCounterFunctions ze = loadLoader(error);
  if (!error.empty()) {
    std::cerr << "gtap counters: " << error << "\n";
    return kExitError;
  }
  ze_result_t r = ze.zeInit(0);
  uint32_t drivers = 0;
  if (r == ZE_RESULT_SUCCESS) r = ze.zeDriverGet(&drivers, nullptr);
  if (r != ZE_RESULT_SUCCESS || drivers == 0) {
    std::cerr << "gtap counters: no Level Zero driver (zeInit/zeDriverGet returned 0x" << std::hex
              << static_cast<uint32_t>(r) << std::dec << "); --sim lists the simulated device's\n";
    return kExitError;
  }
  std::vector<ze_driver_handle_t> driverList(drivers);
  ze.zeDriverGet(&drivers, driverList.data());
  readers::Table table({"device", "group", "sampling", "domain", "metric", "type", "units", "description"});
  size_t metrics = 0;
  for (uint32_t d = 0; d < drivers; ++d) {
    uint32_t devices = 0;
    if (ze.zeDeviceGet(driverList[d], &devices, nullptr) != ZE_RESULT_SUCCESS) continue;
    std::vector<ze_device_handle_t> deviceList(devices);
    ze.zeDeviceGet(driverList[d], &devices, deviceList.data());
    for (uint32_t i = 0; i < devices; ++i) {
      ze_device_properties_t dp{};
      dp.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
      std::string device = std::to_string(d) + "." + std::to_string(i);
      if (ze.zeDeviceGetProperties(deviceList[i], &dp) == ZE_RESULT_SUCCESS) device += " " + std::string(dp.name);
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
          table.add({readers::Cell::str(device), readers::Cell::str(gp.name),
                     readers::Cell::str(samplingName(gp.samplingType)),
                     readers::Cell::count(static_cast<int64_t>(gp.domain)), readers::Cell::str(mp.name),
                     readers::Cell::str(metricTypeName(mp.metricType)),
                     readers::Cell::str(*mp.resultUnits ? mp.resultUnits : "-"), readers::Cell::str(mp.description)});
          ++metrics;
        }
      }
    }
  }
  table.print(std::cout, format);
  if (format == readers::OutputFormat::text)
    std::cout << (metrics ? "\nThe metrics of one group are collected in one pass; groups of different domains can "
                            "be collected together, groups of one domain one at a time.\n"
                          : "no device offers metric groups\n");
  return kExitSuccess;
}

int counters(const CountersOptions& o) {
  if (!o.list) {
    std::cerr << "gtap counters: give --list (the counters the devices offer)\n";
    return kExitUsage;
  }
  return listCounters(o);
}

}  // namespace

Action addCountersCommand(CLI::App& app) {
  auto o = std::make_shared<CountersOptions>();
  auto* cmd = app.add_subcommand("counters", "Hardware counters and metric groups the devices offer (--list)");
  cmd->add_flag("--list", o->list, "List every metric group and metric the Level Zero devices offer");
  cmd->add_flag("--sim", o->sim, "Ask gtap's simulated Level Zero driver instead of real devices");
  cmd->add_option("--format", o->format, "text, csv or jsonl");
  return [o] { return counters(*o); };
}

}  // namespace gtap::cli
