// Offline symbolisation: turns a runtime address recorded in a capture, plus
// the module it fell in (path, GNU build-id, load bias), into source frames
// with inlined functions expanded. Files are only used when their build-id
// matches the captured one, so a rebuilt binary never yields wrong names.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace gtap::readers {

struct ModuleRef {
  std::string path;       // as mapped in the captured process
  std::string buildId;    // lower-case hex of the GNU build-id note, may be empty
  uint64_t loadBias = 0;  // runtime address minus the ELF's virtual address (l_addr / dlpi_addr)
};

struct SourceFrame {
  std::string function;  // demangled when C++; empty when unknown
  std::string file;      // empty when no line info
  int line = 0;
  int column = 0;
  bool inlined = false;  // true for frames of functions inlined into the next one
};

struct SymbolizeResult {
  // Innermost first; the last one is the real (non-inlined) function. Empty
  // when the module could not be used, or when it holds neither a symbol nor
  // line information for the address.
  std::vector<SourceFrame> frames;
  // Non-empty when the module could not be used, e.g. file missing or
  // build-id differs; it names the path and both build-ids.
  std::string problem;
};

// Opens each module once and remembers every answer, so symbolising the
// addresses of a large capture costs one DWARF lookup per distinct address.
// Not thread-safe: use one per thread.
class Symbolizer {
 public:
  // Extra directories holding separate debug files, looked up by build-id as
  // DIR/xx/yyyy.debug (like /usr/lib/debug/.build-id; DIR/.build-id/xx/yyyy.debug
  // is tried too), before the system one.
  explicit Symbolizer(std::vector<std::string> debugDirectories = {});
  ~Symbolizer();
  Symbolizer(const Symbolizer&) = delete;
  Symbolizer& operator=(const Symbolizer&) = delete;

  // `address` is a runtime address from the captured process. For return
  // addresses (every frame but the first of a stack) pass isReturnAddress=true
  // so the call instruction is looked up, not the one after it.
  SymbolizeResult symbolize(const ModuleRef& module, uint64_t address, bool isReturnAddress);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// The ELF address and size of the function named `name` in the ELF file at
// `path` (its symbol table, else its dynamic one; a C++ function with internal
// linkage matches by its unmangled name). False when there is none.
bool findFunctionSymbol(const std::string& path, const std::string& name, uint64_t& address, uint64_t& size);

}  // namespace gtap::readers
