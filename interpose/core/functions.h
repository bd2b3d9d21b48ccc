// Names of the functions front ends record, by global id. Each front end owns
// a fixed id range and registers its table from a constructor.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gtap::core {

// Same ordinals as schema Api.
enum class ApiKind : uint8_t { unknown = 0, levelZero = 1, levelZeroTools = 2, levelZeroSysman = 3, hsa = 4, ireeHal = 5 };

struct FunctionInfo {
  const char* name;
  ApiKind api;
};

inline constexpr uint16_t kZeFunctionBase = 0;
inline constexpr uint16_t kHsaFunctionBase = 4096;
inline constexpr uint16_t kHalFunctionBase = 8192;

void registerFunctions(uint16_t base, const FunctionInfo* table, size_t count);
// nullptr for an id nobody registered.
const FunctionInfo* functionInfo(uint16_t id);

}  // namespace gtap::core
