// gtap queue: each queue's submissions in order, with what they waited for
// and signalled, the device span of their work and the gaps between them.
#include <cstdio>
#include <iostream>
#include <set>

#include "commands.h"
#include "exit_status.h"
#include "gtap/readers/queue_view.h"
#include "gtap/readers/table.h"
#include "open_captures.h"
#include "report_filter_options.h"

namespace gtap::cli {

namespace {

struct QueueOptions {
  std::vector<std::string> files;
  std::string format = "text";
  std::optional<uint64_t> id;
  ReportFilterOptions filter;
};

std::string semaphores(const std::vector<format::OpSemaphore>& values) {
  std::string out;
  char buf[48];
  for (const auto& v : values) {
    std::snprintf(buf, sizeof buf, "0x%llx:%llu", static_cast<unsigned long long>(v.semaphore),
                  static_cast<unsigned long long>(v.value));
    out += (out.empty() ? "" : " ") + std::string(buf);
  }
  return out.empty() ? "-" : out;
}

// What ran: the names in order, the first few when there are many.
std::string work(const readers::QueueSubmission& s) {
  if (s.names.empty()) return "-";
  std::string out;
  size_t shown = std::min<size_t>(s.names.size(), 4);
  for (size_t i = 0; i < shown; ++i) out += (i ? "," : "") + s.names[i];
  if (shown < s.names.size()) out += ",... (" + std::to_string(s.names.size()) + ")";
  return out;
}

std::string ids(const std::vector<uint64_t>& lists) {
  std::string out;
  for (uint64_t l : lists) out += (out.empty() ? "" : ",") + std::to_string(l);
  return out.empty() ? "-" : out;
}

int queue(const QueueOptions& o) {
  readers::OutputFormat format;
  if (!readers::parseOutputFormat(o.format, format)) {
    std::cerr << "gtap queue: --format must be text, csv or jsonl\n";
    return kExitUsage;
  }
  auto opened = openCaptures(o.files, "queue", o.filter);
  if (opened.usage) return kExitUsage;
  if (opened.captures.empty()) return kExitError;
  reportNotes(opened, "queue");
  // Whole, unnarrowed: the views join IREE HAL submissions to their device
  // work by place, and apply the filter themselves.
  // Several captures at once (gtap -j).
  std::vector<readers::LoadedCapture> loaded = loadDeviceWork(opened, "queue", false);
  std::vector<readers::QueueView> views;
  std::set<uint64_t> existing;
  for (const auto& l : loaded)
    for (auto& v : readers::queueViews(*l.capture, l.work)) {
      existing.insert(v.id);
      if (!o.id || v.id == *o.id) views.push_back(std::move(v));
    }
  if (o.id && views.empty()) {
    std::cerr << "gtap queue: no queue " << *o.id << " in "
              << (loaded.size() == 1 ? loaded[0].capture->path() : std::string("these captures"));
    if (existing.empty()) {
      std::cerr << " (no work was submitted to any queue)\n";
    } else {
      std::cerr << "; the queues are";
      for (uint64_t id : existing) std::cerr << " " << id;
      std::cerr << "\n";
    }
    return kExitUsage;
  }
  bool several = loaded.size() > 1;
  std::vector<std::string> columns;
  if (several) columns.push_back("process");
  for (const char* c : {"queue", "submission", "submit_at", "thread", "what", "lists", "operations", "work", "waits",
                        "signals", "start_at", "device_span", "gap"})
    columns.push_back(c);
  std::vector<std::string> summaryColumns;
  if (several) summaryColumns.push_back("process");
  for (const char* c : {"queue", "kind", "name", "submissions", "operations", "busy", "span", "busy_share", "gaps"})
    summaryColumns.push_back(c);
  readers::Table summary("queue", summaryColumns);
  auto offset = [](const readers::QueueView& v, int64_t ns) {
    return readers::Cell::nanoseconds(ns - v.capture->process().startHostNs);
  };
  auto submissionTable = [&](const readers::QueueView& v, readers::Table& t) {
    uint32_t index = 0;
    for (const auto& s : v.submissions) {
      std::vector<readers::Cell> row;
      if (several) row.push_back(readers::Cell::str(v.capture->label()));
      row.push_back(readers::Cell::count(static_cast<int64_t>(v.id)));
      row.push_back(readers::Cell::count(index++));
      row.push_back(offset(v, s.submitNs));
      row.push_back(s.thread == ~0u ? readers::Cell::str("-") : readers::Cell::count(s.thread));
      row.push_back(readers::Cell::str(s.what));
      row.push_back(readers::Cell::str(ids(s.lists)));
      row.push_back(readers::Cell::count(s.operations));
      row.push_back(readers::Cell::str(work(s)));
      row.push_back(readers::Cell::str(semaphores(s.waits)));
      row.push_back(readers::Cell::str(semaphores(s.signals)));
      row.push_back(s.hasSpan ? offset(v, s.startNs) : readers::Cell::str("-"));
      row.push_back(s.hasSpan ? readers::Cell::nanoseconds(s.endNs - s.startNs) : readers::Cell::str("-"));
      row.push_back(s.hasGap ? readers::Cell::nanoseconds(s.gapNs) : readers::Cell::str("-"));
      t.add(std::move(row));
    }
  };
  for (const auto& v : views) {
    std::vector<readers::Cell> row;
    if (several) row.push_back(readers::Cell::str(v.capture->label()));
    row.push_back(readers::Cell::count(static_cast<int64_t>(v.id)));
    row.push_back(readers::Cell::str(v.kind));
    row.push_back(readers::Cell::str(v.name));
    row.push_back(readers::Cell::count(static_cast<int64_t>(v.submissions.size())));
    int64_t operations = 0;
    for (const auto& s : v.submissions) operations += s.operations;
    row.push_back(readers::Cell::count(operations));
    row.push_back(readers::Cell::nanoseconds(v.busyNs));
    row.push_back(readers::Cell::nanoseconds(v.spanNs));
    readers::Cell share = readers::Cell::ratio(v.busyShare(), 4);
    share.text = v.spanNs > 0 ? readers::Cell::ratio(v.busyShare() * 100, 1).text + "%" : "-";
    row.push_back(share);
    row.push_back(readers::Cell::nanoseconds(v.gapNs));
    summary.add(std::move(row));
  }
  if (format == readers::OutputFormat::text) {
    for (const auto& v : views) {
      std::cout << (several ? v.capture->label() + ": " : std::string()) << v.kind << " " << v.id << " (" << v.name
                << ")\n";
      readers::Table t("queue_submission", columns);
      submissionTable(v, t);
      t.print(std::cout, format);
      std::cout << "\n";
    }
    if (views.empty())
      std::cout << "no work was submitted to a queue in "
                << (loaded.size() == 1 ? loaded[0].capture->path() : std::string("these captures")) << "\n";
    else
      summary.print(std::cout, format);
  } else {
    readers::Table t("queue_submission", columns);
    for (const auto& v : views) submissionTable(v, t);
    t.print(std::cout, format);
    if (format == readers::OutputFormat::csv) std::cout << "\n";
    summary.print(std::cout, format);
  }
  return opened.failures ? kExitError : kExitSuccess;
}

}  // namespace

Action addQueueCommand(CLI::App& app) {
  auto o = std::make_shared<QueueOptions>();
  auto* cmd = app.add_subcommand(
      "queue", "Each queue's submissions in order: submit time, waits and signals, device span, gap before");
  cmd->add_option("files", o->files, "Capture files (several merge)")->required();
  cmd->add_option("--id", o->id, "Only the queue with this id (the queue column)");
  cmd->add_option("--format", o->format, "text, csv or jsonl");
  addReportFilterOptions(*cmd, o->filter);
  return [o] { return queue(*o); };
}

}  // namespace gtap::cli
