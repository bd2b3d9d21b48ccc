#include "target_id.h"

#include <cstdio>
#include <string>
#include <utility>

namespace gtap::readers::codeobject {

namespace {

// EF_AMDGPU_MACH values (AMDGPUUsage, "AMDGPU EF_AMDGPU_MACH Values"). 0x40 and
// 0x4b were gfx940 and gfx941 before those targets were retired; objects
// built for them still exist.
constexpr std::pair<uint32_t, const char*> kProcessors[] = {
    {0x020, "gfx600"},  {0x021, "gfx601"},  {0x022, "gfx700"},  {0x023, "gfx701"},
    {0x024, "gfx702"},  {0x025, "gfx703"},  {0x026, "gfx704"},  {0x028, "gfx801"},
    {0x029, "gfx802"},  {0x02a, "gfx803"},  {0x02b, "gfx810"},  {0x02c, "gfx900"},
    {0x02d, "gfx902"},  {0x02e, "gfx904"},  {0x02f, "gfx906"},  {0x030, "gfx908"},
    {0x031, "gfx909"},  {0x032, "gfx90c"},  {0x033, "gfx1010"}, {0x034, "gfx1011"},
    {0x035, "gfx1012"}, {0x036, "gfx1030"}, {0x037, "gfx1031"}, {0x038, "gfx1032"},
    {0x039, "gfx1033"}, {0x03a, "gfx602"},  {0x03b, "gfx705"},  {0x03c, "gfx805"},
    {0x03d, "gfx1035"}, {0x03e, "gfx1034"}, {0x03f, "gfx90a"},  {0x040, "gfx940"},
    {0x041, "gfx1100"}, {0x042, "gfx1013"}, {0x043, "gfx1150"}, {0x044, "gfx1103"},
    {0x045, "gfx1036"}, {0x046, "gfx1101"}, {0x047, "gfx1102"}, {0x048, "gfx1200"},
    {0x04a, "gfx1151"}, {0x04b, "gfx941"},  {0x04c, "gfx942"},  {0x04e, "gfx1201"},
    {0x04f, "gfx950"},  {0x051, "gfx9-generic"}, {0x052, "gfx10-1-generic"},
    {0x053, "gfx10-3-generic"}, {0x054, "gfx11-generic"}, {0x055, "gfx1152"},
    {0x058, "gfx1153"}, {0x059, "gfx12-generic"}, {0x05f, "gfx9-4-generic"},
    // R600 family: no HSA code objects, but the names keep reports readable.
    {0x001, "r600"},    {0x002, "r630"},    {0x003, "rs880"},   {0x004, "rv670"},
    {0x005, "rv710"},   {0x006, "rv730"},   {0x007, "rv770"},   {0x008, "cedar"},
    {0x009, "cypress"}, {0x00a, "juniper"},
};

constexpr uint32_t kMachMask = 0x0ff;

// Feature bits differ per code object version (AMDGPUUsage, "AMDGPU ELF Header e_flags").
constexpr uint32_t kXnackV2 = 0x01;
constexpr uint32_t kXnackV3 = 0x100;
constexpr uint32_t kSrameccV3 = 0x200;
constexpr uint32_t kXnackMaskV4 = 0x300;
constexpr uint32_t kSrameccMaskV4 = 0xc00;

// V4 on: the field says unsupported/any (nothing to print), off or on.
const char* settingV4(uint32_t field, uint32_t off, uint32_t on) {
  if (field == on) return "+";
  if (field == off) return "-";
  return nullptr;
}

}  // namespace

std::string processorName(uint32_t elfFlags) {
  const uint32_t mach = elfFlags & kMachMask;
  for (const auto& [value, name] : kProcessors) {
    if (value == mach) return name;
  }
  return {};
}

std::string codeObjectVersion(uint8_t osAbi, uint8_t abiVersion) {
  if (osAbi != kOsAbiAmdgpuHsa) return {};
  // ELFABIVERSION_AMDGPU_HSA_V2 is 0, V3 is 1, and so on.
  return std::to_string(static_cast<unsigned>(abiVersion) + 2);
}

std::string targetIdFromElfHeader(uint8_t osAbi, uint8_t abiVersion, uint32_t elfFlags) {
  std::string target = "amdgcn-amd-";
  switch (osAbi) {
    case kOsAbiAmdgpuHsa: target += "amdhsa"; break;
    case kOsAbiAmdgpuPal: target += "amdpal"; break;
    case kOsAbiAmdgpuMesa3d: target += "mesa3d"; break;
    default: target += "unknown"; break;
  }
  target += "--";
  std::string processor = processorName(elfFlags);
  if (processor.empty()) {
    char unknown[32];
    std::snprintf(unknown, sizeof unknown, "mach-0x%02x", elfFlags & kMachMask);
    processor = unknown;
  }
  target += processor;
  if (osAbi != kOsAbiAmdgpuHsa) return target;

  // Features follow in alphabetical order, as in target IDs.
  if (abiVersion == 0) {
    if (elfFlags & kXnackV2) target += ":xnack+";
  } else if (abiVersion == 1) {
    // V3 has one bit per feature, set when it is on or "any".
    if (elfFlags & kSrameccV3) target += ":sramecc+";
    if (elfFlags & kXnackV3) target += ":xnack+";
  } else {
    if (const char* s = settingV4(elfFlags & kSrameccMaskV4, 0x800, 0xc00)) {
      target += ":sramecc";
      target += s;
    }
    if (const char* s = settingV4(elfFlags & kXnackMaskV4, 0x200, 0x300)) {
      target += ":xnack";
      target += s;
    }
  }
  return target;
}

}  // namespace gtap::readers::codeobject
