// The real Level Zero entry points (from the loader gtap opens itself) and the
// name -> wrapper table the generated code provides.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "functions.h"

namespace gtap::ze {

struct NamedWrapper {
  const char* name;
  uint32_t index;
  void* wrapper;
};

// Generated (ze_wrappers.cpp).
extern const size_t kFunctionCount;
extern const core::FunctionInfo kFunctions[];
extern const NamedWrapper kWrappers[];  // sorted by name
extern const size_t kWrapperCount;

extern std::atomic<bool> g_resolved;
extern void* g_real[];
void resolveAll();

// The loader's entry point for generated function `index`, or nullptr when the
// loader or the symbol is missing.
inline void* realFunction(uint32_t index) {
  if (__builtin_expect(!g_resolved.load(std::memory_order_acquire), 0)) resolveAll();
  return g_real[index];
}

// gtap's wrapper for a Level Zero function name, or nullptr when gtap has none
// or the loader lacks the function (then the caller's own answer stands).
void* wrapperFor(const char* name);

}  // namespace gtap::ze
