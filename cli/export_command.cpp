// gtap export: a timeline as Chrome Trace Event JSON, a Perfetto trace, JSON
// Lines of every API call and device operation, or the same calls and
// operations as an SQLite database (docs/export.md has its schema).
#include <iostream>
#include <optional>
#include <stdexcept>

#include "commands.h"
#include "exit_status.h"
#include "gtap/readers/output_file.h"
#include "gtap/readers/record_export.h"
#include "gtap/readers/timeline_builder.h"
#include "open_captures.h"
#include "output.h"
#include "symbols.h"

namespace gtap::cli {

namespace {

struct ExportOptions {
  std::vector<std::string> files;
  std::string format;
  std::string output;
  bool force = false;
  std::vector<std::string> debugDirs;
};

// A timeline export into `out`. Throws what the exporters throw; a failed
// write shows in the stream's state.
void writeTimeline(const ExportOptions& o, const readers::Timeline& timeline, std::ostream& out) {
  if (o.format == "chrome") readers::writeChromeTrace(timeline, out);
  else readers::writePerfettoTrace(timeline, out);
}

bool writeToStdout(const ExportOptions& o, const readers::Timeline& timeline) {
  return writeStdout("export", [&](std::ostream& out) { writeTimeline(o, timeline, out); });
}

// JSON Lines (the only record export a pipe takes).
bool writeRecordsToStdout(const std::vector<const readers::Capture*>& captures, std::vector<std::string>& notes,
                          const readers::FrameResolver& resolve, const readers::InstructionResolver& instructions) {
  return writeStdout("export",
                     [&](std::ostream& out) { readers::writeJsonLines(captures, out, notes, resolve, instructions); });
}

int exportTimeline(const ExportOptions& o) {
  if (o.format != "chrome" && o.format != "perfetto" && o.format != "jsonl" && o.format != "sqlite") {
    std::cerr << "gtap export: --format must be chrome, perfetto, jsonl or sqlite\n";
    return kExitUsage;
  }
  // "-": standard output, for a pipe (a database needs a file).
  bool toStdout = o.output == "-";
  if (toStdout && o.format == "sqlite") {
    std::cerr << "gtap export: an SQLite database needs a file (-o FILE), not standard output\n";
    return kExitUsage;
  }
  // Removed again on every failure below.
  std::optional<readers::OutputFile> out;
  if (int status = openOutput("export", o.output, o.force, out)) return status;
  auto opened = openCaptures(o.files, "export");
  if (opened.captures.empty()) return kExitError;
  reportNotes(opened, "export");
  int status;
  // Each capture's device operations are read a batch at a time.
  std::vector<const readers::Capture*> captures;
  for (const auto& c : opened.captures) captures.push_back(c.get());
  if (o.format == "jsonl" || o.format == "sqlite") {
    // A record a line or a row.
    std::vector<std::string> notes;
    // Stacks are written with their frames named.
    readers::Symbolizer symbolizer(debugDirectories(o.debugDirs));
    readers::FrameResolver resolve = resolverFor(symbolizer);
    status = toStdout ? (writeRecordsToStdout(captures, notes, resolve, instructionResolverFor(symbolizer))
                             ? kExitSuccess
                             : kExitError)
                      : writeOutput("export", *out, [&](readers::OutputFile& file) {
                          if (o.format == "sqlite")
                            readers::writeSqlite(captures, file, notes, resolve, instructionResolverFor(symbolizer));
                          else
                            readers::writeJsonLines(captures, file.stream(), notes, resolve,
                                                    instructionResolverFor(symbolizer));
                        });
    for (const auto& n : notes) std::cerr << "gtap export: " << n << "\n";
  } else {
    // A timeline holds every slice (the exporters write them in time order).
    std::vector<std::string> notes;
    readers::Symbolizer symbolizer(debugDirectories(o.debugDirs));
    auto timeline = readers::buildTimeline(captures, notes, resolverFor(symbolizer));
    for (const auto& n : notes) std::cerr << "gtap export: " << n << "\n";
    status = toStdout ? (writeToStdout(o, timeline) ? kExitSuccess : kExitError)
                      : writeOutput("export", *out, [&](readers::OutputFile& f) { writeTimeline(o, timeline, f.stream()); });
  }
  return status == kExitSuccess && opened.failures ? kExitError : status;
}

}  // namespace

Action addExportCommand(CLI::App& app) {
  auto o = std::make_shared<ExportOptions>();
  auto* cmd = app.add_subcommand("export", "Write a timeline: Chrome JSON (Perfetto UI, speedscope), Perfetto protobuf, JSON Lines, or an SQLite database");
  cmd->add_option("files", o->files, "Capture files (several merge)")->required();
  cmd->add_option("--format", o->format, "chrome, perfetto, jsonl or sqlite")->required();
  cmd->add_option("-o,--output", o->output, "Output file; - for standard output (not sqlite)")->required();
  cmd->add_flag("--force", o->force, "Replace an existing regular output file (never a link, directory or device)");
  cmd->add_option("--debug-dir", o->debugDirs, "Directories of separate debug files (by build-id), to name stack frames");
  return [o] { return exportTimeline(*o); };
}

}  // namespace gtap::cli
