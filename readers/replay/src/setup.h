// What prepare() makes ready once and every run reads: the stream, resolved
// payloads, the runtimes' functions, the devices and agents, substituted
// module and code object binaries.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "device_map.h"
#include "gtap/readers/replayer.h"
#include "hsa_agents.h"
#include "hsa_functions.h"
#include "payloads.h"
#include "ze_functions.h"

namespace gtap::replay {

struct ReplaySetup {
  const readers::Capture* capture = nullptr;
  const readers::ReplayStream* stream = nullptr;
  readers::ReplayOptions options;
  const ZeFunctions* ze = nullptr;    // null when the stream holds no Level Zero records
  const HsaFunctions* hsa = nullptr;  // null when it holds no HSA records
  Payloads payloads;
  DeviceMap devices;
  HsaAgentMap hsaAgents;
  std::map<uint64_t, Bytes> moduleBinaries;  // substituted modules' binaries, by module id
  std::map<uint64_t, Bytes> codeObjectBinaries;  // substituted HSA code objects' bytes, by code object id
  std::set<uint64_t> checkedKernels;  // hsaKernel ids whose substitute passed the ABI check
  // hsaKernel ids of substituted code objects the stream never dispatches:
  // unchecked, and the replacement need not have them.
  std::set<uint64_t> uncheckedKernels;
  std::vector<std::string> warnings;

  // "FILE: record seq 12 (launchKernel)": how errors start.
  std::string where(const readers::ReplayRecord& r) const {
    return capture->path() + ": record " + readers::recordLabel(r);
  }
};

}  // namespace gtap::replay
