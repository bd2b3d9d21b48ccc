#include "dwarf_module.h"

#include <dwarf.h>
#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <utility>

#include "debug_file_search.h"
#include "gtap/format/regular_file.h"

namespace gtap::readers::symbolize {

namespace {

// libdwfl asks this callback both for a module's own debug file and for the
// dwz-style supplementary file that debug file refers to. Only the first is
// looked up by the module's build-id; it is recognisable because libdwfl
// passes the main file's .gnu_debuglink (or none) for it, and the
// supplementary file's name otherwise.
bool isLookupForModuleItself(Dwfl_Module* module, const char* debuglinkFile, GElf_Word crc) {
  GElf_Addr bias = 0;
  Elf* mainElf = dwfl_module_getelf(module, &bias);
  GElf_Word ownCrc = 0;
  const char* ownLink = mainElf != nullptr ? dwelf_elf_gnu_debuglink(mainElf, &ownCrc) : nullptr;
  if (ownLink == nullptr) return debuglinkFile == nullptr;
  return debuglinkFile != nullptr && std::strcmp(ownLink, debuglinkFile) == 0 && ownCrc == crc;
}

int findDebugInfo(Dwfl_Module* module, void** userdata, const char* moduleName, Dwarf_Addr base,
                  const char* fileName, const char* debuglinkFile, GElf_Word debuglinkCrc,
                  char** debugFileName) {
  const auto* search = static_cast<const DebugFileSearch*>(*userdata);
  if (search != nullptr && isLookupForModuleItself(module, debuglinkFile, debuglinkCrc)) {
    const unsigned char* bits = nullptr;
    GElf_Addr noteAddress = 0;
    int length = dwfl_module_build_id(module, &bits, &noteAddress);
    if (length > 0) {
      std::string found = search->find(hexBuildId(bits, static_cast<size_t>(length)));
      struct stat st {};
      std::string error;
      int fd = found.empty() ? -1 : format::openRegularFile(found, st, error);
      if (fd >= 0) {
        std::free(*debugFileName);
        *debugFileName = strdup(found.c_str());
        return fd;
      }
    }
  }
  // .gnu_debuglink next to the file, the system debug tree, supplementary files.
  return dwfl_standard_find_debuginfo(module, userdata, moduleName, base, fileName, debuglinkFile,
                                      debuglinkCrc, debugFileName);
}

const Dwfl_Callbacks kCallbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = findDebugInfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = nullptr,
};

bool isFunctionScope(int tag) {
  return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine || tag == DW_TAG_entry_point;
}

// Tags whose DIEs can cover instructions and nest inlined functions; testing
// only these skips the many variables, parameters and call sites.
bool canHoldCode(int tag) {
  switch (tag) {
    case DW_TAG_lexical_block:
    case DW_TAG_inlined_subroutine:
    case DW_TAG_subprogram:
    case DW_TAG_entry_point:
    case DW_TAG_try_block:
    case DW_TAG_catch_block:
    case DW_TAG_with_stmt:
      return true;
    default:
      return false;
  }
}

}  // namespace

std::unique_ptr<DwarfModule> DwarfModule::open(const std::string& file,
                                               const DebugFileSearch& search, std::string& error) {
  Dwfl* dwfl = dwfl_begin(&kCallbacks);
  if (dwfl == nullptr) {
    error = dwfl_errmsg(-1);
    return nullptr;
  }
  dwfl_report_begin(dwfl);
  // The path comes from a capture: a FIFO or device there is refused, not
  // waited on. libdwfl takes the descriptor over.
  struct stat st {};
  int fd = format::openRegularFile(file, st, error);
  if (fd < 0) {
    dwfl_end(dwfl);
    return nullptr;
  }
  // Base 0 with p_vaddr added: module addresses are the ELF's own virtual addresses.
  Dwfl_Module* module = dwfl_report_elf(dwfl, file.c_str(), file.c_str(), fd, 0, true);
  dwfl_report_end(dwfl, nullptr, nullptr);
  if (module == nullptr) {
    error = dwfl_errmsg(-1);
    dwfl_end(dwfl);
    return nullptr;
  }
  void** userdata = nullptr;
  dwfl_module_info(module, &userdata, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
  *userdata = const_cast<DebugFileSearch*>(&search);
  return std::unique_ptr<DwarfModule>(new DwarfModule(dwfl, module));
}

DwarfModule::DwarfModule(Dwfl* dwfl, Dwfl_Module* module) : dwfl_(dwfl), module_(module) {
  const unsigned char* bits = nullptr;
  GElf_Addr noteAddress = 0;
  int length = dwfl_module_build_id(module_, &bits, &noteAddress);
  if (length > 0) buildId_ = hexBuildId(bits, static_cast<size_t>(length));
}

DwarfModule::~DwarfModule() { dwfl_end(dwfl_); }

// Unit ranges come from each unit's own DIE rather than .debug_aranges,
// which some compilers (clang by default) do not emit.
void DwarfModule::loadDwarf() {
  if (dwarfLoaded_) return;
  dwarfLoaded_ = true;
  Dwarf* dwarf = dwfl_module_getdwarf(module_, &dwarfBias_);
  if (dwarf == nullptr) return;
  loadCodeRanges();
  Dwarf_CU* unit = nullptr;
  Dwarf_CU* next = nullptr;
  Dwarf_Half version = 0;
  uint8_t unitType = 0;
  Dwarf_Die unitDie;
  while (dwarf_get_units(dwarf, unit, &next, &version, &unitType, &unitDie, nullptr) == 0) {
    unit = next;
    if (unitType != DW_UT_compile && unitType != DW_UT_skeleton) continue;
    bool hasCode = false;
    Dwarf_Addr base = 0, low = 0, high = 0;
    ptrdiff_t offset = 0;
    while ((offset = dwarf_ranges(&unitDie, offset, &base, &low, &high)) > 0) {
      if (!isCode(low)) continue;
      unitByAddress_.add(low, high, units_.size());
      hasCode = true;
    }
    if (hasCode) {
      Unit& added = units_.emplace_back();
      added.lineUnit = unitDie;
      added.scopeUnit = unitDie;
      Dwarf_Attribute attr;
      if (const char* dir = dwarf_formstring(dwarf_attr(&unitDie, DW_AT_comp_dir, &attr)))
        added.compilationDirectory = dir;
    }
  }
  unitByAddress_.finish();
}

// A function the linker dropped (an inline or template function emitted by
// several objects, kept once) still has its DWARF in the objects whose copy
// was dropped. GNU ld points that DWARF at the kept copy when both copies
// have the same size and at address 0 otherwise (objects built with other
// options: optimisation, sanitizers), so the copy would claim the first bytes
// of the file; other linkers use other placeholders. A range is trusted only
// where the file has code. The section headers say that exactly (a debug file
// keeps them, with their flags); without them, the executable segments.
void DwarfModule::loadCodeRanges() {
  GElf_Addr bias = 0;
  Elf* elf = dwfl_module_getelf(module_, &bias);
  if (elf == nullptr) return;
  Elf_Scn* section = nullptr;
  while ((section = elf_nextscn(elf, section)) != nullptr) {
    GElf_Shdr header;
    if (gelf_getshdr(section, &header) == nullptr) continue;
    if ((header.sh_flags & SHF_ALLOC) && (header.sh_flags & SHF_EXECINSTR) && header.sh_size > 0)
      codeRanges_.emplace_back(header.sh_addr + bias, header.sh_addr + header.sh_size + bias);
  }
  size_t segments = 0;
  if (codeRanges_.empty() && elf_getphdrnum(elf, &segments) == 0) {
    for (size_t i = 0; i < segments; ++i) {
      GElf_Phdr segment;
      if (gelf_getphdr(elf, static_cast<int>(i), &segment) != nullptr &&
          segment.p_type == PT_LOAD && (segment.p_flags & PF_X) && segment.p_memsz > 0)
        codeRanges_.emplace_back(segment.p_vaddr + bias, segment.p_vaddr + segment.p_memsz + bias);
    }
  }
  std::sort(codeRanges_.begin(), codeRanges_.end());
}

// Whether a DWARF range starting at `low` starts in the file's code. A file
// that shows no code at all (no sections, no segments) is taken at its word.
bool DwarfModule::isCode(Dwarf_Addr low) const {
  if (codeRanges_.empty()) return true;
  const uint64_t address = low + dwarfBias_;
  auto after = std::upper_bound(
      codeRanges_.begin(), codeRanges_.end(), address,
      [](uint64_t a, const std::pair<uint64_t, uint64_t>& range) { return a < range.first; });
  return after != codeRanges_.begin() && address < std::prev(after)->second;
}

// Definitions with code sit directly under the unit (GCC and clang link C++
// member and namespace functions to their declarations by
// DW_AT_specification), or inside a Fortran module or, from other producers,
// a namespace.
void DwarfModule::indexFunctions(Unit& unit) {
  unit.indexed = true;
  // With split DWARF the functions live in the .dwo unit, the line table for
  // addresses in the skeleton.
  uint8_t unitType = 0;
  Dwarf_Die split{};
  if (dwarf_cu_info(unit.lineUnit.cu, nullptr, &unitType, nullptr, &split, nullptr, nullptr,
                    nullptr) == 0 &&
      unitType == DW_UT_skeleton && split.cu != nullptr)
    unit.scopeUnit = split;
  std::vector<Dwarf_Die> containers{unit.scopeUnit};
  while (!containers.empty()) {
    Dwarf_Die container = containers.back();
    containers.pop_back();
    Dwarf_Die child;
    if (dwarf_child(&container, &child) != 0) continue;
    for (;;) {
      const int tag = dwarf_tag(&child);
      if (tag == DW_TAG_module || tag == DW_TAG_namespace) {
        containers.push_back(child);
      } else if (isFunctionScope(tag)) {
        Dwarf_Addr base = 0, low = 0, high = 0;
        ptrdiff_t offset = 0;
        while ((offset = dwarf_ranges(&child, offset, &base, &low, &high)) > 0)
          if (isCode(low)) unit.functions.add(low, high, child);
      }
      Dwarf_Die sibling;
      if (dwarf_siblingof(&child, &sibling) != 0) break;
      child = sibling;
    }
  }
  unit.functions.finish();
}

// The physical nesting at `pc` inside a top-level function: the functions
// inlined into it, and blocks. Unlike dwarf_getscopes, which continues into
// the abstract definition of the innermost inlined function, this keeps every
// concrete inlined instance.
void DwarfModule::collectScopes(const Dwarf_Die& function, Dwarf_Addr pc) {
  scopes_.clear();
  scopes_.push_back(function);
  Dwarf_Die parent = function;
  for (;;) {
    Dwarf_Die child;
    if (dwarf_child(&parent, &child) != 0) return;
    bool descended = false;
    for (;;) {
      if (canHoldCode(dwarf_tag(&child)) && dwarf_haspc(&child, pc) > 0) {
        scopes_.push_back(child);
        parent = child;
        descended = true;
        break;
      }
      Dwarf_Die sibling;
      if (dwarf_siblingof(&child, &sibling) != 0) break;
      child = sibling;
    }
    if (!descended) return;
  }
}

// libdw leaves a file whose line-table directory is relative as it is,
// though DWARF makes such directories relative to the compilation directory
// (distribution builds record "../include" under a compilation directory of
// "./stdlib"); files in that directory itself already start with it.
std::string DwarfModule::sourcePath(const Unit& unit, const char* file) {
  std::string path = file;
  const std::string& dir = unit.compilationDirectory;
  if (path.empty() || path.front() == '/' || dir.empty()) return path;
  if (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 && path[dir.size()] == '/')
    return path;
  return dir + "/" + path;
}

DwarfModule::Location DwarfModule::lineAt(Unit& unit, Dwarf_Addr pc) {
  Location location;
  Dwarf_Line* line = dwarf_getsrc_die(&unit.lineUnit, pc);
  if (line == nullptr) return location;
  if (const char* file = dwarf_linesrc(line, nullptr, nullptr))
    location.file = sourcePath(unit, file);
  dwarf_lineno(line, &location.line);
  dwarf_linecol(line, &location.column);
  return location;
}

DwarfModule::Location DwarfModule::callSiteOf(Unit& unit, Dwarf_Die* inlined) {
  Location location;
  Dwarf_Attribute attr;
  Dwarf_Word value = 0;
  if (dwarf_formudata(dwarf_attr(inlined, DW_AT_call_file, &attr), &value) == 0) {
    Dwarf_Files* files = nullptr;
    size_t count = 0;
    // The file table numbers DW_AT_call_file the same way for DWARF 4 (from 1) and 5 (from 0).
    if (dwarf_getsrcfiles(&unit.scopeUnit, &files, &count) == 0 && value < count)
      if (const char* file = dwarf_filesrc(files, value, nullptr, nullptr))
        location.file = sourcePath(unit, file);
  }
  if (dwarf_formudata(dwarf_attr(inlined, DW_AT_call_line, &attr), &value) == 0)
    location.line = static_cast<int>(value);
  if (dwarf_formudata(dwarf_attr(inlined, DW_AT_call_column, &attr), &value) == 0)
    location.column = static_cast<int>(value);
  return location;
}

SourceFrame DwarfModule::frameAt(Location&& location) {
  SourceFrame frame;
  frame.file = std::move(location.file);
  frame.line = location.line;
  frame.column = location.column;
  return frame;
}

// libdwfl's own address-to-symbol lookup scans the whole table each time;
// a sorted index keeps a module with many distinct addresses cheap.
void DwarfModule::loadSymbols() {
  if (symbolsLoaded_) return;
  symbolsLoaded_ = true;
  struct Function {
    GElf_Addr start;
    GElf_Addr end;         // 0 while unknown (a symbol without size)
    GElf_Addr sectionEnd;  // how far a size-less symbol may reach
    int preference;        // among aliases at one address, the highest is named
    const char* name;
  };
  std::vector<Function> functions;
  const int count = dwfl_module_getsymtab(module_);
  for (int i = 1; i < count; ++i) {
    GElf_Sym symbol;
    GElf_Addr address = 0;
    GElf_Word sectionIndex = 0;
    Elf* elf = nullptr;
    Dwarf_Addr bias = 0;
    const char* name =
        dwfl_module_getsym_info(module_, i, &symbol, &address, &sectionIndex, &elf, &bias);
    if (name == nullptr || *name == '\0' || sectionIndex == SHN_UNDEF) continue;
    const int type = GELF_ST_TYPE(symbol.st_info);
    if (type != STT_FUNC && type != STT_GNU_IFUNC) continue;
    GElf_Addr sectionEnd = 0;
    GElf_Shdr header;
    if (Elf_Scn* section = elf_getscn(elf, sectionIndex);
        section != nullptr && gelf_getshdr(section, &header) != nullptr)
      sectionEnd = header.sh_addr + header.sh_size + bias;
    const int binding = GELF_ST_BIND(symbol.st_info);
    int preference = binding == STB_GLOBAL ? 2 : binding == STB_WEAK ? 1 : 0;
    if (symbol.st_size > 0) preference += 4;  // a known extent outranks any binding
    functions.push_back(Function{address, symbol.st_size > 0 ? address + symbol.st_size : 0,
                                 sectionEnd, preference, name});
  }
  std::sort(functions.begin(), functions.end(), [](const Function& a, const Function& b) {
    return a.start != b.start ? a.start < b.start : a.preference < b.preference;
  });
  // A symbol without size (crt files, some assembly) reaches to the next
  // function, and never past its section.
  for (size_t i = 0, next = 0; i < functions.size(); ++i) {
    Function& f = functions[i];
    if (f.end != 0) continue;
    next = std::max(next, i + 1);
    while (next < functions.size() && functions[next].start <= f.start) ++next;
    f.end = next < functions.size() ? std::min(functions[next].start, f.sectionEnd) : f.sectionEnd;
  }
  for (const Function& f : functions) symbolByAddress_.add(f.start, f.end, f.name);
  symbolByAddress_.finish();
}

std::string DwarfModule::symbolName(uint64_t elfAddress) {
  loadSymbols();
  const char* const* name = symbolByAddress_.find(elfAddress);
  return name != nullptr ? names_.ofSymbol(*name) : "";
}

std::string DwarfModule::mangledSymbolName(uint64_t elfAddress) {
  loadSymbols();
  const char* const* name = symbolByAddress_.find(elfAddress);
  return name != nullptr && std::strncmp(*name, "_Z", 2) == 0 ? names_.ofSymbol(*name) : "";
}

std::vector<SourceFrame> DwarfModule::frames(uint64_t elfAddress) {
  loadDwarf();
  std::vector<SourceFrame> result;
  const Dwarf_Addr pc = elfAddress - dwarfBias_;
  const size_t* unitIndex = unitByAddress_.find(pc);
  if (unitIndex == nullptr) {
    // No DWARF here (stripped file, assembly, PLT): the symbol table may still name it.
    SourceFrame frame;
    frame.function = symbolName(elfAddress);
    if (!frame.function.empty()) result.push_back(std::move(frame));
    return result;
  }

  Unit& unit = units_[*unitIndex];
  if (!unit.indexed) indexFunctions(unit);
  Location location = lineAt(unit, pc);
  if (const Dwarf_Die* function = unit.functions.find(pc))
    collectScopes(*function, pc);
  else
    scopes_.clear();
  for (auto scope = scopes_.rbegin(); scope != scopes_.rend(); ++scope) {
    const int tag = dwarf_tag(&*scope);
    if (!isFunctionScope(tag)) continue;
    SourceFrame frame = frameAt(std::move(location));
    frame.inlined = tag == DW_TAG_inlined_subroutine;
    const std::string* linkageName = names_.fromLinkageName(&*scope);
    if (linkageName != nullptr) frame.function = *linkageName;
    // GCC gives no linkage name to C++ functions with internal linkage; their
    // symbol still has the parameter types. Inlined ones have only DWARF names.
    if (frame.function.empty() && !frame.inlined) frame.function = mangledSymbolName(elfAddress);
    if (frame.function.empty()) frame.function = names_.qualified(&*scope);
    if (!frame.inlined) {
      result.push_back(std::move(frame));
      return result;
    }
    // The function this one was inlined into is shown at the call site.
    location = callSiteOf(unit, &*scope);
    result.push_back(std::move(frame));
  }
  // Outside every DWARF function, or the chain ended in an inlined one: the
  // symbol table names the real function around the address.
  SourceFrame outer = frameAt(std::move(location));
  outer.function = symbolName(elfAddress);
  if (!outer.function.empty() || !outer.file.empty()) result.push_back(std::move(outer));
  return result;
}

}  // namespace gtap::readers::symbolize
