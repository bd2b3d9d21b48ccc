// gtap explain: a short account for a person of where the device's time went,
// when it sat idle and what the host did meanwhile, and which launches were
// slowest and from where (readers/explain.h writes it).
#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <string>

#include "commands.h"
#include "gtap/readers/explain.h"
#include "open_captures.h"
#include "symbols.h"

namespace gtap::cli {

namespace {

struct ExplainOptions {
  std::vector<std::string> files;
  size_t top = 3;
  std::vector<std::string> debugDirs;
  std::string format = "text";
};

int explain(const ExplainOptions& o) {
  readers::OutputFormat format;
  if (!readers::parseOutputFormat(o.format, format) || format == readers::OutputFormat::csv) {
    std::cerr << "gtap explain: --format must be text or jsonl\n";
    return 2;
  }
  auto opened = openCaptures(o.files, "explain");
  if (opened.captures.empty()) return 1;
  readers::Symbolizer symbolizer(debugDirectories(o.debugDirs));
  // One capture at a time, its device operations read a batch at a time.
  for (const auto& c : opened.captures) readers::writeExplanation(*c, o.top, symbolizer, std::cout, format);
  return opened.failures ? 1 : 0;
}

}  // namespace

Action addExplainCommand(CLI::App& app) {
  auto o = std::make_shared<ExplainOptions>();
  auto* cmd = app.add_subcommand("explain", "Where device time went, idle gaps and what the host did, the slowest launches and their stacks");
  cmd->add_option("files", o->files, "Capture files")->required();
  cmd->add_option("--top", o->top, "How many kernels, gaps and launches to name");
  cmd->add_option("--format", o->format, "text or jsonl");
  cmd->add_option("--debug-dir", o->debugDirs, "Directories of separate debug files (by build-id)");
  return [o] { return explain(*o); };
}

}  // namespace gtap::cli
