#include "config.h"

#include "gtap/format/device_filter.h"
#include "gtap/format/scope_signal.h"

#include <fnmatch.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <csignal>
#include <cstring>
#include <string_view>

extern char** environ;

namespace gtap::core {

namespace {
bool parseUnsigned(const char* text, uint64_t min, uint64_t max, uint64_t& out) {
  if (!text || !*text) return false;
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(text, &end, 10);
  if (errno || *end || v < min || v > max) return false;
  out = v;
  return true;
}
// NAME=START:END[,NAME=START:END...]
// N[,N...] with each N in 0..2^32-2.
bool parseNumberList(const char* text, std::vector<uint32_t>& out) {
  std::string_view t = text;
  while (!t.empty()) {
    size_t comma = t.find(',');
    uint64_t n = 0;
    if (!parseUnsigned(std::string(t.substr(0, comma)).c_str(), 0, 0xfffffffeu, n)) return false;
    out.push_back(static_cast<uint32_t>(n));
    t = comma == std::string_view::npos ? std::string_view() : t.substr(comma + 1);
  }
  return !out.empty();
}
bool parseScopes(std::string_view text, std::vector<Config::DispatchScope>& out) {
  while (!text.empty()) {
    size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    size_t eq = item.rfind('='), colon = item.rfind(':');
    if (eq == std::string_view::npos || eq == 0 || colon == std::string_view::npos || colon < eq) return false;
    Config::DispatchScope s;
    s.name = std::string(item.substr(0, eq));
    if (!parseUnsigned(std::string(item.substr(eq + 1, colon - eq - 1)).c_str(), 0, UINT64_MAX, s.first) ||
        !parseUnsigned(std::string(item.substr(colon + 1)).c_str(), 0, UINT64_MAX, s.last) || s.last < s.first)
      return false;
    out.push_back(std::move(s));
  }
  return true;
}
}  // namespace

Config readConfig() {
  Config c;
  for (char** e = environ; e && *e; ++e) {
    if (std::strncmp(*e, "GTAP_", 5) != 0) continue;
    const char* eq = std::strchr(*e, '=');
    if (!eq) continue;
    c.raw.emplace_back(std::string(*e, static_cast<size_t>(eq - *e)), std::string(eq + 1));
  }
  if (const char* v = std::getenv("GTAP_ENABLE")) c.enabled = std::strcmp(v, "0") != 0;
  if (const char* v = std::getenv("GTAP_OUTPUT"); v && *v) {
    c.output = v;
    c.outputGiven = true;
  }
  if (const char* v = std::getenv("GTAP_MODE"); v && *v) {
    std::string error;
    if (format::parseModeList(v, c.mode, error)) {
      c.modeText = v;
    } else {
      c.problems.push_back("GTAP_MODE: " + error + "; using 'api'");
    }
  }
  uint64_t n = 0;
  if (const char* v = std::getenv("GTAP_FLUSH_MS")) {
    if (parseUnsigned(v, 1, 60000, n))
      c.flushIntervalMs = static_cast<uint32_t>(n);
    else
      c.problems.push_back(std::string("GTAP_FLUSH_MS='") + v + "' is not 1..60000; using 200");
  }
  if (const char* v = std::getenv("GTAP_BUFFER_MB")) {
    if (parseUnsigned(v, 1, 65536, n))
      c.bufferBytes = n << 20;
    else
      c.problems.push_back(std::string("GTAP_BUFFER_MB='") + v + "' is not 1..65536; using 32");
  }
  if (const char* v = std::getenv("GTAP_QUIET")) c.quiet = std::strcmp(v, "0") != 0;
  if (const char* v = std::getenv("GTAP_KERNEL_FILTER")) c.kernelFilter = v;
  if (const char* v = std::getenv("GTAP_DISPATCH_RANGE"); v && *v) {
    std::string error;
    c.dispatchRange = format::parseDispatchRange(v, c.dispatchFirst, c.dispatchLast, error);
    if (!c.dispatchRange) c.problems.push_back("GTAP_DISPATCH_RANGE: " + error + "; every dispatch is recorded");
  }
  if (const char* v = std::getenv("GTAP_STACK_DEPTH")) {
    if (parseUnsigned(v, 1, 256, n))
      c.stackDepth = static_cast<uint32_t>(n);
    else
      c.problems.push_back(std::string("GTAP_STACK_DEPTH='") + v + "' is not 1..256; using 32");
  }
  if (const char* v = std::getenv("GTAP_SAMPLE_PERIOD_US")) {
    if (parseUnsigned(v, 1, 1000000, n))
      c.samplePeriodUs = static_cast<uint32_t>(n);
    else
      c.problems.push_back(std::string("GTAP_SAMPLE_PERIOD_US='") + v + "' is not 1..1000000; using 100");
  }
  if (const char* v = std::getenv("GTAP_FILE_POLICY"); v && *v) {
    std::string_view p = v;
    if (p == "reference" || p == "capture-ranges" || p == "capture-all" || p == "fail")
      c.filePolicy = v;
    else
      c.problems.push_back(std::string("GTAP_FILE_POLICY='") + v +
                           "' is not reference, capture-ranges, capture-all or fail; using reference");
  }
  if (const char* v = std::getenv("GTAP_FILE_VALIDATION"); v && *v) {
    std::string_view p = v;
    if (p == "digest" || p == "identity")
      c.fileDigest = p == "digest";
    else
      c.problems.push_back(std::string("GTAP_FILE_VALIDATION='") + v + "' is not identity or digest; using identity");
  }
  if (const char* v = std::getenv("GTAP_SCOPES"); v && *v) {
    if (!parseScopes(v, c.scopes)) {
      c.scopes.clear();
      c.problems.push_back(std::string("GTAP_SCOPES='") + v + "' is not NAME=START:END[,...]; no launcher scopes");
    }
  }
  if (const char* v = std::getenv("GTAP_SCOPE_SIGNAL"); v && *v) {
    std::string error;
    c.scopeSignal = format::parseScopeSignal(v, error);
    if (!c.scopeSignal) c.problems.push_back("GTAP_SCOPE_SIGNAL: " + error + "; ignored");
  }
  if (const char* v = std::getenv("GTAP_START_PAUSED")) c.startPaused = *v && std::strcmp(v, "0") != 0;
  if (const char* v = std::getenv("GTAP_SUMMARY")) c.summary = *v && std::strcmp(v, "0") != 0;
  if (const char* v = std::getenv("GTAP_TOGGLE_SIGNAL"); v && *v) {
    std::string error;
    c.toggleSignal = format::parseScopeSignal(v, error);
    if (c.toggleSignal && c.toggleSignal == c.scopeSignal) {
      c.toggleSignal = 0;
      error = "the same signal as GTAP_SCOPE_SIGNAL";
    }
    if (!c.toggleSignal) c.problems.push_back("GTAP_TOGGLE_SIGNAL: " + error + "; ignored");
  }
  if (const char* v = std::getenv("GTAP_COUNTERS"); v && *v) {
    c.counters = v;
    // Counters are read around recorded dispatches: they imply kernels.
    c.mode |= format::kModeKernels;
    if (c.modeText.find("kernels") == std::string::npos) c.modeText += ",kernels";
  }
  if (const char* v = std::getenv("GTAP_COUNTERS_OPTIONAL")) c.countersOptional = std::strcmp(v, "0") != 0;
  if (const char* v = std::getenv("GTAP_COUNTER_PASS"); v && *v) {
    if (parseUnsigned(v, 0, 1000, n))
      c.counterPass = static_cast<uint32_t>(n);
    else
      c.problems.push_back(std::string("GTAP_COUNTER_PASS='") + v + "' is not 0..1000; collecting pass 0");
  }
  for (auto [name, list] : {std::pair{"GTAP_DEVICE_FILTER", &c.deviceFilter}, std::pair{"GTAP_QUEUE_FILTER", &c.queueFilter}}) {
    const char* v = std::getenv(name);
    if (!v || !*v) continue;
    if (!parseNumberList(v, *list)) {
      list->clear();
      c.problems.push_back(std::string(name) + "='" + v + "' is not N[,N...]; no filter");
    }
  }
  if (const char* v = std::getenv("GTAP_METRICS_INTERVAL_MS"); v && *v) {
    if (parseUnsigned(v, 1, 600000, n))
      c.metricsIntervalMs = static_cast<uint32_t>(n);
    else
      c.problems.push_back(std::string("GTAP_METRICS_INTERVAL_MS='") + v + "' is not 1..600000; no device metrics");
  }
  return c;
}

bool deviceIndexWanted(uint32_t index) {
  const auto& f = config().deviceFilter;
  if (f.empty()) return true;
  for (uint32_t i : f)
    if (i == index) return true;
  return false;
}

bool queueNumberWanted(uint32_t number) {
  const auto& f = config().queueFilter;
  if (f.empty()) return true;
  for (uint32_t i : f)
    if (i == number) return true;
  return false;
}

uint32_t nextQueueNumber() {
  static std::atomic<uint32_t> next{0};
  return next.fetch_add(1, std::memory_order_relaxed);
}

bool kernelNameWanted(const std::string& name) {
  const std::string& glob = config().kernelFilter;
  return glob.empty() || fnmatch(glob.c_str(), name.c_str(), 0) == 0;
}

}  // namespace gtap::core
