// Readable names for DWARF functions and ELF symbols, each worked out once:
// a module's addresses share few functions, and demangling is not cheap.
#pragma once

#include <elfutils/libdw.h>

#include <string>
#include <unordered_map>

namespace gtap::readers::symbolize {

class FunctionNames {
 public:
  // The demangled C++ linkage name of a subprogram or inlined instance
  // ("ns::Class::method(int)"), or null when the compiler gave none (as GCC
  // does for functions with internal linkage) or it is not a mangled name.
  const std::string* fromLinkageName(Dwarf_Die* function);

  // The declaration's enclosing namespaces and classes and its own name,
  // without parameters: "(anonymous namespace)::Helper::run". Empty if unnamed.
  const std::string& qualified(Dwarf_Die* function);

  // A symbol table name, demangled when C++.
  const std::string& ofSymbol(const char* name);

 private:
  std::string enclosingScopes(Dwarf_Die* die);

  // Keyed by where the DIE or string lies in the mapped file, which is
  // unique across the module's main, debug and supplementary files.
  std::unordered_map<const void*, const std::string*> linkageByDie_;
  std::unordered_map<const void*, std::string> qualifiedByDie_;
  std::unordered_map<const char*, std::string> demangledByName_;
};

}  // namespace gtap::readers::symbolize
