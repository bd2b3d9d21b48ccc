// One ELF file opened through libdwfl, answering "which functions, inlined
// ones included, and which source lines are at this address".
#pragma once

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gtap/readers/symbolizer.h"

namespace gtap::readers::symbolize {

class DebugFileSearch;

class DwarfModule {
 public:
  // Opens `file` at its link-time addresses, so lookups take ELF virtual
  // addresses. Its DWARF, when not inside it, is found through `search`
  // (which must outlive the module) and then the usual system places.
  // Returns null with `error` set when the file cannot be read as ELF.
  static std::unique_ptr<DwarfModule> open(const std::string& file, const DebugFileSearch& search,
                                           std::string& error);
  ~DwarfModule();
  DwarfModule(const DwarfModule&) = delete;
  DwarfModule& operator=(const DwarfModule&) = delete;

  // Lower-case hex of the file's build-id note; empty when it has none.
  const std::string& buildId() const { return buildId_; }

  // Frames for the instruction at `elfAddress`, innermost first.
  std::vector<SourceFrame> frames(uint64_t elfAddress);

 private:
  struct Location {
    std::string file;
    int line = 0;
    int column = 0;
  };
  // Address range of one compilation unit.
  struct UnitRange {
    Dwarf_Addr low;
    Dwarf_Addr high;
    Dwarf_Die unit;
  };

  DwarfModule(Dwfl* dwfl, Dwfl_Module* module);
  void loadDwarf();
  void indexUnits();
  const Dwarf_Die* unitContaining(Dwarf_Addr pc) const;
  void collectScopes(Dwarf_Die unit, Dwarf_Addr pc);
  Location lineAt(Dwarf_Die* unit, Dwarf_Addr pc);
  Location callSiteOf(Dwarf_Die* scopeUnit, Dwarf_Die* inlined);
  std::string symbolName(uint64_t elfAddress);

  Dwfl* dwfl_;
  Dwfl_Module* module_;
  std::string buildId_;
  bool dwarfLoaded_ = false;
  Dwarf* dwarf_ = nullptr;   // owned by dwfl_; null when the module has no DWARF
  Dwarf_Addr dwarfBias_ = 0; // ELF address minus DWARF address (non-zero only for prelinked files)
  std::vector<UnitRange> units_;          // sorted by low
  std::vector<Dwarf_Addr> highestSoFar_;  // max of units_[0..i].high, for overlapping units
  std::vector<Dwarf_Die> scopes_;         // scratch: DIEs containing the pc, outermost first
};

}  // namespace gtap::readers::symbolize
