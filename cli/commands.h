// The gtap subcommands. Each registers its options on the app and returns the
// function that runs it; main() only wires them together.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>

namespace gtap::cli {

using Action = std::function<int()>;

Action addRunCommand(CLI::App& app);
// For `gtap run`: everything from the program's name on (or after "--") is the
// program's, never parsed as gtap options. Returns how many leading arguments
// are gtap's.
int splitRunArguments(int argc, char** argv);
Action addInfoCommand(CLI::App& app);
Action addApiCommand(CLI::App& app);
Action addKernelsCommand(CLI::App& app);
Action addDiffCommand(CLI::App& app);
Action addMemoryCommand(CLI::App& app);
Action addQueueCommand(CLI::App& app);
Action addCommandCommand(CLI::App& app);
Action addSummaryCommand(CLI::App& app);
Action addExportCommand(CLI::App& app);
Action addExplainCommand(CLI::App& app);
Action addFlameCommand(CLI::App& app);
Action addExecutablesCommand(CLI::App& app);
Action addCountersCommand(CLI::App& app);
Action addDumpCommand(CLI::App& app);
Action addReplayCommand(CLI::App& app);
Action addBenchCommand(CLI::App& app);
Action addHelpCommand(CLI::App& app);
Action addBundleCommand(CLI::App& app);
Action addMergeCommand(CLI::App& app);

}  // namespace gtap::cli
