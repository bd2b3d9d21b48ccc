// Options replay and bench share: --sim, --remap OLD=NEW, --substitute SEL=PATH.
#pragma once

#include <CLI/CLI.hpp>

#include <iostream>
#include <string>
#include <vector>

#include "gtap/readers/replayer.h"

namespace gtap::cli {

struct ReplaySourceOptions {
  std::string file;
  bool sim = false;
  std::vector<std::string> remaps;
  std::vector<std::string> substitutions;

  void add(CLI::App* cmd) {
    cmd->add_option("file", file, "Capture file holding a replay stream (gtap run --mode=replay)")
        ->required();
    cmd->add_flag("--sim", sim,
                  "Use gtap's simulated Level Zero driver instead of real devices. On it, device code is host code: "
                  "replaying runs the machine code the capture holds, like running a program, so never use --sim "
                  "with a capture you do not trust");
    cmd->add_option("--remap", remaps, "OLD=NEW: read external files under path prefix OLD from NEW instead (repeatable)");
    cmd->add_option("--substitute", substitutions,
                    "SELECTOR=PATH: replay with the module binary at PATH instead of the captured one; SELECTOR is a "
                    "module id (as gtap dump shows), a kernel name (its module), or all (repeatable)");
  }

  // Fills `out`; false (with a message naming the option) for a malformed
  // one, or a --substitute PATH that cannot be a module (checked without
  // reading it): usage errors.
  bool toReplayOptions(readers::ReplayOptions& out, const char* verb) const {
    for (const auto& r : remaps) {
      size_t eq = r.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == r.size()) {
        std::cerr << "gtap " << verb << ": --remap " << r
                  << ": expected OLD=NEW, both path prefixes non-empty (OLD as the capture names the file, NEW "
                     "where it is now)\n";
        return false;
      }
      out.remaps.emplace_back(r.substr(0, eq), r.substr(eq + 1));
    }
    for (const auto& s : substitutions) {
      size_t eq = s.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == s.size()) {
        std::cerr << "gtap " << verb << ": --substitute " << s << ": expected SELECTOR=PATH\n";
        return false;
      }
      try {
        readers::checkSubstituteFile(s.substr(eq + 1), "--substitute " + s);
      } catch (const readers::ReplayError& e) {
        std::cerr << "gtap " << verb << ": " << e.what() << "\n";
        return false;
      }
      out.substitutions.push_back({s.substr(0, eq), s.substr(eq + 1)});
    }
    return true;
  }
};

}  // namespace gtap::cli
