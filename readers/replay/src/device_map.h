// The captured devices found on this machine: each `device` record's driver
// and device index looked up after zeInit.
#pragma once

#include <level_zero/ze_api.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "gtap/readers/capture.h"
#include "gtap/readers/replay_stream.h"
#include "ze_functions.h"

namespace gtap::replay {

struct MappedDevice {
  ze_driver_handle_t driver = nullptr;
  ze_device_handle_t device = nullptr;
  std::string name;  // this machine's
};

struct DeviceMap {
  std::vector<ze_driver_handle_t> drivers;
  std::map<uint64_t, MappedDevice> byId;  // by the capture's device id
};

// Throws ReplayError naming the record when a captured device has no
// counterpart (topology mismatch); a differing name is a warning.
DeviceMap mapDevices(const ZeFunctions& ze, const readers::Capture& capture, const readers::ReplayStream& stream,
                     std::vector<std::string>& warnings);

}  // namespace gtap::replay
