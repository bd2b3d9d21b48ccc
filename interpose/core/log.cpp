#include "log.h"

#include <unistd.h>

#include <cstdarg>
#include <cstdio>

namespace gtap::core {

namespace {
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


}  // namespace gtap::core
