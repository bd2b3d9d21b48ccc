// What an ELF object asks of the loader, and which symbol versions a shared
// library defines, read with libelf: for gtap bundle (what to copy) and gtap
// run (whether the program's libraries are new enough for a bundle's
// libgtap.so).
#pragma once

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace gtap::cli {

struct ElfNeeds {
  std::vector<std::string> needed;                       // DT_NEEDED
  std::vector<std::string> searchPath;                   // DT_RUNPATH or DT_RPATH, $ORIGIN expanded
  std::map<std::string, std::set<std::string>> versions; // per library (soname), the versions required
  std::set<std::string> defines;                         // versions it defines (a library's)
};

// Reads `file`; false (with `error`) when it is not a 64-bit x86-64 ELF
// object libelf can read.
bool readElfNeeds(const std::filesystem::path& file, ElfNeeds& out, std::string& error);

}  // namespace gtap::cli
