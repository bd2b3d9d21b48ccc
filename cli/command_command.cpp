// gtap command: the command lists and command buffers of a capture, and one
// of them command by command with its device times on each execution.
#include <iostream>
#include <set>

#include "commands.h"
#include "exit_status.h"
#include "gtap/readers/command_view.h"
#include "gtap/readers/table.h"
#include "open_captures.h"
#include "report_filter_options.h"

namespace gtap::cli {

namespace {

struct CommandOptions {
  std::vector<std::string> files;
  std::string format = "text";
  std::optional<uint64_t> id;
  ReportFilterOptions filter;
};

std::string triple(const std::array<uint32_t, 3>& v) {
  return std::to_string(v[0]) + "," + std::to_string(v[1]) + "," + std::to_string(v[2]);
}

int command(const CommandOptions& o) {
  readers::OutputFormat format;
  if (!readers::parseOutputFormat(o.format, format)) {
    std::cerr << "gtap command: --format must be text, csv or jsonl\n";
    return kExitUsage;
  }
  auto opened = openCaptures(o.files, "command", o.filter);
  if (opened.usage) return kExitUsage;
  if (opened.captures.empty()) return kExitError;
  reportNotes(opened, "command");
  // Whole, unnarrowed: IREE HAL dispatches meet their device work by place;
  // the views apply the filter themselves.
  // Several captures at once (gtap -j).
  std::vector<readers::LoadedCapture> loaded = loadDeviceWork(opened, "command", false);
  std::vector<readers::CommandListView> views;
  std::set<uint64_t> existing;
  for (const auto& l : loaded)
    for (auto& v : readers::commandListViews(*l.capture, l.work)) {
      existing.insert(v.id);
      if (!o.id || v.id == *o.id) views.push_back(std::move(v));
    }
  std::string where = loaded.size() == 1 ? loaded[0].capture->path() : std::string("these captures");
  bool several = loaded.size() > 1;
  if (!o.id) {
    std::vector<std::string> columns;
    if (several) columns.push_back("process");
    for (const char* c : {"list", "kind", "name", "commands", "executions", "device_time"}) columns.push_back(c);
    readers::Table table("command_list", columns);
    for (const auto& v : views) {
      std::vector<readers::Cell> row;
      if (several) row.push_back(readers::Cell::str(v.capture->label()));
      row.push_back(readers::Cell::count(static_cast<int64_t>(v.id)));
      row.push_back(readers::Cell::str(v.kind));
      row.push_back(readers::Cell::str(v.name.empty() ? "-" : v.name));
      row.push_back(readers::Cell::count(static_cast<int64_t>(v.commands.size())));
      row.push_back(readers::Cell::count(static_cast<int64_t>(v.executions.size())));
      row.push_back(readers::Cell::nanoseconds(v.deviceNs));
      table.add(std::move(row));
    }
    table.print(std::cout, format);
    if (format == readers::OutputFormat::text) {
      if (views.empty())
        std::cout << "no command list or command buffer holds a command in " << where << "\n";
      else
        std::cout << "gtap command --id LIST shows one command by command\n";
    }
    return opened.failures ? kExitError : kExitSuccess;
  }
  if (views.empty()) {
    std::cerr << "gtap command: no command list or command buffer " << *o.id << " in " << where;
    if (existing.empty()) {
      std::cerr << " (none holds a command)\n";
    } else {
      std::cerr << "; the lists are";
      for (uint64_t id : existing) std::cerr << " " << id;
      std::cerr << "\n";
    }
    return kExitUsage;
  }
  std::vector<std::string> columns;
  if (several) columns.push_back("process");
  for (const char* c : {"list", "command", "kind", "name", "groups", "group_size", "bytes", "execution", "submit_at",
                        "start_at", "duration"})
    columns.push_back(c);
  readers::Table table("command", columns);
  for (const auto& v : views) {
    int64_t start = v.capture->process().startHostNs;
    if (format == readers::OutputFormat::text)
      std::cout << (several ? v.capture->label() + ": " : std::string()) << v.kind << " " << v.id
                << (v.name.empty() ? "" : " (" + v.name + ")") << ": " << v.commands.size() << " commands, "
                << v.executions.size() << " executions\n";
    for (size_t k = 0; k < v.commands.size(); ++k) {
      const auto& c = v.commands[k];
      bool kernel = c.groupCount != std::array<uint32_t, 3>{};
      // One row per execution; a command that ran in none still has its row.
      size_t rows = std::max<size_t>(v.executions.size(), 1);
      for (size_t e = 0; e < rows; ++e) {
        readers::CommandTime t = e < c.times.size() ? c.times[e] : readers::CommandTime{};
        if (!t.ran && e < v.executions.size()) continue;  // not in this execution (the list was reset and appended again)
        std::vector<readers::Cell> row;
        if (several) row.push_back(readers::Cell::str(v.capture->label()));
        row.push_back(readers::Cell::count(static_cast<int64_t>(v.id)));
        row.push_back(readers::Cell::count(static_cast<int64_t>(k)));
        row.push_back(readers::Cell::str(c.kind));
        row.push_back(readers::Cell::str(c.name));
        row.push_back(readers::Cell::str(kernel ? triple(c.groupCount) : "-"));
        row.push_back(readers::Cell::str(kernel ? triple(c.groupSize) : "-"));
        row.push_back(readers::Cell::bytes(static_cast<int64_t>(c.bytes)));
        if (e < v.executions.size()) {
          row.push_back(readers::Cell::count(static_cast<int64_t>(e)));
          row.push_back(readers::Cell::nanoseconds(v.executions[e] - start));
        } else {
          row.push_back(readers::Cell::str("-"));
          row.push_back(readers::Cell::str("-"));
        }
        row.push_back(t.timed ? readers::Cell::nanoseconds(t.startNs - start) : readers::Cell::str("-"));
        row.push_back(t.timed ? readers::Cell::nanoseconds(t.endNs - t.startNs) : readers::Cell::str("-"));
        table.add(std::move(row));
      }
    }
  }
  table.print(std::cout, format);
  return opened.failures ? kExitError : kExitSuccess;
}

}  // namespace

Action addCommandCommand(CLI::App& app) {
  auto o = std::make_shared<CommandOptions>();
  auto* cmd = app.add_subcommand(
      "command", "Command lists and command buffers; with --id, one command by command with its device times per execution");
  cmd->add_option("files", o->files, "Capture files (several merge)")->required();
  cmd->add_option("--id", o->id, "The command list or command buffer to show (the list column)");
  cmd->add_option("--format", o->format, "text, csv or jsonl");
  addReportFilterOptions(*cmd, o->filter);
  return [o] { return command(*o); };
}

}  // namespace gtap::cli
