// Options replay and bench share: --sim, --remap OLD=NEW, --substitute SEL=PATH,
// --device N, --wait-timeout SECONDS.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include "gtap/readers/replayer.h"
#include "install_paths.h"

namespace gtap::cli {

struct ReplaySourceOptions {
  std::string file;
  bool sim = false;
  std::vector<std::string> remaps;
  std::vector<std::string> substitutions;
  int64_t device = -1;  // unset
  double waitTimeout = 60;

  void add(CLI::App* cmd) {
    cmd->add_option("file", file, "Capture file holding a replay stream (gtap run --mode=replay)")
        ->required();
    cmd->add_flag("--sim", sim,
                  "Use gtap's simulated devices (a Level Zero driver and an HSA runtime) instead of real ones. On "
                  "them, device code is host code: replaying runs the machine code the capture holds, like running a "
                  "program, so never use --sim with a capture you do not trust");
    cmd->add_option("--remap", remaps, "OLD=NEW: read external files under path prefix OLD from NEW instead (repeatable)");
    cmd->add_option("--substitute", substitutions,
                    "SELECTOR=PATH: replay with the module binary or HSA code object at PATH instead of the captured "
                    "one; SELECTOR is a module or code object id (as gtap dump shows), a kernel name (its module or "
                    "code object), or all (repeatable). An HSA replacement must keep each dispatched kernel's ABI");
    cmd->add_option("--device", device,
                    "HSA: replay the first captured GPU agent on this GPU agent of the runtime (counted from 0 in "
                    "hsa_iterate_agents order); it must have the captured ISA. Default: each captured GPU agent on "
                    "the next unused one with its ISA")
        ->check(CLI::Range(int64_t{0}, int64_t{UINT32_MAX}));
    cmd->add_option("--wait-timeout", waitTimeout,
                    "HSA: seconds a signal wait (or a full queue) may take before the replay gives up, naming what "
                    "it waited for (default 60)")
        ->check(CLI::Range(0.001, 1e6));
  }

  // --sim: the Level Zero loader pointed at gtap's simulated driver, replay
  // at its simulated HSA runtime. False (said on stderr) when they are not
  // there.
  bool useSimulatedRuntimes(readers::ReplayOptions& out, const char* verb) const {
    if (!sim) return true;
    std::string error;
    if (!useSimulatedZeDriver(error) || !simulatedHsaRuntime(out.hsaRuntime, error)) {
      std::cerr << "gtap " << verb << " --sim: " << error << "\n";
      return false;
    }
    return true;
  }

  // Fills `out`; false (with a message naming the option) for a malformed
  // one, or a --substitute PATH that cannot be a module (checked without
  // reading it): usage errors.
  bool toReplayOptions(readers::ReplayOptions& out, const char* verb) const {
    if (device >= 0) out.device = static_cast<uint32_t>(device);
    out.waitTimeoutNs = static_cast<uint64_t>(waitTimeout * 1e9);
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
