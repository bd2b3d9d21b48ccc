#include "function_names.h"

#include <cxxabi.h>
#include <dwarf.h>

#include <cstdlib>

namespace gtap::readers::symbolize {

namespace {

std::string demangle(const char* name) {
  if (name[0] == '_' && name[1] == 'Z') {
    int status = 0;
    char* readable = abi::__cxa_demangle(name, nullptr, nullptr, &status);
    if (readable != nullptr && status == 0) {
      std::string result(readable);
      std::free(readable);
      return result;
    }
    std::free(readable);
  }
  return name;
}

// Definitions and inlined instances point at the declaration, which sits in
// its namespace or class and carries the name.
Dwarf_Die declarationOf(Dwarf_Die die) {
  for (int hop = 0; hop < 16; ++hop) {
    Dwarf_Attribute attr;
    Dwarf_Attribute* ref = dwarf_attr(&die, DW_AT_abstract_origin, &attr);
    if (ref == nullptr) ref = dwarf_attr(&die, DW_AT_specification, &attr);
    Dwarf_Die next;
    if (ref == nullptr || dwarf_formref_die(ref, &next) == nullptr) break;
    die = next;
  }
  return die;
}

}  // namespace

const std::string* FunctionNames::fromLinkageName(Dwarf_Die* function) {
  auto [cached, inserted] = linkageByDie_.try_emplace(function->addr, nullptr);
  if (inserted) {
    // Found through abstract origins and specifications, where inlined and
    // out-of-class definitions keep it.
    Dwarf_Attribute attr;
    const char* linkage =
        dwarf_formstring(dwarf_attr_integrate(function, DW_AT_linkage_name, &attr));
    if (linkage == nullptr)
      linkage = dwarf_formstring(dwarf_attr_integrate(function, DW_AT_MIPS_linkage_name, &attr));
    // Only a mangled one says more than DW_AT_name; a C function's is an
    // assembler label such as glibc's "__GI_" aliases.
    if (linkage != nullptr && linkage[0] == '_' && linkage[1] == 'Z')
      cached->second = &ofSymbol(linkage);
  }
  return cached->second;
}

const std::string& FunctionNames::qualified(Dwarf_Die* function) {
  auto [cached, inserted] = qualifiedByDie_.try_emplace(function->addr);
  std::string& entry = cached->second;  // stays valid while the map grows
  if (!inserted) return entry;
  // The empty entry stays while the scopes are worked out, so DWARF whose
  // references loop back here ends instead of recursing forever.
  Dwarf_Die declaration = declarationOf(*function);
  const char* name = dwarf_diename(&declaration);
  if (name != nullptr) entry = enclosingScopes(&declaration) + name;
  return entry;
}

const std::string& FunctionNames::ofSymbol(const char* name) {
  auto [cached, inserted] = demangledByName_.try_emplace(name);
  if (inserted) cached->second = demangle(name);
  return cached->second;
}

// libdw has no parent links: descend from the unit, at each level into the
// child whose extent (up to its next sibling) holds the DIE's offset.
std::string FunctionNames::enclosingScopes(Dwarf_Die* die) {
  Dwarf_Die unit;
  if (dwarf_diecu(die, &unit, nullptr, nullptr) == nullptr) return {};
  const Dwarf_Off target = dwarf_dieoffset(die);
  std::string prefix;
  Dwarf_Die parent = unit;
  for (int depth = 0; depth < 64; ++depth) {
    Dwarf_Die holder;
    if (dwarf_child(&parent, &holder) != 0) return {};
    for (;;) {
      Dwarf_Die sibling;
      if (dwarf_siblingof(&holder, &sibling) != 0 || dwarf_dieoffset(&sibling) > target) break;
      holder = sibling;
    }
    if (dwarf_dieoffset(&holder) > target) return {};
    if (dwarf_dieoffset(&holder) == target) return prefix;
    const char* name = dwarf_diename(&holder);
    switch (dwarf_tag(&holder)) {
      case DW_TAG_namespace:
        prefix += name != nullptr ? name : "(anonymous namespace)";
        prefix += "::";
        break;
      case DW_TAG_class_type:
      case DW_TAG_structure_type:
      case DW_TAG_union_type:
      case DW_TAG_interface_type:
      case DW_TAG_module:
        if (name != nullptr) prefix += std::string(name) + "::";
        break;
      case DW_TAG_subprogram:
        // A local class or lambda: named after the function it is defined in.
        prefix = qualified(&holder) + "::";
        break;
      default:
        break;
    }
    parent = holder;
  }
  return {};
}

}  // namespace gtap::readers::symbolize
