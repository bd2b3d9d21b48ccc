// gtap summary: what ran, for how long, device busy time, top kernels,
// transfers and allocations, and what data is missing or was recovered.
#include <algorithm>
#include <map>
#include <iostream>
#include <memory>
#include <optional>

#include "commands.h"
#include "gtap/format/device_filter.h"
#include "gtap/format/modes.h"
#include "gtap/readers/instruction_samples.h"
#include "gtap/readers/memory_stats.h"
#include "gtap/readers/overview.h"
#include "gtap/readers/parallel.h"
#include "gtap/readers/phases.h"
#include "gtap/readers/recorded_mode.h"
#include "gtap/readers/table.h"
#include "open_captures.h"
#include "symbols.h"

namespace gtap::cli {

namespace {

struct SummaryOptions {
  std::vector<std::string> files;
  std::string format = "text";
  size_t top = 5;
};

std::string percent(int64_t part, int64_t whole) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0);
  return buf;
}

int summary(const SummaryOptions& o) {
  readers::OutputFormat format;
  if (!readers::parseOutputFormat(o.format, format) || format == readers::OutputFormat::csv) {
    std::cerr << "gtap summary: --format must be text or jsonl\n";
    return 2;
  }
  auto opened = openCaptures(o.files, "summary");
  if (opened.captures.empty()) return 1;
  // Each capture's overview, its device operations read a batch at a time
  // (twice, with the join between, when it has IREE HAL command-buffer work).
  struct Read {
    const readers::Capture* capture;
    std::unique_ptr<readers::DeviceWork> work;
    readers::ProcessOverview overview;
  };
  // Transfers and kernels in the same pass (each capture's rows kept apart
  // until it is known whether it is read again, joined). Each capture on its
  // own (gtap -j: several at once), merged in the order given.
  struct Part {
    std::optional<readers::TransferTable> transfers;
    std::optional<readers::KernelRowsBuilder> kernels;
  };
  std::vector<Read> reads(opened.captures.size());
  std::vector<Part> parts(opened.captures.size());
  readers::TransferTable transferTable(false);
  readers::KernelRowsBuilder kernelTable(readers::KernelGrouping::name, false);
  readers::forEachInParallel(opened.captures.size(), [&](size_t ci) {
    const auto& c = opened.captures[ci];
    Read& r = reads[ci];
    r = Read{c.get(), std::make_unique<readers::DeviceWork>(), {}};
    readers::TransferTable mine(false);
    mine.beginCapture(*c);
    readers::KernelRowsBuilder myKernels(readers::KernelGrouping::name, false);
    myKernels.beginCapture(ci, *c, *r.work);
    r.overview = readers::overviewStreamed(
        *c, *r.work,
        [&](const readers::DeviceOp& op) {
          mine.add(op);
          myKernels.add(op);
        },
        0,
        [&] {
          // IREE HAL command-buffer work, joined: the operations come again.
          mine = readers::TransferTable(false);
          mine.beginCapture(*c);
          myKernels = readers::KernelRowsBuilder(readers::KernelGrouping::name, false);
          myKernels.beginCapture(ci, *c, *r.work);
        });
    parts[ci].transfers.emplace(std::move(mine));
    parts[ci].kernels.emplace(std::move(myKernels));
  }, [&](size_t ci) {
    transferTable.beginCapture(*reads[ci].capture);
    transferTable.merge(*parts[ci].transfers);
    kernelTable.merge(std::move(*parts[ci].kernels));
    parts[ci] = Part();
    reads[ci].capture->reader().releasePages();
    for (const auto& n : reads[ci].work->notes) std::cerr << "gtap summary: " << n << "\n";
  });
  if (format == readers::OutputFormat::jsonl) {
    for (const auto& read : reads) {
      const auto& p = read.overview;
      std::cout << "{\"type\":\"process_summary\",\"file\":\"" << readers::jsonEscape(read.capture->path()) << "\",\"process\":\""
                << readers::jsonEscape(p.label) << "\",\"duration_ns\":" << (p.endNs - p.startNs)
                << ",\"api_calls\":" << p.apiCalls << ",\"api_ns\":" << p.apiNs << ",\"threads\":" << p.threads
                << ",\"allocations\":" << p.allocations << ",\"allocated_bytes\":" << p.allocatedBytes
                << ",\"mode\":\"" << readers::jsonEscape(read.capture->process().mode) << "\""
                << ",\"device_filter\":\"" << readers::jsonEscape(gtap::format::deviceWorkFilter(read.capture->process().config))
                << "\""
                << ",\"closed_cleanly\":" << (p.closedCleanly ? "true" : "false")
                << ",\"events_dropped\":" << p.eventsDropped << ",\"hal_dispatches\":" << p.halDispatches
                << ",\"hal_submissions\":" << p.halSubmissions << ",\"hal_waits\":" << p.halWaits
                << ",\"hal_waits_unrecorded_in\":[";
      for (size_t i = 0; i < p.halUnrecordedWaits.size(); ++i)
        std::cout << (i ? "," : "") << "\"" << readers::jsonEscape(p.halUnrecordedWaits[i]) << "\"";
      std::cout << "],\"hal_executions\":" << read.work->halJoin.executions
                << ",\"hal_joined\":" << read.work->halJoin.joined << ",\"devices\":[";
      for (size_t i = 0; i < p.devices.size(); ++i) {
        const auto& d = p.devices[i];
        std::cout << (i ? "," : "") << "{\"device\":\"" << readers::jsonEscape(d.name) << "\",\"busy_ns\":" << d.busyNs
                  << ",\"span_ns\":" << (d.lastNs - d.firstNs) << ",\"kernels\":" << d.kernels
                  << ",\"copies\":" << d.copies << ",\"copy_bytes\":" << d.copyBytes << ",\"fills\":" << d.fills
                  << ",\"untimed\":" << d.untimed << "}";
      }
      std::cout << "]}\n";
    }
  }
  for (const auto& read : reads) {
    if (format == readers::OutputFormat::jsonl) break;
    const auto& p = read.overview;
    int64_t duration = p.endNs - p.startNs;
    std::cout << p.label << "  " << p.executable << "  (" << read.capture->path() << ")\n";
    std::cout << "  ran          " << readers::formatNanoseconds(duration) << " from first to last record, "
              << p.threads << " thread" << (p.threads == 1 ? "" : "s") << "\n";
    if (std::string phases = readers::describePhases(*read.capture, p.endNs); !phases.empty())
      std::cout << "  phases       " << phases << "\n";
    std::cout << "  recorded     mode " << readers::recordedMode(*read.capture)
              << "\n";
    // A filtered capture is not the whole of the program's device work.
    if (std::string filter = gtap::format::deviceWorkFilter(read.capture->process().config); !filter.empty())
      std::cout << "  filtered     device work of " << filter << " only: other dispatches ran unrecorded\n";
    std::cout << "  API calls    " << p.apiCalls << " (" << readers::formatNanoseconds(p.apiNs) << " inside them, "
              << percent(p.apiNs, duration) << " of the run)";
    if (p.failedCalls) std::cout << ", " << p.failedCalls << " returned an error";
    if (p.unfinishedCalls) std::cout << ", " << p.unfinishedCalls << " never returned";
    std::cout << "\n";
    for (const auto& d : p.devices) {
      std::cout << "  device       " << d.name << ": busy " << readers::formatNanoseconds(d.busyNs) << " ("
                << percent(d.busyNs, duration) << " of the run), " << d.kernels << " kernels, " << d.copies
                << " copies (" << readers::formatBytes(d.copyBytes) << "), " << d.fills << " fills, " << d.barriers
                << " barriers\n";
    }
    if (p.devices.empty() && !p.halDispatches && !p.halFills && !p.halCopies)
      std::cout << "  device       " << readers::nothingFoundHint({read.capture}, format::kModeKernels, "device operations") << "\n";
    if (p.halDispatches || p.halFills || p.halCopies || p.halSubmissions || p.halWaits) {
      std::cout << "  IREE HAL     " << p.halDispatches << " dispatches recorded into command buffers, of "
                << p.halExecutables << " executable" << (p.halExecutables == 1 ? "" : "s");
      if (p.halFills || p.halCopies)
        std::cout << "; transfers: " << p.halFills << " fills (" << readers::formatBytes(p.halFillBytes) << "), "
                  << p.halCopies << " copies (" << readers::formatBytes(p.halCopyBytes) << ")";
      if (p.halSubmissions || p.halWaits)
        std::cout << "; " << p.halSubmissions << " queue submissions, " << p.halWaits << " semaphore waits";
      std::cout << "\n";
      // The device dispatches they became, where the device runtime is recorded too.
      const auto& join = read.work->halJoin;
      if (join.executions && join.deviceKernels)
        std::cout << "  HAL->device  " << join.joined << " of " << join.executions
                  << " dispatch executions joined to the device dispatch they became; " << join.notFromHal << " of "
                  << join.deviceKernels << " device dispatches came from no HAL dispatch\n";
    }
    if (!p.halUnrecordedWaits.empty())
      std::cout << "  IREE waits   not recorded: " << readers::halUnrecordedWaitsText(p.halUnrecordedWaits, p.halWaits)
                << "\n";
    if (p.allocations)
      std::cout << "  allocations  " << p.allocations << " (" << readers::formatBytes(p.allocatedBytes) << ")\n";
    std::cout << "  data         "
              << (p.closedCleanly ? std::string("complete (file closed cleanly)") : "recovered: " + p.recovery);
    if (p.eventsDropped) std::cout << "; " << p.eventsDropped << " events could not be written";
    std::cout << "\n";
    uint64_t untimed = 0;
    for (const auto& d : p.devices) untimed += d.untimed;
    if (untimed) {
      std::cout << "  untimed      " << untimed << " device operations without device times:";
      for (const auto& r : p.untimedReasons) std::cout << " " << r << ";";
      std::cout << "\n";
    }
    std::cout << "\n";
  }
  auto rows = kernelTable.rows();
  if (!rows.empty()) {
    if (format == readers::OutputFormat::text)
      std::cout << "Top kernels" << (reads.size() > 1 ? " (all files)" : "") << "\n";
    // IREE HAL dispatches and the device's are two levels of the same work.
    bool levels = std::any_of(rows.begin(), rows.end(), [](const auto& r) { return r.level == "hal"; });
    std::vector<std::string> columns = {"kernel", "count", "total", "mean", "share"};
    if (levels) columns.insert(columns.begin() + 1, "level");
    // Mode samples: each kernel's hottest source line and its share of the
    // kernel's samples (gtap kernels --instructions has them all).
    std::map<std::string, std::string> hottest;
    auto pointers = opened.pointers();
    if (std::any_of(pointers.begin(), pointers.end(),
                    [](const readers::Capture* c) { return readers::recorded(*c, format::kModeSamples); })) {
      readers::Symbolizer symbolizer;
      auto report = readers::instructionReport(pointers, "*", instructionResolverFor(symbolizer));
      for (const auto& r : report.rows)  // hottest first
        if (!hottest.count(r.kernel))
          hottest[r.kernel] = r.text + " (" + readers::Cell::ratio(r.share * 100, 0).text + "%)";
    }
    if (!hottest.empty()) columns.push_back("hottest line");
    readers::Table t("top_kernel", columns);
    for (size_t i = 0; i < rows.size() && i < o.top; ++i) {
      const auto& r = rows[i];
      readers::Cell share = readers::Cell::ratio(r.share * 100, 1);
      share.text += "%";
      std::vector<readers::Cell> row = {readers::Cell::str(r.key),
                                        readers::Cell::count(static_cast<int64_t>(r.time.count + r.untimed)),
                                        readers::Cell::nanoseconds(r.time.total),
                                        readers::Cell::nanoseconds(static_cast<int64_t>(r.time.mean + 0.5)), share};
      if (levels) row.insert(row.begin() + 1, readers::Cell::str(r.level));
      if (!hottest.empty()) {
        auto h = hottest.find(r.key);
        row.push_back(readers::Cell::str(h == hottest.end() ? "-" : h->second));
      }
      t.add(std::move(row));
    }
    t.print(std::cout, format);
    if (format == readers::OutputFormat::text) std::cout << "\n";
  }
  auto transfers = transferTable.rows();
  if (!transfers.empty()) {
    if (format == readers::OutputFormat::text) std::cout << "Transfers\n";
    readers::Table t("transfer", {"kind", "count", "bytes", "device time"});
    for (const auto& r : transfers)
      t.add({readers::Cell::str(r.kind), readers::Cell::count(static_cast<int64_t>(r.count)),
             readers::Cell::bytes(static_cast<int64_t>(r.bytes)), readers::Cell::nanoseconds(r.deviceNs)});
    t.print(std::cout, format);
  }
  return opened.failures ? 1 : 0;
}

}  // namespace

Action addSummaryCommand(CLI::App& app) {
  auto o = std::make_shared<SummaryOptions>();
  auto* cmd = app.add_subcommand("summary", "What ran, for how long, device busy time, top kernels, transfers, allocations");
  cmd->add_option("files", o->files, "Capture files")->required();
  cmd->add_option("--format", o->format, "text or jsonl");
  cmd->add_option("--top", o->top, "How many kernels to list");
  return [o] { return summary(*o); };
}

}  // namespace gtap::cli
