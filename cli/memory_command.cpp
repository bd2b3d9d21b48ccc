// gtap memory: allocations by kind and transfers by direction.
#include <iostream>

#include "commands.h"
#include "gtap/readers/memory_stats.h"
#include "gtap/readers/recorded_mode.h"
#include "gtap/readers/table.h"
#include "open_captures.h"

namespace gtap::cli {

namespace {

struct MemoryOptions {
  std::vector<std::string> files;
  std::string format = "text";
  bool perProcess = false;
};

int memory(const MemoryOptions& o) {
  readers::OutputFormat format;
  if (!readers::parseOutputFormat(o.format, format)) {
    std::cerr << "gtap memory: --format must be text, csv or jsonl\n";
    return 2;
  }
  auto opened = openCaptures(o.files, "memory");
  if (opened.captures.empty()) return 1;
  reportNotes(opened, "memory");
  // Copies and fills a batch of device operations at a time (the
  // allocations are memory operations, read whole): memory follows the rows,
  // not the operations.
  std::vector<readers::LoadedCapture> loaded;
  readers::TransferTable transferTable(o.perProcess);
  for (const auto& c : opened.captures) {
    loaded.push_back({c.get(), readers::DeviceWork{}});
    transferTable.beginCapture(*c);
    readers::streamDeviceWork(*c, loaded.back().work, false, [&](std::span<const readers::DeviceOp> ops) {
      for (const auto& op : ops) transferTable.add(op);
      return true;
    });
    for (const auto& n : loaded.back().work.notes) std::cerr << "gtap memory: " << n << "\n";
  }
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
  return [o] { return memory(*o); };
}

}  // namespace gtap::cli
