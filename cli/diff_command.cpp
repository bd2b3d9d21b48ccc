// gtap diff A B: per kernel and per API function, the change in count and in
// time from one capture (or set of captures) to another: a regression check
// a script can act on through the exit status (--fail-above PERCENT).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>

#include "commands.h"
#include "exit_status.h"
#include "gtap/readers/api_stats.h"
#include "gtap/readers/kernel_stats.h"
#include "gtap/readers/parallel.h"
#include "gtap/readers/table.h"
#include "open_captures.h"
#include "report_filter_options.h"

namespace gtap::cli {

namespace {

struct DiffOptions {
  std::string before, after;
  std::string format = "text";
  double failAbove = -1;  // percent; < 0: never fail
  ReportFilterOptions filter;  // the same on both sides
};

struct Side {
  uint64_t count = 0;
  int64_t totalNs = 0;
};

struct DiffRow {
  std::string kind;  // "kernel" (device time) or "api" (host time in calls)
  std::string name;
  Side before, after;
  int64_t change() const { return after.totalNs - before.totalNs; }
  // The change in time relative to before, in percent; infinite for
  // something new that takes time.
  double percent() const {
    if (before.totalNs == 0) return after.totalNs > 0 ? INFINITY : 0;
    return 100.0 * static_cast<double>(change()) / static_cast<double>(before.totalNs);
  }
};

// Per kernel name and per API function: count and total time, of one side
// (a file, or a merged file's members read a few at a time, gtap -j): 0,
// else the exit status. What reading says goes to `say`.
int load(const std::string& path, const ReportFilterOptions& filter,
         std::map<std::pair<std::string, std::string>, Side>& out, std::ostream& say) {
  struct Part {
    std::optional<readers::KernelRowsBuilder> kernels;
    std::shared_ptr<readers::ApiSummaryBuilder::Part> api;
    std::vector<std::string> notes;
  };
  readers::KernelRowsBuilder kernels(readers::KernelGrouping::name, false);
  readers::ApiSummaryBuilder api;
  auto streamed = streamCaptures<Part>(
      {path}, "diff", filter,
      [](const readers::Capture& c) {
        Part p;
        p.kernels.emplace(readers::kernelRowsOf(c, readers::KernelGrouping::name, false, p.notes));
        p.api = readers::ApiSummaryBuilder::read(c);
        return p;
      },
      [&](readers::CaptureFile&, Part& p) {
        for (const auto& n : p.notes) say << "gtap diff: " << n << "\n";
        kernels.merge(std::move(*p.kernels));
        api.merge(std::move(p.api));
      },
      true, say);
  if (streamed.usage) return kExitUsage;
  if (streamed.captures == 0) return kExitError;
  for (const auto& k : kernels.rows()) {
    if (k.level == "hal") continue;  // the device's records of the same work are counted
    Side& s = out[{"kernel", k.key}];
    s.count += k.time.count + k.untimed;
    s.totalNs += k.time.total;
  }
  for (const auto& f : api.finish().functions) {
    Side& s = out[{"api", f.name}];
    s.count += f.count + f.unfinished;
    s.totalNs += f.totalNs;
  }
  return streamed.failures ? kExitError : kExitSuccess;
}

std::string percentText(double p) {
  if (std::isinf(p)) return "new";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", p);
  return buf;
}

int diff(const DiffOptions& o) {
  readers::OutputFormat format;
  if (!readers::parseOutputFormat(o.format, format)) {
    std::cerr << "gtap diff: --format must be text, csv or jsonl\n";
    return kExitUsage;
  }
  // Both sides read at once (gtap -j), what each says kept and said in
  // order.
  std::map<std::pair<std::string, std::string>, Side> before, after;
  std::ostringstream said[2];
  int statuses[2] = {};
  readers::forEachInParallel(
      2, [&](size_t i) { statuses[i] = load(i ? o.after : o.before, o.filter, i ? after : before, said[i]); },
      [&](size_t i) { std::cerr << said[i].str(); });
  for (int status : statuses)
    if (status) return status;
  std::map<std::pair<std::string, std::string>, DiffRow> rows;
  for (const auto& [key, s] : before) rows[key] = {key.first, key.second, s, {}};
  for (const auto& [key, s] : after) {
    auto [it, added] = rows.try_emplace(key, DiffRow{key.first, key.second, {}, s});
    if (!added) it->second.after = s;
  }
  std::vector<DiffRow> changed;
  for (auto& [key, r] : rows)
    if (r.before.count != r.after.count || r.before.totalNs != r.after.totalNs) changed.push_back(r);
  std::stable_sort(changed.begin(), changed.end(), [](const DiffRow& a, const DiffRow& b) {
    return std::llabs(a.change()) > std::llabs(b.change());
  });
  readers::Table table("diff", {"kind", "name", "count_before", "count_after", "total_before", "total_after", "change",
                        "change_percent"});
  std::vector<const DiffRow*> above;
  for (const auto& r : changed) {
    double p = r.percent();
    table.add({readers::Cell::str(r.kind), readers::Cell::str(r.name),
               readers::Cell::count(static_cast<int64_t>(r.before.count)),
               readers::Cell::count(static_cast<int64_t>(r.after.count)), readers::Cell::nanoseconds(r.before.totalNs),
               readers::Cell::nanoseconds(r.after.totalNs), readers::Cell::nanoseconds(r.change()),
               // For scripts the number itself (null for something new).
               readers::Cell{percentText(p), std::nullopt,
                             std::isinf(p) ? std::nullopt : std::optional<double>(p)}});
    if (o.failAbove >= 0 && p > o.failAbove) above.push_back(&r);
  }
  table.print(std::cout, format);
  if (format == readers::OutputFormat::text && changed.empty())
    std::cout << "no kernel or API function changed in count or time\n";
  if (above.empty()) return kExitSuccess;
  for (const auto* r : above)
    std::cerr << "gtap diff: " << r->kind << " " << r->name << " took " << percentText(r->percent())
              << " time (above " << o.failAbove << "%)\n";
  return kExitMismatch;
}

}  // namespace

Action addDiffCommand(CLI::App& app) {
  auto o = std::make_shared<DiffOptions>();
  auto* cmd = app.add_subcommand(
      "diff", "Per kernel and API function, the change in count and time from capture A to capture B");
  cmd->add_option("before", o->before, "The capture to compare against (A)")->required();
  cmd->add_option("after", o->after, "The capture compared (B)")->required();
  cmd->add_option("--format", o->format, "text, csv or jsonl");
  cmd->add_option("--fail-above", o->failAbove,
                  "Exit 3 when a kernel's device time or a function's call time grew by more than PERCENT "
                  "(or appeared), naming each on stderr")
      ->check(CLI::Range(0.0, 1e9));
  addReportFilterOptions(*cmd, o->filter);
  cmd->footer("Rows whose count and time are the same in both are left out: a capture against itself is empty. "
              "Kernels are compared by device time, API functions by time in calls. --kernel, --from, --to, --pid and "
              "--rank narrow both sides alike (the window is an offset into each run).");
  return [o] { return diff(*o); };
}

}  // namespace gtap::cli
