// One-line messages to stderr, prefixed "gtap: ". Formats into a stack buffer
// and writes with one write(2), so it is safe from any thread and never
// allocates.
#pragma once

namespace gtap::core {

void logLine(const char* format, ...) __attribute__((format(printf, 1, 2)));

}  // namespace gtap::core
