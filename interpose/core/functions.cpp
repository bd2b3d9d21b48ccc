#include "functions.h"

namespace gtap::core {

namespace {
struct Range {
  uint16_t base;
  const FunctionInfo* table;
  size_t count;
};
// Filled from constructors before any thread exists; read-only afterwards.
Range g_ranges[8];
size_t g_rangeCount = 0;
}  // namespace

void registerFunctions(uint16_t base, const FunctionInfo* table, size_t count) {
  if (g_rangeCount < sizeof g_ranges / sizeof g_ranges[0]) g_ranges[g_rangeCount++] = {base, table, count};
}

const FunctionInfo* functionInfo(uint16_t id) {
  for (size_t i = 0; i < g_rangeCount; ++i) {
    const Range& r = g_ranges[i];
    if (id >= r.base && static_cast<size_t>(id - r.base) < r.count) return &r.table[id - r.base];
  }
  return nullptr;
}

}  // namespace gtap::core
