// gtap replay: runs a capture's replay stream again on Level Zero and HSA,
// without the program; --verify compares every read-back with what the
// program saw.
#include <chrono>
#include <iostream>

#include "commands.h"
#include "exit_status.h"
#include "gtap/readers/replay_stream.h"
#include "gtap/readers/replayer.h"
#include "gtap/readers/table.h"
#include "install_paths.h"
#include "replay_options.h"

namespace gtap::cli {

namespace {

struct ReplayCommandOptions {
  ReplaySourceOptions source;
  bool verify = false;
};

int replay(const ReplayCommandOptions& o) {
  readers::ReplayOptions options;
  options.verify = o.verify;
  if (!o.source.toReplayOptions(options, "replay")) return kExitUsage;
  if (!o.source.useSimulatedRuntimes(options, "replay")) return kExitError;
  try {
    readers::Capture capture(o.source.file);
    readers::ReplayStream stream = readers::loadReplayStream(capture);
    readers::Replayer replayer(capture, stream, options);
    replayer.prepare();
    for (const auto& w : replayer.warnings()) std::cerr << "gtap replay: warning: " << w << "\n";
    auto start = std::chrono::steady_clock::now();
    readers::ReplayResult result = replayer.run();
    auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
    std::cout << "gtap replay: " << capture.path() << ": performed " << result.records << " records, "
              << result.kernels << " kernel launches in " << readers::formatNanoseconds(ns) << "\n";
    if (!o.verify) return kExitSuccess;
    std::cout << "verified " << result.readBacks << " read-backs, " << result.mismatches.size() << " mismatched\n";
    for (const auto& m : result.mismatches) {
      std::cout << "  read-back seq " << m.seq;
      if (m.allocation)
        std::cout << " (allocation " << m.allocation << ", bytes " << m.offset << "+" << m.size << ")";
      else
        std::cout << " (copy seq " << m.copySeq << ")";
      std::cout << ": " << m.differing << " of " << m.size << " bytes differ, the first at offset " << m.firstOffset
                << "\n";
    }
    return result.mismatches.empty() ? kExitSuccess : kExitMismatch;
  } catch (const std::exception& e) {
    std::cerr << "gtap replay: " << e.what() << "\n";
    return kExitError;
  }
}

}  // namespace

Action addReplayCommand(CLI::App& app) {
  auto o = std::make_shared<ReplayCommandOptions>();
  auto* cmd = app.add_subcommand("replay", "Run a capture's replay stream again (Level Zero, HSA), without the program");
  o->source.add(cmd);
  cmd->add_flag("--verify", o->verify, "Compare each read-back with the bytes the program saw");
  cmd->footer(
      "Replaying runs the device code the capture holds. On the simulated device (--sim) device code is host "
      "code: replaying a capture there runs the machine code in it, like running a program, so never replay a "
      "capture you do not trust with --sim.\n"
      "Exit status: 0 replayed (and every read-back matched), 1 the replay failed or the capture cannot be read, "
      "2 usage (an unknown option, a malformed --remap or --substitute), 3 a read-back differed.");
  return [o] { return replay(*o); };
}

}  // namespace gtap::cli
