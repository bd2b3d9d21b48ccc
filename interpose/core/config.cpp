#include "config.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

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
  if (const char* v = std::getenv("GTAP_OUTPUT"); v && *v) c.output = v;
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
  if (const char* v = std::getenv("GTAP_STACK_DEPTH")) {
    if (parseUnsigned(v, 1, 256, n))
      c.stackDepth = static_cast<uint32_t>(n);
    else
      c.problems.push_back(std::string("GTAP_STACK_DEPTH='") + v + "' is not 1..256; using 32");
  }
  return c;
}

}  // namespace gtap::core
