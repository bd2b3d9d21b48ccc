// gtap explain: a short account for a person of where the device's time went,
// when it sat idle and what the host did meanwhile, and which launches were
// slowest and from where (readers/explain.h writes it).
#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "commands.h"
#include "gtap/readers/explain.h"
#include "gtap/readers/parallel.h"
#include "open_captures.h"
#include "report_filter_options.h"
#include "symbols.h"

namespace gtap::cli {

namespace {

struct ExplainOptions {
  std::vector<std::string> files;
  size_t top = 3;
  std::vector<std::string> debugDirs;
  std::string format = "text";
  ReportFilterOptions filter;
};

int explain(const ExplainOptions& o) {
  readers::OutputFormat format;
  if (!readers::parseOutputFormat(o.format, format) || format == readers::OutputFormat::csv) {
    std::cerr << "gtap explain: --format must be text or jsonl\n";
    return 2;
  }
  auto opened = openCaptures(o.files, "explain", o.filter);
  if (opened.usage) return 2;
  if (opened.captures.empty()) return 1;
  // Several captures at once (gtap -j), each read a batch at a time into an
  // account of its own, written in the order given once those before it
  // are, with a symbolizer of its thread's.
  SymbolizerPool symbolizers(debugDirectories(o.debugDirs));
  std::vector<std::string> accounts(opened.captures.size());
  readers::forEachInParallel(
      opened.captures.size(),
      [&](size_t i) {
        auto symbolizer = symbolizers.borrow();
        std::ostringstream out;
        readers::writeExplanation(*opened.captures[i], o.top, *symbolizer, out, format);
        accounts[i] = std::move(out).str();
      },
      [&](size_t i) {
        std::cout << accounts[i];
        std::string().swap(accounts[i]);
        opened.captures[i]->reader().releasePages();
      });
  std::cout.flush();
  return opened.failures || !std::cout ? 1 : 0;
}

}  // namespace

Action addExplainCommand(CLI::App& app) {
  auto o = std::make_shared<ExplainOptions>();
  auto* cmd = app.add_subcommand("explain", "Where device time went, idle gaps and what the host did, the slowest launches and their stacks");
  cmd->add_option("files", o->files, "Capture files")->required();
  cmd->add_option("--top", o->top, "How many kernels, gaps and launches to name");
  cmd->add_option("--format", o->format, "text or jsonl");
  cmd->add_option("--debug-dir", o->debugDirs, "Directories of separate debug files (by build-id)");
  addReportFilterOptions(*cmd, o->filter);
  return [o] { return explain(*o); };
}

}  // namespace gtap::cli
