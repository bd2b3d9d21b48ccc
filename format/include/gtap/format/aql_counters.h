// The HSA hardware counters gtap knows by name, for AMD's AQL profile
// extension (hsa_ven_amd_aqlprofile.h): each name as rocprofiler spells it,
// the hardware block that counts it and the event's select value in that
// block (the GFX9 family's GRBM_PERF_SEL_* and SQ_PERF_SEL_* values). The
// extension counts events, not names: `gtap counters --list` shows the names
// whose event the agent's validate_event accepts, and libgtap.so turns the
// names of GTAP_COUNTERS into events with this table.
#pragma once

#include <cstdint>
#include <string_view>

namespace gtap::format {

// hsa_ven_amd_aqlprofile_block_name_t's values for the blocks below.
inline constexpr uint32_t kAqlBlockGrbm = 3, kAqlBlockSq = 6;

struct AqlCounter {
  const char* name;
  uint32_t block;    // hsa_ven_amd_aqlprofile_block_name_t
  uint32_t eventId;  // the event's counter_id in that block (instance 0)
  const char* description;
};

inline constexpr AqlCounter kAqlCounters[] = {
    {"GRBM_COUNT", kAqlBlockGrbm, 0, "GPU free-running clock ticks"},
    {"GRBM_GUI_ACTIVE", kAqlBlockGrbm, 2, "GPU busy ticks (graphics pipe active)"},
    {"GRBM_CP_BUSY", kAqlBlockGrbm, 3, "ticks any of the command processor's blocks was busy"},
    {"GRBM_SPI_BUSY", kAqlBlockGrbm, 11, "ticks a shader processor input was busy"},
    {"GRBM_TA_BUSY", kAqlBlockGrbm, 13, "ticks a texture addresser was busy"},
    {"SQ_CYCLES", kAqlBlockSq, 2, "clock cycles (sequencer)"},
    {"SQ_BUSY_CYCLES", kAqlBlockSq, 3, "clock cycles the sequencer reported busy"},
    {"SQ_WAVES", kAqlBlockSq, 4, "wavefronts launched"},
    {"SQ_BUSY_CU_CYCLES", kAqlBlockSq, 13, "compute unit cycles with the sequencer busy (per SIMD, quad rate)"},
    {"SQ_ITEMS", kAqlBlockSq, 14, "work-items launched"},
    {"SQ_INSTS", kAqlBlockSq, 25, "instructions issued"},
    {"SQ_INSTS_VALU", kAqlBlockSq, 26, "vector ALU instructions issued"},
    {"SQ_INSTS_VMEM_WR", kAqlBlockSq, 27, "vector memory write instructions issued"},
    {"SQ_INSTS_VMEM_RD", kAqlBlockSq, 28, "vector memory read instructions issued"},
    {"SQ_INSTS_SALU", kAqlBlockSq, 30, "scalar ALU instructions issued"},
    {"SQ_INSTS_SMEM", kAqlBlockSq, 31, "scalar memory instructions issued"},
    {"SQ_INSTS_FLAT", kAqlBlockSq, 32, "flat memory instructions issued"},
    {"SQ_INSTS_LDS", kAqlBlockSq, 34, "local data share instructions issued"},
    {"SQ_INSTS_BRANCH", kAqlBlockSq, 38, "branch instructions issued"},
    {"SQ_WAIT_ANY", kAqlBlockSq, 56, "wave cycles spent waiting for anything (per SIMD, quad rate)"},
};

// The block's name as gtap shows it (the group of its counters); "" for a
// block the table has no counter of.
inline std::string_view aqlBlockName(uint32_t block) {
  switch (block) {
    case kAqlBlockGrbm: return "GRBM";
    case kAqlBlockSq: return "SQ";
    default: return "";
  }
}

// The counter of that name; null when gtap does not know it.
inline const AqlCounter* findAqlCounter(std::string_view name) {
  for (const AqlCounter& c : kAqlCounters)
    if (name == c.name) return &c;
  return nullptr;
}

}  // namespace gtap::format
