// gtap export: a timeline as Chrome Trace Event JSON, a Perfetto trace, JSON
// Lines of every API call and device operation, or the same calls and
// operations as an SQLite database or a folder of CSV files (docs/export.md
// has their schema).
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <stdexcept>

#include "commands.h"
#include "exit_status.h"
#include "gtap/readers/otf2_export.h"
#include "gtap/readers/output_file.h"
#include "gtap/readers/record_export.h"
#include "gtap/readers/timeline_builder.h"
#include "gtap/readers/timeline_merge.h"
#include "open_captures.h"
#include "output.h"
#include "report_filter_options.h"
#include "symbols.h"

namespace gtap::cli {

namespace {

struct ExportOptions {
  std::vector<std::string> files;
  std::string format;
  std::string output;
  bool force = false;
  std::vector<std::string> debugDirs;
  std::vector<std::string> tables;  // csv: only these
  ReportFilterOptions filter;
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

// JSON Lines, each capture's written on a reading thread (gtap -j) and
// copied out in order, its stacks named by a symbolizer of that thread's.
void writeRecordLines(const std::vector<const readers::Capture*>& captures, std::ostream& out,
                      std::vector<std::string>& notes, SymbolizerPool& symbolizers) {
  readers::writeJsonLinesInParallel(
      captures, out, notes, [&] { return symbolizers.resolver(); }, [&] { return symbolizers.instructionResolver(); });
}

// The captures to export, their notes said; 0, or the exit status when
// there are none to export.
int openExportCaptures(const ExportOptions& o, OpenedCaptures& opened) {
  opened = openCaptures(o.files, "export", o.filter);
  if (opened.usage) return kExitUsage;
  if (opened.captures.empty()) return kExitError;
  reportNotes(opened, "export");
  return 0;
}

// The CSV export into the folder `dir` (made when missing, never through a
// link): a file per table, each put in place only when all are complete; an
// existing file is replaced only with --force. Standard output ("-") takes
// the one table --table names.
class CsvFolder {
 public:
  CsvFolder(const ExportOptions& o) : o_(o) {}
  ~CsvFolder() {
    files_.clear();  // their temporary files removed first
    if (made_) ::rmdir(o_.output.c_str());  // only when still empty
  }

  // 0, or the exit status when the folder cannot be written.
  int prepare() {
    if (o_.output == "-") return 0;
    struct stat st;
    if (::lstat(o_.output.c_str(), &st) == 0) {
      if (S_ISLNK(st.st_mode)) return refuse("is a symbolic link; gtap does not write through links");
      if (!S_ISDIR(st.st_mode)) return refuse("is not a folder (the CSV export writes a folder of files)");
      return 0;
    }
    if (errno != ENOENT || ::mkdir(o_.output.c_str(), 0777) != 0) {
      std::cerr << "gtap export: cannot make the folder " << o_.output << ": " << std::strerror(errno) << "\n";
      return kExitError;
    }
    made_ = true;
    return 0;
  }

  // The stream of a table's file (nullptr: not asked for). Throws OutputError.
  std::ostream* open(std::string_view table) {
    if (!o_.tables.empty() && std::find(o_.tables.begin(), o_.tables.end(), table) == o_.tables.end())
      return nullptr;
    if (o_.output == "-") return &std::cout;
    auto& file = files_[std::string(table)];
    file.emplace((std::filesystem::path(o_.output) / (std::string(table) + ".csv")).string(), o_.force);
    return &file->stream();
  }

  // Puts every file in place and says so. Throws OutputError.
  void commit() {
    if (o_.output == "-") return;
    uint64_t bytes = 0;
    for (auto& [name, file] : files_) {
      file->commit();
      std::error_code ec;
      bytes += std::filesystem::file_size(file->target(), ec);
    }
    made_ = false;
    sayWritten("export", o_.output + "/", std::to_string(files_.size()) + " tables", bytes);
  }

 private:
  int refuse(const char* why) {
    std::cerr << "gtap export: " << o_.output << " " << why << "\n";
    return kExitUsage;
  }

  const ExportOptions& o_;
  bool made_ = false;
  std::map<std::string, std::optional<readers::OutputFile>> files_;
};

int exportCsv(const ExportOptions& o) {
  for (const auto& t : o.tables) {
    auto names = readers::recordTableNames();
    if (std::find(names.begin(), names.end(), t) != names.end()) continue;
    std::cerr << "gtap export: no table " << t << "; the tables are";
    for (const auto& n : names) std::cerr << " " << n;
    std::cerr << "\n";
    return kExitUsage;
  }
  if (o.output == "-" && o.tables.size() != 1) {
    std::cerr << "gtap export: CSV on standard output (-o -) is one table: name it with --table\n";
    return kExitUsage;
  }
  CsvFolder folder(o);
  if (int status = folder.prepare()) return status;
  OpenedCaptures opened;
  if (int status = openExportCaptures(o, opened)) return status;
  auto captures = opened.pointers();
  std::vector<std::string> notes;
  SymbolizerPool symbolizers(debugDirectories(o.debugDirs));
  int status = kExitSuccess;
  try {
    readers::writeCsv(
        captures, [&](std::string_view table) { return folder.open(table); }, notes,
        [&] { return symbolizers.resolver(); }, [&] { return symbolizers.instructionResolver(); });
    if (o.output == "-") {
      std::cout.flush();
      if (!std::cout) throw std::runtime_error("writing standard output failed");
    }
    folder.commit();
  } catch (const readers::OutputError& e) {
    status = reportOutputError("export", e, "give --force to replace it");
  } catch (const std::exception& e) {
    std::cerr << "gtap export: writing " << o.output << " failed: " << e.what() << "\n";
    status = kExitError;
  }
  for (const auto& n : notes) std::cerr << "gtap export: " << n << "\n";
  return status == kExitSuccess && opened.failures ? kExitError : status;
}

// The OTF2 archive, written into a new hidden folder beside the target and
// renamed into place once complete. The target may be missing or an empty
// folder; an OTF2 archive there (traces.otf2) is replaced only with --force,
// anything else never.
int exportOtf2(const ExportOptions& o) {
  namespace fs = std::filesystem;
  if (o.output == "-") {
    std::cerr << "gtap export: an OTF2 archive is a folder (-o DIR), not standard output\n";
    return kExitUsage;
  }
  fs::path target = fs::path(o.output).lexically_normal();
  if (target.filename().empty()) target = target.parent_path();
  struct stat st;
  bool replace = false;
  if (::lstat(target.c_str(), &st) == 0) {
    std::error_code ec;
    if (S_ISLNK(st.st_mode)) {
      std::cerr << "gtap export: " << o.output << " is a symbolic link; gtap does not write through links\n";
      return kExitUsage;
    }
    if (!S_ISDIR(st.st_mode)) {
      std::cerr << "gtap export: " << o.output << " is not a folder (an OTF2 archive is a folder of files)\n";
      return kExitUsage;
    }
    if (!fs::is_empty(target, ec)) {
      if (!fs::exists(target / "traces.otf2", ec)) {
        std::cerr << "gtap export: " << o.output
                  << " is a folder that holds something other than an OTF2 archive; give an empty or new folder\n";
        return kExitUsage;
      }
      if (!o.force) {
        std::cerr << "gtap export: " << o.output << " holds an OTF2 archive; give --force to replace it\n";
        return kExitUsage;
      }
      replace = true;
    }
  }
  std::string parent = target.has_parent_path() ? target.parent_path().string() : ".";
  std::string pattern = parent + "/." + target.filename().string() + ".gtap-XXXXXX";
  std::vector<char> temp(pattern.begin(), pattern.end());
  temp.push_back('\0');
  if (!::mkdtemp(temp.data())) {
    std::cerr << "gtap export: cannot make a folder beside " << o.output << ": " << std::strerror(errno) << "\n";
    return kExitError;
  }
  std::string tempDir = temp.data();
  struct Cleanup {
    std::string path;
    ~Cleanup() {
      std::error_code ec;
      if (!path.empty()) std::filesystem::remove_all(path, ec);
    }
  } cleanup{tempDir};
  OpenedCaptures opened;
  if (int status = openExportCaptures(o, opened)) return status;
  auto captures = opened.pointers();
  std::vector<std::string> notes;
  readers::Otf2Written written;
  try {
    written = readers::writeOtf2(captures, tempDir, notes);
  } catch (const std::exception& e) {
    for (const auto& n : notes) std::cerr << "gtap export: " << n << "\n";
    std::cerr << "gtap export: writing " << o.output << " failed: " << e.what() << "\n";
    return kExitError;
  }
  for (const auto& n : notes) std::cerr << "gtap export: " << n << "\n";
  // Into place: the old archive (with --force) moved aside first, removed
  // once the new one is there.
  std::error_code ec;
  if (replace || fs::exists(target, ec)) {
    std::string aside = tempDir + ".old";
    if (::rename(target.c_str(), aside.c_str()) != 0) {
      std::cerr << "gtap export: cannot replace " << o.output << ": " << std::strerror(errno) << "\n";
      return kExitError;
    }
    if (::rename(tempDir.c_str(), target.c_str()) != 0) {
      int err = errno;
      ::rename(aside.c_str(), target.c_str());
      std::cerr << "gtap export: cannot put " << o.output << " in place: " << std::strerror(err) << "\n";
      return kExitError;
    }
    fs::remove_all(aside, ec);
  } else if (::rename(tempDir.c_str(), target.c_str()) != 0) {
    std::cerr << "gtap export: cannot put " << o.output << " in place: " << std::strerror(errno) << "\n";
    return kExitError;
  }
  cleanup.path.clear();
  sayWritten("export", (target / "traces.otf2").string(),
             std::to_string(written.locationGroups) + (written.locationGroups == 1 ? " process, " : " processes, ") +
                 std::to_string(written.locations) + " locations, " + std::to_string(written.events) + " events",
             writtenBytes(target.string()));
  return opened.failures ? kExitError : kExitSuccess;
}

int exportTimeline(const ExportOptions& o) {
  if (o.format != "chrome" && o.format != "perfetto" && o.format != "jsonl" && o.format != "sqlite" &&
      o.format != "csv" && o.format != "otf2") {
    std::cerr << "gtap export: --format must be chrome, perfetto, jsonl, sqlite, csv or otf2\n";
    return kExitUsage;
  }
  if (!o.tables.empty() && o.format != "csv") {
    std::cerr << "gtap export: --table is for --format=csv\n";
    return kExitUsage;
  }
  if (o.format == "csv") return exportCsv(o);
  if (o.format == "otf2") return exportOtf2(o);
  // "-": standard output, for a pipe (a database needs a file).
  bool toStdout = o.output == "-";
  if (toStdout && o.format == "sqlite") {
    std::cerr << "gtap export: an SQLite database needs a file (-o FILE), not standard output\n";
    return kExitUsage;
  }
  // Removed again on every failure below.
  std::optional<readers::OutputFile> out;
  if (int status = openOutput("export", o.output, o.force, out)) return status;
  OpenedCaptures opened;
  if (int status = openExportCaptures(o, opened)) return status;
  int status;
  // Each capture's device operations are read a batch at a time.
  std::vector<const readers::Capture*> captures;
  for (const auto& c : opened.captures) captures.push_back(c.get());
  if (o.format == "jsonl" || o.format == "sqlite") {
    // A record a line or a row.
    std::vector<std::string> notes;
    // Stacks are written with their frames named, each capture's by a
    // symbolizer of the thread reading it.
    SymbolizerPool symbolizers(debugDirectories(o.debugDirs));
    status = toStdout ? (writeStdout("export",
                                     [&](std::ostream& s) { writeRecordLines(captures, s, notes, symbolizers); })
                             ? kExitSuccess
                             : kExitError)
                      : writeOutput("export", *out, [&](readers::OutputFile& file) {
                          if (o.format == "sqlite")
                            readers::writeSqlite(
                                captures, file, notes, [&] { return symbolizers.resolver(); },
                                [&] { return symbolizers.instructionResolver(); });
                          else
                            writeRecordLines(captures, file.stream(), notes, symbolizers);
                        });
    for (const auto& n : notes) std::cerr << "gtap export: " << n << "\n";
  } else {
    // A timeline holds every slice (the exporters write them in time order).
    // Each capture's part is built on its own, several at once (gtap -j),
    // with a symbolizer of its thread's, and put together in order.
    std::vector<std::string> notes;
    SymbolizerPool symbolizers(debugDirectories(o.debugDirs));
    auto timeline = readers::buildTimelineInParallel(captures, notes, [&] { return symbolizers.resolver(); });
    for (const auto& n : notes) std::cerr << "gtap export: " << n << "\n";
    status = toStdout ? (writeToStdout(o, timeline) ? kExitSuccess : kExitError)
                      : writeOutput("export", *out, [&](readers::OutputFile& f) { writeTimeline(o, timeline, f.stream()); });
  }
  return status == kExitSuccess && opened.failures ? kExitError : status;
}

}  // namespace

Action addExportCommand(CLI::App& app) {
  auto o = std::make_shared<ExportOptions>();
  auto* cmd = app.add_subcommand("export", "Write a timeline: Chrome JSON (Perfetto UI, speedscope), Perfetto protobuf, JSON Lines, an SQLite database, CSV files or an OTF2 archive (Vampir, Scalasca)");
  cmd->add_option("files", o->files, "Capture files (several merge)")->required();
  cmd->add_option("--format", o->format, "chrome, perfetto, jsonl, sqlite, csv or otf2")->required();
  cmd->add_option("-o,--output", o->output,
                  "Output file (csv, otf2: a folder); - for standard output (not sqlite or otf2; csv with --table)")
      ->required();
  cmd->add_option("--table", o->tables, "csv: only this table (repeatable; one with -o -)")
      ->allow_extra_args(false);
  cmd->add_flag("--force", o->force, "Replace an existing regular output file (never a link, directory or device)");
  cmd->add_option("--debug-dir", o->debugDirs, "Directories of separate debug files (by build-id), to name stack frames");
  addReportFilterOptions(*cmd, o->filter);
  return [o] { return exportTimeline(*o); };
}

}  // namespace gtap::cli
