#include "log.h"

#include <unistd.h>

#include <atomic>
#include <cstdarg>
#include <cstdio>

namespace gtap::core {

namespace {
std::atomic<unsigned long long> g_said{0};

void vlog(const char* format, va_list args) {
  char buf[1024];
  int n = std::snprintf(buf, sizeof buf, "gtap: ");
  int m = std::vsnprintf(buf + n, sizeof buf - static_cast<size_t>(n) - 1, format, args);
  if (m < 0) return;
  size_t len = static_cast<size_t>(n) + static_cast<size_t>(m);
  if (len > sizeof buf - 2) len = sizeof buf - 2;
  buf[len++] = '\n';
  ssize_t ignored = ::write(STDERR_FILENO, buf, len);
  (void)ignored;
}
}  // namespace

void logLine(const char* format, ...) {
  va_list args;
  va_start(args, format);
  vlog(format, args);
  va_end(args);
}

void warnOnce(int key, const char* format, ...) {
  unsigned long long bit = 1ull << (key & 63);
  if (g_said.fetch_or(bit) & bit) return;
  va_list args;
  va_start(args, format);
  vlog(format, args);
  va_end(args);
}

}  // namespace gtap::core
