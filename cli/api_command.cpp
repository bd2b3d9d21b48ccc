// gtap api: per-function call counts and times.
#include <iostream>

#include "commands.h"
#include "gtap/readers/api_stats.h"
#include "gtap/readers/recorded_mode.h"
#include "gtap/readers/table.h"
#include "open_captures.h"
#include "report_filter_options.h"

namespace gtap::cli {

namespace {

struct ApiOptions {
  std::vector<std::string> files;
  std::string format = "text";
  ReportFilterOptions filter;
};

int api(const ApiOptions& o) {
  readers::OutputFormat format;
  if (!readers::parseOutputFormat(o.format, format)) {
    std::cerr << "gtap api: --format must be text, csv or jsonl\n";
    return 2;
  }
  // The files a few at a time, each closed once merged (report_filter_options.h).
  readers::ApiSummaryBuilder builder;
  readers::NothingFoundHint hint(format::kModeApi, "API calls");
  auto streamed = streamCaptures<std::shared_ptr<readers::ApiSummaryBuilder::Part>>(
      o.files, "api", o.filter, [](const readers::Capture& c) { return readers::ApiSummaryBuilder::read(c); },
      [&](readers::CaptureFile& f, std::shared_ptr<readers::ApiSummaryBuilder::Part>& part) {
        builder.merge(std::move(part));
        hint.add(*f.captures[0]);
      });
  if (streamed.usage) return 2;
  if (streamed.captures == 0) return 1;
  auto summary = builder.finish();
  readers::Table table("api_function", {"function", "api", "count", "total", "mean", "min", "max", "p50", "p99",
                        "failed", "unfinished"});
  for (const auto& f : summary.functions) {
    table.add({readers::Cell::str(f.name), readers::Cell::str(f.api),
               readers::Cell::count(static_cast<int64_t>(f.count)), readers::Cell::nanoseconds(f.totalNs),
               readers::Cell::nanoseconds(static_cast<int64_t>(f.meanNs + 0.5)),
               readers::Cell::nanoseconds(f.minNs), readers::Cell::nanoseconds(f.maxNs),
               readers::Cell::nanoseconds(f.p50Ns), readers::Cell::nanoseconds(f.p99Ns),
               readers::Cell::count(static_cast<int64_t>(f.failed)),
               readers::Cell::count(static_cast<int64_t>(f.unfinished))});
  }
  table.print(std::cout, format);
  if (format == readers::OutputFormat::text)
    std::cout << "\n" << summary.calls << " calls in " << streamed.captures << " file"
              << (streamed.captures == 1 ? "" : "s") << "\n";
  if (format == readers::OutputFormat::text && summary.calls == 0) std::cout << hint.text() << "\n";
  return streamed.failures ? 1 : 0;
}

}  // namespace

Action addApiCommand(CLI::App& app) {
  auto o = std::make_shared<ApiOptions>();
  auto* cmd = app.add_subcommand("api", "Per-function API call counts and times (count, total, mean, min, max, p50, p99)");
  cmd->add_option("files", o->files, "Capture files (several merge, e.g. one per rank)")
      ->required();
  cmd->add_option("--format", o->format, "text, csv or jsonl");
  addReportFilterOptions(*cmd, o->filter);
  return [o] { return api(*o); };
}

}  // namespace gtap::cli
