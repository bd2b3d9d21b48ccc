// Device metrics over time on Level Zero (GTAP_METRICS_INTERVAL_MS): a
// thread of gtap's samples each device the program found through Sysman
// every interval while the program runs: engine group activity (cumulative
// active time), frequency, and where the driver has them power energy,
// temperature, memory use and bandwidth. Metrics the device has no handle
// for are left out; a device without Sysman gets a note instead of samples.
// The samples since the last flush go out as one deviceMetrics chunk per
// device at each flush, with a last sample at exit.
#pragma once

#include <level_zero/ze_api.h>

#include <cstdint>

namespace gtap::ze {

class DeviceMetrics {
 public:
  static DeviceMetrics& get();
  // Sampling asked for (GTAP_METRICS_INTERVAL_MS > 0).
  static bool on();
  // A device the program found (gtap's id for it): its metrics looked up
  // once; the sampling thread starts with the first. No lock of the caller
  // may be held.
  void deviceSeen(ze_device_handle_t device, uint32_t deviceId);

  struct Impl;
  Impl* impl() { return impl_; }

 private:
  DeviceMetrics();
  Impl* impl_;
};

}  // namespace gtap::ze
