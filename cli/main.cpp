#include <exception>
#include <iostream>
#include <map>
#include <string>

#include "commands.h"
#include "exit_status.h"
#include "help_topics.h"
#include "gtap/readers/parallel.h"
#include "gtap/readers/progress.h"

int main(int argc, char** argv) {
  CLI::App app{"gtap: capture what a program asks of its GPU runtime, then report and replay it"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "gtap " GTAP_VERSION);
  app.footer(gtap::cli::kExitStatusHelp);
  // Options of gtap itself are taken after the verb too.
  app.fallthrough();
  std::string progress = "auto";
  app.add_option("--progress", progress,
                 "auto: a progress bar on stderr for long reads when it is a terminal; always; never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  unsigned jobs = 0;
  app.add_option("-j,--jobs", jobs,
                 "Files read at once by reports (default: the machine's processors); the output is the same "
                 "whatever it is")
      ->check(CLI::Range(1u, 1024u));
  std::map<CLI::App*, gtap::cli::Action> actions;
  auto add = [&](gtap::cli::Action (*make)(CLI::App&)) {
    size_t before = app.get_subcommands({}).size();
    gtap::cli::Action action = make(app);
    auto subs = app.get_subcommands({});
    if (subs.size() > before) actions[subs.back()] = std::move(action);
  };
  add(&gtap::cli::addRunCommand);
  add(&gtap::cli::addInfoCommand);
  add(&gtap::cli::addApiCommand);
  add(&gtap::cli::addKernelsCommand);
  add(&gtap::cli::addDiffCommand);
  add(&gtap::cli::addMemoryCommand);
  add(&gtap::cli::addQueueCommand);
  add(&gtap::cli::addCommandCommand);
  add(&gtap::cli::addSummaryCommand);
  add(&gtap::cli::addExportCommand);
  add(&gtap::cli::addExplainCommand);
  add(&gtap::cli::addFlameCommand);
  add(&gtap::cli::addExecutablesCommand);
  add(&gtap::cli::addCountersCommand);
  add(&gtap::cli::addDumpCommand);
  add(&gtap::cli::addReplayCommand);
  add(&gtap::cli::addBenchCommand);
  add(&gtap::cli::addMergeCommand);
  add(&gtap::cli::addBundleCommand);
  add(&gtap::cli::addHelpCommand);
  // The playbook of every verb above, for people and agents.
  if (argc == 2 && std::string(argv[1]) == "--agents_md") {
    std::cout << gtap::cli::agentsMarkdown(app);
    return gtap::cli::kExitSuccess;
  }
  // What follows `run`'s options is the program's: nothing falls through.
  app.get_subcommand("run")->fallthrough(false);
  try {
    if (argc > 1 && std::string(argv[1]) == "run") argc = gtap::cli::splitRunArguments(argc, argv);
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version print and succeed; every other parse error is a
    // usage error, whatever code CLI11 gives its kind.
    int code = app.exit(e);
    return code == static_cast<int>(CLI::ExitCodes::Success) ? gtap::cli::kExitSuccess : gtap::cli::kExitUsage;
  }
  gtap::readers::ProgressMode mode = gtap::readers::ProgressMode::automatic;
  gtap::readers::parseProgressMode(progress, mode);
  gtap::readers::ReadProgress shown(mode);
  gtap::readers::setReadJobs(jobs);
  try {
    for (auto& [sub, action] : actions)
      if (sub->parsed()) return action();
  } catch (const std::exception& e) {
    // Caught so that the stack unwinds: objects such as an output file's
    // temporary file clean up after themselves.
    std::cerr << "gtap: " << e.what() << "\n";
    return gtap::cli::kExitError;
  }
  return gtap::cli::kExitUsage;
}
