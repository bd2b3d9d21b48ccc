#include "gtap/readers/symbolizer.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <string_view>
#include <unordered_map>
#include <utility>

#include "debug_file_search.h"
#include "dwarf_module.h"

namespace gtap::readers {

using symbolize::DebugFileSearch;
using symbolize::DwarfModule;

namespace {

struct ModuleKeyView {
  std::string_view path;
  std::string_view buildId;
  bool operator==(const ModuleKeyView&) const = default;
};

struct ModuleKey {
  std::string path;
  std::string buildId;
  operator ModuleKeyView() const { return {path, buildId}; }
};

// Transparent, so a lookup by the caller's strings allocates nothing.
struct ModuleKeyHash {
  using is_transparent = void;
  size_t operator()(ModuleKeyView key) const {
    size_t h = std::hash<std::string_view>{}(key.path);
    return h ^ (std::hash<std::string_view>{}(key.buildId) + 0x9e3779b97f4a7c15ull + (h << 6) +
                (h >> 2));
  }
};

struct ModuleKeyEqual {
  using is_transparent = void;
  bool operator()(ModuleKeyView a, ModuleKeyView b) const { return a == b; }
};

std::string describeBuildId(const std::string& id) { return id.empty() ? "none" : id; }

}  // namespace

struct Symbolizer::State {
  // One captured module: the file that stands for it, or why there is none.
  struct Module {
    std::unique_ptr<DwarfModule> dwarf;
    std::string problem;
    std::unordered_map<uint64_t, std::vector<SourceFrame>> framesByElfAddress;
  };

  explicit State(std::vector<std::string> debugDirectories) : search(std::move(debugDirectories)) {}

  Module& moduleFor(const ModuleRef& ref) {
    auto found = modules.find(ModuleKeyView{ref.path, ref.buildId});
    if (found != modules.end()) return *found->second;
    auto inserted = modules.emplace(ModuleKey{ref.path, ref.buildId}, open(ref));
    return *inserted.first->second;
  }

  std::unique_ptr<Module> open(const ModuleRef& ref) {
    auto module = std::make_unique<Module>();
    const bool exists = ::access(ref.path.c_str(), F_OK) == 0;
    std::string error;
    std::string fileBuildId;
    bool readable = false;
    if (exists) {
      std::unique_ptr<DwarfModule> file = DwarfModule::open(ref.path, search, error);
      if (file != nullptr) {
        // Without a captured build-id there is nothing to check against.
        if (ref.buildId.empty() || file->buildId() == ref.buildId) {
          module->dwarf = std::move(file);
          return module;
        }
        readable = true;
        fileBuildId = file->buildId();
      }
    }
    // The file is gone or is not the one the process ran: only a debug file
    // carrying the captured build-id describes the code that ran.
    if (!ref.buildId.empty()) {
      std::string debugFile = search.find(ref.buildId);
      if (!debugFile.empty()) {
        std::string debugError;
        std::unique_ptr<DwarfModule> debug = DwarfModule::open(debugFile, search, debugError);
        if (debug != nullptr && debug->buildId() == ref.buildId) {
          module->dwarf = std::move(debug);
          return module;
        }
      }
    }

    const std::string captured = describeBuildId(ref.buildId);
    std::string& problem = module->problem;
    if (!exists)
      problem = ref.path + ": no such file (captured build-id " + captured + ")";
    else if (!readable)
      problem =
          ref.path + ": cannot be read as ELF: " + error + " (captured build-id " + captured + ")";
    else
      problem = ref.path + ": build-id " + describeBuildId(fileBuildId) +
                " differs from the captured build-id " + captured +
                ": the file changed since the capture";
    if (ref.buildId.empty())
      problem += "; without a captured build-id no debug file can stand in for it";
    else
      problem += "; no debug file with build-id " + ref.buildId + " in " + search.describe();
    return module;
  }

  DebugFileSearch search;
  std::unordered_map<ModuleKey, std::unique_ptr<Module>, ModuleKeyHash, ModuleKeyEqual> modules;
};

Symbolizer::Symbolizer(std::vector<std::string> debugDirectories)
    : state_(std::make_unique<State>(std::move(debugDirectories))) {}

Symbolizer::~Symbolizer() = default;

SymbolizeResult Symbolizer::symbolize(const ModuleRef& module, uint64_t address,
                                      bool isReturnAddress) {
  State::Module& entry = state_->moduleFor(module);
  SymbolizeResult result;
  if (entry.dwarf == nullptr) {
    result.problem = entry.problem;
    return result;
  }
  // A return address follows the call; one byte back is inside the call
  // instruction on every architecture, and may belong to another inlined
  // function or line than the instruction after it.
  uint64_t elfAddress = address - module.loadBias;
  if (isReturnAddress && elfAddress > 0) --elfAddress;
  auto [cached, inserted] = entry.framesByElfAddress.try_emplace(elfAddress);
  if (inserted) cached->second = entry.dwarf->frames(elfAddress);
  result.frames = cached->second;
  return result;
}

}  // namespace gtap::readers

namespace gtap::readers {

bool findFunctionSymbol(const std::string& path, const std::string& name, uint64_t& address, uint64_t& size) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  elf_version(EV_CURRENT);
  Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
  bool found = false;
  // A C++ function with internal linkage is mangled _ZL<length><name>...
  const std::string internal = "_ZL" + std::to_string(name.size()) + name;
  for (int pass = 0; elf && pass < 2 && !found; ++pass) {
    const Elf64_Word wanted = pass == 0 ? SHT_SYMTAB : SHT_DYNSYM;
    for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn && !found; scn = elf_nextscn(elf, scn)) {
      GElf_Shdr sh;
      if (!gelf_getshdr(scn, &sh) || sh.sh_type != wanted || sh.sh_entsize == 0) continue;
      Elf_Data* data = elf_getdata(scn, nullptr);
      if (!data) continue;
      const size_t count = sh.sh_size / sh.sh_entsize;
      for (size_t i = 0; i < count && !found; ++i) {
        GElf_Sym sym;
        if (!gelf_getsym(data, static_cast<int>(i), &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
            sym.st_shndx == SHN_UNDEF)
          continue;
        const char* n = elf_strptr(elf, sh.sh_link, sym.st_name);
        if (!n || (name != n && std::string_view(n).rfind(internal, 0) != 0)) continue;
        address = sym.st_value;
        size = sym.st_size;
        found = true;
      }
    }
  }
  if (elf) elf_end(elf);
  ::close(fd);
  return found;
}

}  // namespace gtap::readers
