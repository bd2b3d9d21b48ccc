// What prepare() makes ready once and every run reads: the stream, resolved
// payloads, the loader's functions, the devices, substituted module binaries.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "device_map.h"
#include "gtap/readers/replayer.h"
#include "payloads.h"
#include "ze_functions.h"

namespace gtap::replay {

struct ReplaySetup {
  const readers::Capture* capture = nullptr;
  const readers::ReplayStream* stream = nullptr;
  readers::ReplayOptions options;
  const ZeFunctions* ze = nullptr;
  Payloads payloads;
  DeviceMap devices;
  std::map<uint64_t, Bytes> moduleBinaries;  // substituted modules' binaries, by module id
  std::vector<std::string> warnings;

  // "FILE: record seq 12 (launchKernel)": how errors start.
  std::string where(const readers::ReplayRecord& r) const {
    return capture->path() + ": record " + readers::recordLabel(r);
  }
};

}  // namespace gtap::replay
