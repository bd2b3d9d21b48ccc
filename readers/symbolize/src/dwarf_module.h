// One ELF file opened through libdwfl, answering "which functions, inlined
// ones included, and which source lines are at this address".
#pragma once

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "function_names.h"
#include "gtap/readers/symbolizer.h"
#include "range_index.h"

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
  // A compilation unit; its top-level functions are indexed on first use,
  // since walking a unit's DIEs for every address would cost as much as the
  // unit is large (a C++ unit holds thousands of header declarations).
  struct Unit {
    Dwarf_Die lineUnit;   // owns the line table for addresses
    Dwarf_Die scopeUnit;  // holds the functions (differs for split DWARF)
    std::string compilationDirectory;
    bool indexed = false;
    RangeIndex<Dwarf_Die> functions;
  };

  DwarfModule(Dwfl* dwfl, Dwfl_Module* module);
  void loadDwarf();
  void loadCodeRanges();
  bool isCode(Dwarf_Addr low) const;
  void loadSymbols();
  void indexFunctions(Unit& unit);
  void collectScopes(const Dwarf_Die& function, Dwarf_Addr pc);
  static std::string sourcePath(const Unit& unit, const char* file);
  Location lineAt(Unit& unit, Dwarf_Addr pc);
  Location callSiteOf(Unit& unit, Dwarf_Die* inlined);
  static SourceFrame frameAt(Location&& location);
  std::string symbolName(uint64_t elfAddress);
  std::string mangledSymbolName(uint64_t elfAddress);  // empty unless a C++ symbol

  Dwfl* dwfl_;
  Dwfl_Module* module_;
  std::string buildId_;

  bool dwarfLoaded_ = false;
  Dwarf_Addr dwarfBias_ = 0;  // ELF address minus DWARF address (non-zero only for prelinked files)
  std::vector<Unit> units_;
  // The file's executable sections, sorted, in ELF addresses. DWARF ranges
  // starting elsewhere describe code the linker discarded (see isCode).
  std::vector<std::pair<uint64_t, uint64_t>> codeRanges_;
  RangeIndex<size_t> unitByAddress_;  // index into units_

  bool symbolsLoaded_ = false;
  RangeIndex<const char*> symbolByAddress_;  // names live in the ELF files dwfl_ keeps open

  FunctionNames names_;
  std::vector<Dwarf_Die> scopes_;  // scratch: DIEs containing the pc, outermost first
};

}  // namespace gtap::readers::symbolize
