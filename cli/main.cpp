#include <iostream>
#include <map>
#include <string>

#include "commands.h"

int main(int argc, char** argv) {
  CLI::App app{"gtap: capture what a program asks of its GPU runtime, then report and replay it"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "gtap " GTAP_VERSION);
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
  add(&gtap::cli::addMemoryCommand);
  add(&gtap::cli::addSummaryCommand);
  add(&gtap::cli::addExportCommand);
  add(&gtap::cli::addExplainCommand);
  add(&gtap::cli::addExecutablesCommand);
  add(&gtap::cli::addDumpCommand);
  add(&gtap::cli::addReplayCommand);
  add(&gtap::cli::addBenchCommand);
  try {
    if (argc > 1 && std::string(argv[1]) == "run") argc = gtap::cli::splitRunArguments(argc, argv);
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  for (auto& [sub, action] : actions)
    if (sub->parsed()) return action();
  return 2;
}
