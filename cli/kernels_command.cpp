// gtap kernels: device time per kernel, module, queue or launch shape.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <optional>

#include "commands.h"
#include "gtap/format/modes.h"
#include "gtap/readers/counter_stats.h"
#include "gtap/readers/instruction_samples.h"
#include "gtap/readers/kernel_stats.h"
#include "gtap/readers/recorded_mode.h"
#include "gtap/readers/table.h"
#include "open_captures.h"
#include "report_filter_options.h"
#include "symbols.h"

namespace gtap::cli {

namespace {

struct KernelsOptions {
  std::vector<std::string> files;
  std::string format = "text";
  std::string by = "name";
  bool perProcess = false;
  std::string instructions;  // a glob: the sampled instructions of these kernels instead
  bool counters = false;     // a column per hardware counter: its mean per measured dispatch
  ReportFilterOptions filter;
};

std::string hexOffset(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "+0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// --instructions: where inside the kernels the device spent time.
int instructions(const KernelsOptions& o, readers::OutputFormat format) {
  auto opened = openCaptures(o.files, "kernels", o.filter);
  if (opened.usage) return 2;
  if (opened.captures.empty()) return 1;
  reportNotes(opened, "kernels");
  // The debug ELF of each module is in the capture.
  readers::Symbolizer symbolizer;
  auto captures = opened.pointers();
  auto report = readers::instructionReport(captures, o.instructions, instructionResolverFor(symbolizer));
  for (const auto& n : report.notes) std::cerr << "gtap kernels: " << n << "\n";
  if (!report.recorded) {
    bool asked = std::any_of(captures.begin(), captures.end(),
                             [](const readers::Capture* c) { return readers::recorded(*c, format::kModeSamples); });
    std::cerr << "gtap kernels: no instruction samples in "
              << (captures.size() == 1 ? captures[0]->path() : std::string("these captures"))
              << (asked ? " (recorded with mode samples, but no Level Zero device was sampled: HSA work, or a "
                          "process forked from a sampled one)\n"
                        : " (record them with --mode samples, on a Level Zero device that offers instruction "
                          "sampling)\n");
    return opened.failures ? 1 : 0;
  }
  // Reasons no row counts are left out.
  std::vector<size_t> reasons;
  for (size_t k = 0; k < report.reasons.size(); ++k)
    if (std::any_of(report.rows.begin(), report.rows.end(),
                    [&](const auto& r) { return k < r.counts.size() && r.counts[k]; }))
      reasons.push_back(k);
  std::vector<std::string> columns = {"kernel", "instruction", "offset", "offsets", "samples", "share", "time"};
  for (size_t k : reasons) columns.push_back(report.reasons[k]);
  columns.push_back("location");
  readers::Table table("kernel_instruction", columns);
  for (const auto& r : report.rows) {
    std::vector<readers::Cell> row;
    row.push_back(readers::Cell::str(r.kernel));
    row.push_back(readers::Cell::str(r.text));
    row.push_back(readers::Cell::str(hexOffset(r.offset)));
    row.push_back(readers::Cell::count(static_cast<int64_t>(r.offsets)));
    row.push_back(readers::Cell::count(static_cast<int64_t>(r.samples)));
    readers::Cell share = readers::Cell::ratio(r.share, 4);
    share.text = readers::Cell::ratio(r.share * 100, 1).text + "%";
    row.push_back(share);
    row.push_back(readers::Cell::nanoseconds(r.timeNs));
    for (size_t k : reasons)
      row.push_back(readers::Cell::count(static_cast<int64_t>(k < r.counts.size() ? r.counts[k] : 0)));
    row.push_back(readers::Cell::str(r.location.empty() ? "-" : r.location));
    table.add(std::move(row));
  }
  if (format == readers::OutputFormat::text)
    std::cout << "Instruction samples of kernels matching " << o.instructions << ": " << report.samples
              << " samples over " << report.launches << " launches\n";
  table.print(std::cout, format);
  if (format == readers::OutputFormat::text && report.rows.empty())
    std::cout << "(no samples fell in a kernel matching " << o.instructions << ")\n";
  return opened.failures ? 1 : 0;
}

int kernels(const KernelsOptions& o) {
  readers::OutputFormat format;
  readers::KernelGrouping by;
  if (!readers::parseOutputFormat(o.format, format)) {
    std::cerr << "gtap kernels: --format must be text, csv or jsonl\n";
    return 2;
  }
  if (!readers::parseKernelGrouping(o.by, by)) {
    std::cerr << "gtap kernels: --by must be name, module, queue, shape or range\n";
    return 2;
  }
  if (!o.instructions.empty()) {
    if (o.by != "name" || o.perProcess) {
      std::cerr << "gtap kernels: --instructions lists one row per kernel and line; it takes no --by or --per-process\n";
      return 2;
    }
    return instructions(o, format);
  }
  if (o.counters && by != readers::KernelGrouping::name) {
    std::cerr << "gtap kernels: --counters gives each kernel's counters by name; it takes no --by\n";
    return 2;
  }
  // A chunk of device operations at a time: memory follows the groups, not
  // the operations. Without --counters (which reads the captures again) the
  // files are read a few at a time, each closed once merged, so memory does
  // not grow with the number of files either.
  std::vector<std::string> notes;
  std::vector<readers::KernelRow> rows;
  readers::NothingFoundHint hint(format::kModeKernels, "kernel executions");
  std::optional<OpenedCaptures> opened;
  std::vector<const readers::Capture*> captures;
  int failures = 0;
  if (o.counters) {
    opened = openCaptures(o.files, "kernels", o.filter);
    if (opened->usage) return 2;
    if (opened->captures.empty()) return 1;
    reportNotes(*opened, "kernels");
    captures = opened->pointers();
    for (const auto* c : captures) hint.add(*c);
    rows = readers::kernelRowsStreamed(captures, by, o.perProcess, notes);
    for (const auto& n : notes) std::cerr << "gtap kernels: " << n << "\n";
    failures = opened->failures;
  } else {
    struct Part {
      std::optional<readers::KernelRowsBuilder> rows;
      std::vector<std::string> notes;
    };
    readers::KernelRowsBuilder table(by, o.perProcess);
    auto streamed = streamCaptures<Part>(
        o.files, "kernels", o.filter,
        [&](const readers::Capture& c) {
          Part p;
          p.rows.emplace(readers::kernelRowsOf(c, by, o.perProcess, p.notes));
          return p;
        },
        [&](readers::CaptureFile& f, Part& p) {
          for (const auto& n : p.notes) std::cerr << "gtap kernels: " << n << "\n";
          table.merge(std::move(*p.rows));
          hint.add(*f.captures[0]);
        });
    if (streamed.usage) return 2;
    if (streamed.captures == 0) return 1;
    rows = table.rows();
    failures = streamed.failures;
  }
  std::vector<std::string> columns;
  if (o.perProcess) columns.push_back("process");
  if (by == readers::KernelGrouping::shape) {
    for (const char* c : {"kernel", "groups", "group_size", "grid"}) columns.push_back(c);
  } else {
    columns.push_back(o.by == "name" ? "kernel" : o.by);
  }
  // IREE HAL dispatches (recorded into command buffers) and device work are
  // two levels of the same work: shown apart when both are there.
  bool levels = std::any_of(rows.begin(), rows.end(), [](const auto& r) { return r.level == "hal"; });
  if (levels) columns.push_back("level");
  for (const char* c : {"count", "total", "mean", "min", "max", "p50", "p99", "share", "untimed"}) columns.push_back(c);
  // HAL dispatches joined to the device dispatches they became.
  bool joined = std::any_of(rows.begin(), rows.end(), [](const auto& r) { return r.joined > 0; });
  if (joined) columns.push_back("joined");
  // --counters: each counter's mean over the kernel's measured dispatches.
  readers::CounterReport counters;
  std::map<std::pair<std::string, std::string>, const readers::KernelCounters*> measured;
  if (o.counters) {
    counters = readers::counterReport(captures, false, o.perProcess);
    // What reading the operations found wrong was said above already.
    for (const auto& p : counters.problems)
      if (std::find(notes.begin(), notes.end(), p) == notes.end()) std::cerr << "gtap kernels: " << p << "\n";
    for (const auto& k : counters.kernels) measured[{k.process, k.kernel}] = &k;
    columns.push_back("measured");
    for (const auto& c : counters.columns) columns.push_back("mean " + c.name);
  }
  readers::Table table("kernel", columns);
  auto triple = [](const std::array<uint32_t, 3>& v) {
    return std::to_string(v[0]) + "," + std::to_string(v[1]) + "," + std::to_string(v[2]);
  };
  for (const auto& r : rows) {
    std::vector<readers::Cell> row;
    if (o.perProcess) row.push_back(readers::Cell::str(r.process));
    if (by == readers::KernelGrouping::shape) {
      row.push_back(readers::Cell::str(r.name));
      row.push_back(readers::Cell::str(triple(r.groupCount)));
      row.push_back(readers::Cell::str(triple(r.groupSize)));
      // HSA dispatches give the grid in work-items (it need not fill the groups).
      std::string grid;
      for (uint32_t g : r.gridSize) grid += (grid.empty() ? "" : ",") + std::to_string(g);
      row.push_back(readers::Cell::str(grid.empty() ? "-" : grid));
    } else {
      row.push_back(readers::Cell::str(r.key));
    }
    if (levels) row.push_back(readers::Cell::str(r.level));
    row.push_back(readers::Cell::count(static_cast<int64_t>(r.time.count + r.untimed)));
    row.push_back(readers::Cell::nanoseconds(r.time.total));
    row.push_back(readers::Cell::nanoseconds(static_cast<int64_t>(r.time.mean + 0.5)));
    row.push_back(readers::Cell::nanoseconds(r.time.min));
    row.push_back(readers::Cell::nanoseconds(r.time.max));
    row.push_back(readers::Cell::nanoseconds(r.time.p50));
    row.push_back(readers::Cell::nanoseconds(r.time.p99));
    readers::Cell share = readers::Cell::ratio(r.share, 4);
    share.text = readers::Cell::ratio(r.share * 100, 1).text + "%";
    row.push_back(share);
    row.push_back(readers::Cell::count(static_cast<int64_t>(r.untimed)));
    if (joined) row.push_back(readers::Cell::count(static_cast<int64_t>(r.joined)));
    if (o.counters) {
      auto it = r.level == "hal" ? measured.end() : measured.find({r.process, r.key});
      const readers::KernelCounters* k = it == measured.end() ? nullptr : it->second;
      row.push_back(readers::Cell::count(k ? static_cast<int64_t>(k->dispatches) : 0));
      for (size_t c = 0; c < counters.columns.size(); ++c) {
        if (!k || !k->values[c].count) {
          row.push_back(readers::Cell::str("-"));
          continue;
        }
        double mean = k->values[c].mean();
        if (mean == static_cast<double>(static_cast<int64_t>(mean))) {
          row.push_back(readers::Cell::count(static_cast<int64_t>(mean)));
        } else {
          row.push_back(readers::Cell::ratio(mean, 2));
        }
      }
    }
    table.add(std::move(row));
  }
  table.print(std::cout, format);
  if (format == readers::OutputFormat::text && rows.empty())
    std::cout << hint.text() << "\n";
  if (o.counters && format == readers::OutputFormat::text) {
    if (counters.columns.empty())
      std::cout << "no hardware counters in " << (captures.size() == 1 ? captures[0]->path() : std::string("these captures"))
                << " (record them with gtap run --counters LIST)\n";
    else
      std::cout << "mean NAME: the counter's mean over the kernel's measured dispatches (gtap counters gives totals, "
                   "extremes and derived metrics)\n";
  }
  return failures ? 1 : 0;
}

}  // namespace

Action addKernelsCommand(CLI::App& app) {
  auto o = std::make_shared<KernelsOptions>();
  auto* cmd = app.add_subcommand("kernels", "Device time per kernel: count, total, mean, min, max, p50, p99, share");
  cmd->add_option("files", o->files, "Capture files (several merge)")->required();
  cmd->add_option("--format", o->format, "text, csv or jsonl");
  cmd->add_option("--by", o->by,
                  "name, module, queue, shape (name with group count and size, and the grid for HSA) or range (the "
                  "innermost gtap_range_push range open on the launching thread)");
  cmd->add_flag("--per-process", o->perProcess, "One row per process (rank) and key");
  cmd->add_option("--instructions", o->instructions,
                  "Where inside the kernels matching this glob the device spent time (mode samples): their "
                  "sampled instructions by source line, hottest first");
  addReportFilterOptions(*cmd, o->filter);
  cmd->add_flag("--counters", o->counters,
                "A column per hardware counter: its mean over the kernel's measured dispatches (and how many were "
                "measured)");
  return [o] { return kernels(*o); };
}

}  // namespace gtap::cli
