// Settings, read once from GTAP_* environment variables (the only source: the
// launcher sets these too). See the table in README.md.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "gtap/format/modes.h"

namespace gtap::core {


struct Config {
  bool enabled = true;                       // GTAP_ENABLE=0 turns recording off
  std::string output = "gtap-%p.gtap";       // GTAP_OUTPUT
  uint32_t mode = format::kModeApi;          // GTAP_MODE
  std::string modeText = "api";
  uint32_t flushIntervalMs = 200;            // GTAP_FLUSH_MS
  uint64_t bufferBytes = 32ull << 20;        // GTAP_BUFFER_MB
  bool quiet = false;                        // GTAP_QUIET=1
  std::string kernelFilter;                  // GTAP_KERNEL_FILTER: glob on kernel names
  uint32_t stackDepth = 32;                  // GTAP_STACK_DEPTH
  std::vector<std::pair<std::string, std::string>> raw;  // every GTAP_* seen
  std::vector<std::string> problems;         // said once at session start
};

// Parses the environment; never fails: bad values keep the default and leave a
// message in `problems`.
Config readConfig();

}  // namespace gtap::core
