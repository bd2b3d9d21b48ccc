// gtap memory: allocations by kind and transfers by direction.
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <optional>

#include "commands.h"
#include "exit_status.h"
#include "gtap/readers/memory_events.h"
#include "gtap/readers/memory_stats.h"
#include "gtap/readers/parallel.h"
#include "gtap/readers/recorded_mode.h"
#include "gtap/readers/table.h"
#include "gtap/readers/stack_text.h"
#include "open_captures.h"
#include "report_filter_options.h"

namespace gtap::cli {

namespace {

struct MemoryOptions {
  std::vector<std::string> files;
  std::string format = "text";
  bool perProcess = false;
  bool events = false;
  std::optional<double> at;  // seconds into the run: the live set then
  ReportFilterOptions filter;
};

// --events and --at: every allocation and free in order, or those live at a
// moment, with the call and the stack that made each.
int memoryEvents(const MemoryOptions& o, readers::OutputFormat format) {
  if (o.at && (!std::isfinite(*o.at) || *o.at < 0)) {
    std::cerr << "gtap memory: --at must be an offset into the run in seconds, 0 or more\n";
    return kExitUsage;
  }
  if (o.perProcess) {
    std::cerr << "gtap memory: --events and --at list each event with its process; they take no --per-process\n";
    return kExitUsage;
  }
  auto opened = openCaptures(o.files, "memory", o.filter);
  if (opened.usage) return kExitUsage;
  if (opened.captures.empty()) return kExitError;
  reportNotes(opened, "memory");
  bool text = format == readers::OutputFormat::text;
  std::vector<std::string> columns = {"process", "time", "event", "kind", "size", "address", "device", "thread",
                                      "function", "stack"};
  if (opened.captures.size() == 1) columns.erase(columns.begin());
  readers::Table table(o.at ? "live_allocation" : "memory_event", columns);
  readers::Symbolizer symbolizer;
  size_t total = 0;
  for (const auto& c : opened.captures) {
    readers::DeviceWork work;
    // The memory operations and stacks only: no device operation is read.
    readers::streamDeviceWork(*c, work, false, [](std::span<const readers::DeviceOp>) { return false; });
    for (const auto& n : work.notes) std::cerr << "gtap memory: " << n << "\n";
    int64_t start = c->process().startHostNs;
    auto events = readers::memoryEvents(*c, work);
    if (o.at) events = readers::liveAt(events, start + static_cast<int64_t>(std::llround(*o.at * 1e9)));
    total += events.size();
    for (const auto& e : events) {
      std::vector<readers::Cell> row;
      if (opened.captures.size() > 1) row.push_back(readers::Cell::str(c->label()));
      row.push_back(readers::Cell::nanoseconds(e.op.hostNs - start));
      row.push_back(readers::Cell::str(e.op.isFree ? "free" : "allocate"));
      row.push_back(readers::Cell::str(readers::memoryKindName(e.op.kind)));
      row.push_back(readers::Cell::bytes(static_cast<int64_t>(e.op.size)));
      char address[24];
      std::snprintf(address, sizeof address, "0x%" PRIx64, e.op.address);
      row.push_back(readers::Cell::str(address));
      row.push_back(e.op.device == ~0u ? readers::Cell::str("-") : readers::Cell::count(e.op.device));
      row.push_back(e.op.thread == ~0u ? readers::Cell::str("-") : readers::Cell::count(e.op.thread));
      row.push_back(readers::Cell::str(e.function.empty() ? "-" : e.function));
      // People get the innermost frames, scripts every frame.
      std::string stack;
      if (e.op.stack) {
        auto frames = readers::describeStack(work, e.op.stack, symbolizer);
        size_t shown = text ? std::min<size_t>(frames.size(), 3) : frames.size();
        for (size_t f = 0; f < shown; ++f) stack += (f ? " < " : "") + frames[f];
        if (shown < frames.size()) stack += " < ...";
      }
      row.push_back(readers::Cell::str(stack.empty() ? "-" : stack));
      table.add(std::move(row));
    }
  }
  table.print(std::cout, format);
  if (text && total == 0)
    std::cout << (o.at ? "nothing allocated was live then" : readers::nothingFoundHint(opened.pointers(), format::kModeMemory, "allocations")) << "\n";
  return opened.failures ? kExitError : kExitSuccess;
}

int memory(const MemoryOptions& o) {
  readers::OutputFormat format;
  if (!readers::parseOutputFormat(o.format, format)) {
    std::cerr << "gtap memory: --format must be text, csv or jsonl\n";
    return 2;
  }
  if (o.events || o.at) return memoryEvents(o, format);
  auto opened = openCaptures(o.files, "memory", o.filter);
  if (opened.usage) return kExitUsage;
  if (opened.captures.empty()) return 1;
  reportNotes(opened, "memory");
  // Copies and fills a batch of device operations at a time (the
  // allocations are memory operations, read whole): memory follows the rows,
  // not the operations.
  // Several captures at once (gtap -j), each its own transfer table, merged
  // in the order given.
  std::vector<readers::LoadedCapture> loaded(opened.captures.size());
  std::vector<std::optional<readers::TransferTable>> parts(opened.captures.size());
  readers::TransferTable transferTable(o.perProcess);
  readers::forEachInParallel(
      opened.captures.size(),
      [&](size_t i) {
        const readers::Capture& c = *opened.captures[i];
        loaded[i] = {&c, readers::DeviceWork{}};
        readers::TransferTable mine(o.perProcess);
        mine.beginCapture(c);
        readers::streamDeviceWork(c, loaded[i].work, false, [&](std::span<const readers::DeviceOp> ops) {
          for (const auto& op : ops) mine.add(op);
          return true;
        });
        parts[i].emplace(std::move(mine));
      },
      [&](size_t i) {
        transferTable.beginCapture(*loaded[i].capture);
        transferTable.merge(*parts[i]);
        parts[i].reset();
        for (const auto& n : loaded[i].work.notes) std::cerr << "gtap memory: " << n << "\n";
        opened.captures[i]->reader().releasePages();
      });
  auto allocations = readers::allocationRows(loaded, o.perProcess);
  auto transfers = transferTable.rows();
  // Scripts get one table with a "section" column; people get two tables.
  bool text = format == readers::OutputFormat::text;
  std::vector<std::string> allocColumns = {"section", "process", "kind", "allocations", "frees", "bytes", "peak", "largest", "live_at_end"};
  std::vector<std::string> transferColumns = {"section", "process", "kind", "count", "bytes", "device_time", "bandwidth_bytes_per_s"};
  auto trim = [&](std::vector<std::string> cols) {
    if (!o.perProcess) cols.erase(cols.begin() + 1);
    if (text) cols.erase(cols.begin());
    return cols;
  };
  readers::Table a("allocation", trim(allocColumns));
  for (const auto& r : allocations) {
    std::vector<readers::Cell> row;
    if (!text) row.push_back(readers::Cell::str("allocations"));
    if (o.perProcess) row.push_back(readers::Cell::str(r.process));
    row.push_back(readers::Cell::str(r.kind));
    row.push_back(readers::Cell::count(static_cast<int64_t>(r.allocations)));
    row.push_back(readers::Cell::count(static_cast<int64_t>(r.frees)));
    row.push_back(readers::Cell::bytes(static_cast<int64_t>(r.bytes)));
    row.push_back(readers::Cell::bytes(static_cast<int64_t>(r.peakBytes)));
    row.push_back(readers::Cell::bytes(static_cast<int64_t>(r.largest)));
    row.push_back(readers::Cell::bytes(static_cast<int64_t>(r.liveAtEnd)));
    a.add(std::move(row));
  }
  readers::Table t("transfer", trim(transferColumns));
  for (const auto& r : transfers) {
    std::vector<readers::Cell> row;
    if (!text) row.push_back(readers::Cell::str("transfers"));
    if (o.perProcess) row.push_back(readers::Cell::str(r.process));
    row.push_back(readers::Cell::str(r.kind));
    row.push_back(readers::Cell::count(static_cast<int64_t>(r.count)));
    row.push_back(readers::Cell::bytes(static_cast<int64_t>(r.bytes)));
    row.push_back(readers::Cell::nanoseconds(r.deviceNs));
    readers::Cell bw = readers::Cell::ratio(r.bandwidth(), 0);
    bw.text = r.deviceNs > 0 ? readers::formatBytes(static_cast<uint64_t>(r.bandwidth())) + "/s" : "-";
    row.push_back(bw);
    t.add(std::move(row));
  }
  if (text) {
    std::cout << "Allocations\n";
    if (allocations.empty()) std::cout << "  " << readers::nothingFoundHint(opened.pointers(), format::kModeMemory, "allocations") << "\n";
    else a.print(std::cout, format);
    std::cout << "\nTransfers\n";
    if (transfers.empty()) std::cout << "  " << readers::nothingFoundHint(opened.pointers(), format::kModeKernels, "transfers") << "\n";
    else t.print(std::cout, format);
  } else if (format == readers::OutputFormat::jsonl) {
    a.print(std::cout, format);
    t.print(std::cout, format);
  } else {
    a.print(std::cout, format);
    std::cout << "\n";
    t.print(std::cout, format);
  }
  return opened.failures ? 1 : 0;
}

}  // namespace

Action addMemoryCommand(CLI::App& app) {
  auto o = std::make_shared<MemoryOptions>();
  auto* cmd = app.add_subcommand("memory", "Allocations by kind (peaks, totals) and copies by direction with bandwidth");
  cmd->add_option("files", o->files, "Capture files (several merge)")->required();
  cmd->add_option("--format", o->format, "text, csv or jsonl");
  cmd->add_flag("--per-process", o->perProcess, "One row per process (rank)");
  cmd->add_flag("--events", o->events,
                "Every allocation and free in order: time into the run, kind, size, address, the call and stack that "
                "made it");
  cmd->add_option("--at", o->at, "The allocations live at this offset into the run (seconds): made and not yet freed");
  addReportFilterOptions(*cmd, o->filter);
  return [o] { return memory(*o); };
}

}  // namespace gtap::cli
