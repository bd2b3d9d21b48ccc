// The real Level Zero entry points (from the loader gtap opens itself) and the
// name -> wrapper table the generated code provides.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "functions.h"

// Declared hidden, as everything of libgtap.so is: a wrapper then reads these
// globals directly, not through the GOT.
#pragma GCC visibility push(hidden)
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
extern void* g_real[];  // kFunctionCount entries, generated with them
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

// Code of the runtime's own libraries (the loader, its layers, drivers: every
// library named libze_*), as address ranges learnt from the loaded objects.
struct CodeRange {
  uintptr_t begin, end;
};
inline constexpr size_t kMaxRuntimeRanges = 32;
extern CodeRange g_runtimeCode[kMaxRuntimeRanges];
extern std::atomic<size_t> g_runtimeCodeCount;
// The span from the lowest range's begin to the highest's end: a program's
// call (from its executable or its other libraries, mostly outside the span)
// is told apart with two compares, before any range is looked at.
extern std::atomic<uintptr_t> g_runtimeLow, g_runtimeHigh;
bool calledByRuntimeSlow(uintptr_t address);

// True when `returnAddress` (a wrapper's caller) is in the runtime's own code:
// the call is the runtime's, not the program's. With `rescan`, an address not
// known yet makes gtap look again at the libraries loaded since (a layer the
// loader opened while initialising).
inline bool calledByRuntime(const void* returnAddress, bool rescan) {
  uintptr_t a = reinterpret_cast<uintptr_t>(returnAddress);
  size_t n = g_runtimeCodeCount.load(std::memory_order_acquire);
  // Set before the count they cover was published.
  uintptr_t low = g_runtimeLow.load(std::memory_order_relaxed);
  if (__builtin_expect(a - low < g_runtimeHigh.load(std::memory_order_relaxed) - low, 0)) {
    for (size_t i = 0; i < n; ++i)
      if (a - g_runtimeCode[i].begin < g_runtimeCode[i].end - g_runtimeCode[i].begin) return true;
  }
  return rescan && calledByRuntimeSlow(a);
}

// A Level Zero function the program can reach but gtap has no wrapper for (a
// newer loader's or a driver's extension): its calls pass through untouched,
// and its name goes into the capture as unrecorded.
void noteUnrecorded(const char* name);

}  // namespace gtap::ze
#pragma GCC visibility pop
