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
  bool outputGiven = false;                  // GTAP_OUTPUT was set (else the default, moved to $TMPDIR or
                                             // /tmp when the working directory is not writable)
  uint32_t mode = format::kModeApi;          // GTAP_MODE
  std::string modeText = "api";
  uint32_t flushIntervalMs = 200;            // GTAP_FLUSH_MS
  uint64_t bufferBytes = 32ull << 20;        // GTAP_BUFFER_MB
  bool quiet = false;                        // GTAP_QUIET=1
  std::string kernelFilter;                  // GTAP_KERNEL_FILTER: glob on kernel names
  // GTAP_DISPATCH_RANGE=START:END: only kernel dispatches numbered START to
  // END (both included, counted as replay scopes count them) are recorded.
  bool dispatchRange = false;
  uint64_t dispatchFirst = 0, dispatchLast = 0;
  uint32_t stackDepth = 32;                  // GTAP_STACK_DEPTH
  uint32_t samplePeriodUs = 100;             // GTAP_SAMPLE_PERIOD_US: instruction sampling period (mode samples)
  // Replay: what to do with bytes read from file mappings (GTAP_FILE_POLICY:
  // reference, capture-ranges, capture-all, fail) and whether references
  // carry a content digest (GTAP_FILE_VALIDATION=digest).
  std::string filePolicy = "reference";
  bool fileDigest = false;
  struct DispatchScope {
    std::string name;
    uint64_t first = 0, last = 0;  // dispatch numbers, both included
  };
  std::vector<DispatchScope> scopes;        // GTAP_SCOPES=NAME=START:END,...
  int scopeSignal = 0;                      // GTAP_SCOPE_SIGNAL: toggles the scope "signal"
  bool startPaused = false;                 // GTAP_START_PAUSED=1: profile records wait for gtap_start()
  int toggleSignal = 0;                     // GTAP_TOGGLE_SIGNAL: pauses / resumes the profile records
  bool summary = false;                     // GTAP_SUMMARY=1: a summary on stderr when the file is complete
  // Hardware counters (docs/counters.md): GTAP_COUNTERS names counters or
  // groups (implies kernels); GTAP_COUNTERS_OPTIONAL=1 runs unmeasured what
  // the device does not offer; GTAP_COUNTER_PASS=N collects pass N of a
  // request that needs several (gtap bench --counters replays once per pass).
  std::string counters;
  bool countersOptional = false;
  uint32_t counterPass = 0;
  // GTAP_DEVICE_FILTER / GTAP_QUEUE_FILTER: comma-separated device indices
  // (the runtime's order, as `gtap counters --list` shows them) and queue
  // numbers (the process's queues in creation order, from 0); device work
  // elsewhere is not recorded or measured. Empty: all.
  std::vector<uint32_t> deviceFilter, queueFilter;
  uint32_t metricsIntervalMs = 0;  // GTAP_METRICS_INTERVAL_MS: device metrics sampling (0: off)
  std::vector<std::pair<std::string, std::string>> raw;  // every GTAP_* seen
  std::vector<std::string> problems;         // said once at session start
};

// Parses the environment; never fails: bad values keep the default and leave a
// message in `problems`.
Config readConfig();

const Config& config();  // session.h: the settings the session was started with

// GTAP_KERNEL_FILTER and GTAP_DISPATCH_RANGE, applied the same way by every
// front end: a kernel dispatch that fails either is not recorded (no device
// op, no device time); the program's work runs unchanged.
bool kernelNameWanted(const std::string& name);
inline bool dispatchNumberWanted(uint64_t number) {
  const Config& c = config();
  return !c.dispatchRange || (number >= c.dispatchFirst && number <= c.dispatchLast);
}
// GTAP_DEVICE_FILTER and GTAP_QUEUE_FILTER, likewise for every front end.
bool deviceIndexWanted(uint32_t index);
bool queueNumberWanted(uint32_t number);
// The next queue number of the process (Level Zero command queues and
// immediate lists, HSA queues share one count), for queueNumberWanted.
uint32_t nextQueueNumber();

}  // namespace gtap::core
