// gtap flame: a flame graph of device time by CPU call path, from the stacks
// recorded at each launch (mode stacks), as collapsed-stack text, a
// self-contained interactive SVG, or an HTML page with the graph under a
// sub-second heatmap (readers/flame.h builds and writes them).
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>

#include "commands.h"
#include "exit_status.h"
#include "gtap/format/modes.h"
#include "gtap/readers/counter_stats.h"
#include "gtap/readers/flame.h"
#include "gtap/readers/output_file.h"
#include "gtap/readers/recorded_mode.h"
#include "gtap/readers/roofline.h"
#include "open_captures.h"
#include "output.h"
#include "report_filter_options.h"
#include "symbols.h"

namespace gtap::cli {

namespace {

struct FlameCommandOptions {
  std::vector<std::string> files;
  std::string output;
  std::string format;
  std::string weight = "device";
  bool perProcess = false;
  std::vector<std::string> stripPrefixes;
  uint32_t maxDepth = 0;
  std::string kernel;
  double from = -1, to = -1;
  std::vector<std::string> debugDirs;
  std::string title;
  double minWidth = 0.1;
  bool force = false;
  ReportFilterOptions processes;  // --pid, --rank
};

bool endsWith(const std::string& s, const std::string& end) {
  return s.size() >= end.size() && s.compare(s.size() - end.size(), end.size(), end) == 0;
}

// The format asked for, or the one the output's name says; empty when neither says.
std::string formatOf(const FlameCommandOptions& o) {
  if (!o.format.empty()) return o.format;
  if (endsWith(o.output, ".svg")) return "svg";
  if (endsWith(o.output, ".html") || endsWith(o.output, ".htm")) return "html";
  if (endsWith(o.output, ".folded") || endsWith(o.output, ".collapsed") || endsWith(o.output, ".txt") ||
      o.output == "-")
    return "folded";
  return {};
}

int flame(const FlameCommandOptions& o) {
  std::string format = formatOf(o);
  if (format.empty()) {
    std::cerr << "gtap flame: cannot tell the format from " << o.output
              << "; give --format=folded, svg or html (or name the output .folded, .svg or .html)\n";
    return kExitUsage;
  }
  if (format != "folded" && format != "svg" && format != "html") {
    std::cerr << "gtap flame: --format must be folded, svg or html\n";
    return kExitUsage;
  }
  readers::FlameOptions options;
  if (o.weight == "device") options.weight = readers::FlameWeight::device;
  else if (o.weight == "api") options.weight = readers::FlameWeight::api;
  else if (o.weight == "count") options.weight = readers::FlameWeight::count;
  else {
    std::cerr << "gtap flame: --weight must be device, api or count\n";
    return kExitUsage;
  }
  if (o.from >= 0 && o.to >= 0 && o.to < o.from) {
    std::cerr << "gtap flame: --to " << o.to << " is before --from " << o.from << "\n";
    return kExitUsage;
  }
  options.perProcess = o.perProcess;
  options.stripPrefixes = o.stripPrefixes;
  options.maxDepth = o.maxDepth;
  options.kernelGlob = o.kernel;
  options.fromSeconds = o.from;
  options.toSeconds = o.to;

  // Removed again on every failure.
  std::optional<readers::OutputFile> out;
  if (int status = openOutput("flame", o.output, o.force, out)) return status;
  auto opened = openCaptures(o.files, "flame", o.processes);
  if (opened.usage) return kExitUsage;
  if (opened.captures.empty()) return kExitError;
  reportNotes(opened, "flame");
  for (const auto& c : opened.captures)
    if (!readers::recorded(*c, format::kModeStacks))
      std::cerr << "gtap flame: " << c->path() << ": no stacks (recorded with mode " << readers::recordedMode(*c)
                << "; record them with --mode=" << readers::recordedMode(*c) << ",stacks): its launches are under [no stack]\n";

  // Each capture's part on a reading thread (gtap -j) with a symbolizer of
  // that thread's, taken in in the order given.
  SymbolizerPool symbolizers(debugDirectories(o.debugDirs));
  auto captures = opened.pointers();
  auto graph = readers::buildFlameGraphInParallel(
      captures, options, [&] { return symbolizers.resolver(); }, [&] { return symbolizers.instructionResolver(); });
  for (const auto& n : graph.notes) std::cerr << "gtap flame: " << n << "\n";
  if (graph.filteredOut)
    std::cerr << "gtap flame: " << graph.filteredOut << " operation" << (graph.filteredOut == 1 ? "" : "s")
              << " outside --kernel, --from or --to left out\n";
  if (options.weight == readers::FlameWeight::device && graph.untimed)
    std::cerr << "gtap flame: " << graph.untimed << " operation" << (graph.untimed == 1 ? "" : "s")
              << " without device times counted as zero\n";
  std::string title = o.title;
  if (title.empty()) {
    title = "Device time by call path";
    if (options.weight == readers::FlameWeight::api) title = "Host time in API calls by call path";
    if (options.weight == readers::FlameWeight::count) title = "Device operations by call path";
    title += captures.size() == 1 ? ": " + captures[0]->label() : ": " + std::to_string(captures.size()) + " processes";
  }
  // The page's roofline section, when the captures read FLOP or byte counters.
  std::string roofline;
  if (format == "html") {
    auto counters = readers::counterReport(captures, false, o.perProcess);
    for (const auto& p : counters.problems) std::cerr << "gtap flame: " << p << "\n";
    auto points = counters.roofline();
    if (!points.empty()) roofline = readers::rooflineHtmlSection(points);
  }
  auto write = [&](std::ostream& stream) {
    if (format == "svg") readers::writeFlameSvg(graph, title, stream, o.minWidth);
    else if (format == "html") readers::writeFlameHtml(graph, title, stream, o.minWidth, roofline);
    else readers::writeFolded(graph, stream);
  };
  int status = out ? writeOutput("flame", *out, [&](readers::OutputFile& f) { write(f.stream()); })
                   : (writeStdout("flame", write) ? kExitSuccess : kExitError);
  return status == kExitSuccess && opened.failures ? kExitError : status;
}

}  // namespace

Action addFlameCommand(CLI::App& app) {
  auto o = std::make_shared<FlameCommandOptions>();
  auto* cmd = app.add_subcommand("flame", "A flame graph of device time by CPU call path (folded text, interactive SVG, or HTML with a heatmap)");
  cmd->add_option("files", o->files, "Capture files (several merge: ranks)")->required();
  cmd->add_option("-o,--output", o->output, "Output file (.svg, .html, .folded); - for standard output (folded)")->required();
  cmd->add_option("--format", o->format, "folded, svg or html (default: from the output's name)");
  cmd->add_option("--weight", o->weight, "device (device time, the default), api (host time in the API call) or count");
  cmd->add_flag("--per-process", o->perProcess, "Each process its own root frame");
  cmd->add_option("--strip-prefix", o->stripPrefixes, "Take this prefix off function names and source paths (repeatable)");
  cmd->add_option("--max-depth", o->maxDepth, "Keep at most this many program frames from the root");
  cmd->add_option("--kernel", o->kernel, "Only device work whose name matches this glob");
  cmd->add_option("--from", o->from, "Only device work from this many seconds into the run")->check(CLI::NonNegativeNumber);
  cmd->add_option("--to", o->to, "Only device work up to this many seconds into the run")->check(CLI::NonNegativeNumber);
  addProcessFilterOptions(*cmd, o->processes);
  cmd->add_option("--debug-dir", o->debugDirs, "Directories of separate debug files (by build-id)");
  cmd->add_option("--title", o->title, "The picture's title");
  cmd->add_option("--min-width", o->minWidth, "Leave out frames narrower than this many pixels (svg, html)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--force", o->force, "Replace an existing regular output file (never a link, directory or device)");
  return [o] { return flame(*o); };
}

}  // namespace gtap::cli
