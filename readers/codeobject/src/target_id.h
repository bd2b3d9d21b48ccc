// Target IDs ("amdgcn-amd-amdhsa--gfx90a:xnack-") from ELF header fields, for
// code objects whose metadata does not carry amdhsa.target (V3 and older).
#pragma once

#include <cstdint>
#include <string>

namespace gtap::readers::codeobject {

// OS ABI and ABI version values of AMDGPU code objects (AMDGPUUsage, "ELF Header").
inline constexpr uint8_t kOsAbiAmdgpuHsa = 64;
inline constexpr uint8_t kOsAbiAmdgpuPal = 65;
inline constexpr uint8_t kOsAbiAmdgpuMesa3d = 66;

// "gfx90a" for EF_AMDGPU_MACH_AMDGCN_GFX90A; "" for values this reader does not know.
std::string processorName(uint32_t elfFlags);

// "4" for a V4 code object; empty when the OS ABI is not AMDGPU_HSA.
std::string codeObjectVersion(uint8_t osAbi, uint8_t abiVersion);

// The full target ID, with the xnack/sramecc settings the flags record.
std::string targetIdFromElfHeader(uint8_t osAbi, uint8_t abiVersion, uint32_t elfFlags);

}  // namespace gtap::readers::codeobject
