// gtap summary: what ran, for how long, device busy time, top kernels,
// transfers and allocations, and what data is missing or was recovered.
#include <algorithm>
#include <map>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

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
#include "report_filter_options.h"
#include "symbols.h"

namespace gtap::cli {

namespace {

struct SummaryOptions {
  std::vector<std::string> files;
  std::string format = "text";
  size_t top = 5;
  ReportFilterOptions filter;
};

std::string percent(int64_t part, int64_t whole) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0);
  return buf;
}

// One process's part of the summary: a process_summary row, or its lines.
void writeProcessSection(std::ostream& out, const readers::Capture& capture, const readers::DeviceWork& work,
                         const readers::ProcessOverview& p, readers::OutputFormat format) {
  if (format == readers::OutputFormat::jsonl) {
  out << "{\"type\":\"process_summary\",\"file\":\"" << readers::jsonEscape(capture.path()) << "\",\"process\":\""
            << readers::jsonEscape(p.label) << "\",\"duration_ns\":" << (p.endNs - p.startNs)
            << ",\"api_calls\":" << p.apiCalls << ",\"api_ns\":" << p.apiNs << ",\"threads\":" << p.threads
            << ",\"allocations\":" << p.allocations << ",\"allocated_bytes\":" << p.allocatedBytes
            << ",\"mode\":\"" << readers::jsonEscape(capture.process().mode) << "\""
            << ",\"device_filter\":\"" << readers::jsonEscape(gtap::format::deviceWorkFilter(capture.process().config))
            << "\""
            << ",\"closed_cleanly\":" << (p.closedCleanly ? "true" : "false")
            << ",\"events_dropped\":" << p.eventsDropped << ",\"hal_dispatches\":" << p.halDispatches
            << ",\"hal_submissions\":" << p.halSubmissions << ",\"hal_waits\":" << p.halWaits
            << ",\"hal_waits_unrecorded_in\":[";
  for (size_t i = 0; i < p.halUnrecordedWaits.size(); ++i)
    out << (i ? "," : "") << "\"" << readers::jsonEscape(p.halUnrecordedWaits[i]) << "\"";
  out << "],\"hal_executions\":" << work.halJoin.executions
            << ",\"hal_joined\":" << work.halJoin.joined << ",\"devices\":[";
  for (size_t i = 0; i < p.devices.size(); ++i) {
    const auto& d = p.devices[i];
    out << (i ? "," : "") << "{\"device\":\"" << readers::jsonEscape(d.name) << "\",\"busy_ns\":" << d.busyNs
              << ",\"span_ns\":" << (d.lastNs - d.firstNs) << ",\"kernels\":" << d.kernels
              << ",\"copies\":" << d.copies << ",\"copy_bytes\":" << d.copyBytes << ",\"fills\":" << d.fills
              << ",\"untimed\":" << d.untimed << "}";
  }
  out << "]}\n";
    return;
  }
  int64_t duration = p.endNs - p.startNs;
  out << p.label << "  " << p.executable << "  (" << capture.path() << ")\n";
  out << "  ran          " << readers::formatNanoseconds(duration) << " from first to last record, "
            << p.threads << " thread" << (p.threads == 1 ? "" : "s") << "\n";
  if (std::string phases = readers::describePhases(capture, p.endNs); !phases.empty())
    out << "  phases       " << phases << "\n";
  out << "  recorded     mode " << readers::recordedMode(capture)
            << "\n";
  // A filtered capture is not the whole of the program's device work.
  if (std::string filter = gtap::format::deviceWorkFilter(capture.process().config); !filter.empty())
    out << "  filtered     device work of " << filter << " only: other dispatches ran unrecorded\n";
  out << "  API calls    " << p.apiCalls << " (" << readers::formatNanoseconds(p.apiNs) << " inside them, "
            << percent(p.apiNs, duration) << " of the run)";
  if (p.failedCalls) out << ", " << p.failedCalls << " returned an error";
  if (p.unfinishedCalls) out << ", " << p.unfinishedCalls << " never returned";
  out << "\n";
  for (const auto& d : p.devices) {
    out << "  device       " << d.name << ": busy " << readers::formatNanoseconds(d.busyNs) << " ("
              << percent(d.busyNs, duration) << " of the run), " << d.kernels << " kernels, " << d.copies
              << " copies (" << readers::formatBytes(d.copyBytes) << "), " << d.fills << " fills, " << d.barriers
              << " barriers\n";
  }
  if (p.devices.empty() && !p.halDispatches && !p.halFills && !p.halCopies)
    out << "  device       " << readers::nothingFoundHint({&capture}, format::kModeKernels, "device operations") << "\n";
  if (p.halDispatches || p.halFills || p.halCopies || p.halSubmissions || p.halWaits) {
    out << "  IREE HAL     " << p.halDispatches << " dispatches recorded into command buffers, of "
              << p.halExecutables << " executable" << (p.halExecutables == 1 ? "" : "s");
    if (p.halFills || p.halCopies)
      out << "; transfers: " << p.halFills << " fills (" << readers::formatBytes(p.halFillBytes) << "), "
                << p.halCopies << " copies (" << readers::formatBytes(p.halCopyBytes) << ")";
    if (p.halSubmissions || p.halWaits)
      out << "; " << p.halSubmissions << " queue submissions, " << p.halWaits << " semaphore waits";
    out << "\n";
    // The device dispatches they became, where the device runtime is recorded too.
    const auto& join = work.halJoin;
    if (join.executions && join.deviceKernels)
      out << "  HAL->device  " << join.joined << " of " << join.executions
                << " dispatch executions joined to the device dispatch they became; " << join.notFromHal << " of "
                << join.deviceKernels << " device dispatches came from no HAL dispatch\n";
  }
  if (!p.halUnrecordedWaits.empty())
    out << "  IREE waits   not recorded: " << readers::halUnrecordedWaitsText(p.halUnrecordedWaits, p.halWaits)
              << "\n";
  if (p.allocations)
    out << "  allocations  " << p.allocations << " (" << readers::formatBytes(p.allocatedBytes) << ")\n";
  out << "  data         "
            << (p.closedCleanly ? std::string("complete (file closed cleanly)") : "recovered: " + p.recovery);
  if (p.eventsDropped) out << "; " << p.eventsDropped << " events could not be written";
  out << "\n";
  uint64_t untimed = 0;
  for (const auto& d : p.devices) untimed += d.untimed;
  if (untimed) {
    out << "  untimed      " << untimed << " device operations without device times:";
    for (const auto& r : p.untimedReasons) out << " " << r << ";";
    out << "\n";
  }
  out << "\n";
}

int summary(const SummaryOptions& o) {
  readers::OutputFormat format;
  if (!readers::parseOutputFormat(o.format, format) || format == readers::OutputFormat::csv) {
    std::cerr << "gtap summary: --format must be text or jsonl\n";
    return 2;
  }
  // Each capture's overview, its device operations read a batch at a time
  // (twice, with the join between, when it has IREE HAL command-buffer
  // work), with its transfers and kernels in the same pass (kept apart
  // until it is known whether it is read again, joined). A few captures at
  // once (gtap -j), each closed once its section is written and its tables
  // merged, in the order given: memory does not grow with the files.
  struct Part {
    std::string section;
    std::optional<readers::TransferTable> transfers;
    std::optional<readers::KernelRowsBuilder> kernels;
    std::vector<std::string> notes;
  };
  readers::TransferTable transferTable(false);
  readers::KernelRowsBuilder kernelTable(readers::KernelGrouping::name, false);
  // Captures with sampled instructions stay open for the hottest lines.
  std::vector<readers::CaptureFile> sampled;
  auto streamed = streamCaptures<Part>(
      o.files, "summary", o.filter,
      [&](const readers::Capture& c) {
        Part part;
        readers::DeviceWork work;
        readers::TransferTable mine(false);
        mine.beginCapture(c);
        readers::KernelRowsBuilder myKernels(readers::KernelGrouping::name, false);
        myKernels.beginCapture(0, c, work);
        auto overview = readers::overviewStreamed(
            c, work,
            [&](const readers::DeviceOp& op) {
              mine.add(op);
              myKernels.add(op);
            },
            0,
            [&] {
              // IREE HAL command-buffer work, joined: the operations come again.
              mine = readers::TransferTable(false);
              mine.beginCapture(c);
              myKernels = readers::KernelRowsBuilder(readers::KernelGrouping::name, false);
              myKernels.beginCapture(0, c, work);
            });
        std::ostringstream section;
        writeProcessSection(section, c, work, overview, format);
        part.section = std::move(section).str();
        part.transfers.emplace(std::move(mine));
        // Its groups own what they show of the work, which ends here.
        part.kernels.emplace(readers::KernelGrouping::name, false);
        part.kernels->merge(std::move(myKernels));
        part.notes = std::move(work.notes);
        return part;
      },
      [&](readers::CaptureFile& file, Part& part) {
        const readers::Capture& c = *file.captures[0];
        for (const auto& n : part.notes) std::cerr << "gtap summary: " << n << "\n";
        std::cout << part.section;
        transferTable.beginCapture(c);
        transferTable.merge(*part.transfers);
        kernelTable.merge(std::move(*part.kernels));
        if (readers::recorded(c, format::kModeSamples)) sampled.push_back(std::move(file));
      },
      false);
  if (streamed.usage) return 2;
  if (streamed.captures == 0) return 1;
  auto rows = kernelTable.rows();
  if (!rows.empty()) {
    if (format == readers::OutputFormat::text)
      std::cout << "Top kernels" << (streamed.captures > 1 ? " (all files)" : "") << "\n";
    // IREE HAL dispatches and the device's are two levels of the same work.
    bool levels = std::any_of(rows.begin(), rows.end(), [](const auto& r) { return r.level == "hal"; });
    std::vector<std::string> columns = {"kernel", "count", "total", "mean", "share"};
    if (levels) columns.insert(columns.begin() + 1, "level");
    // Mode samples: each kernel's hottest source line and its share of the
    // kernel's samples (gtap kernels --instructions has them all).
    std::map<std::string, std::string> hottest;
    std::vector<const readers::Capture*> pointers;
    for (const auto& f : sampled) pointers.push_back(f.captures[0].get());
    if (!pointers.empty()) {
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
  return streamed.failures ? 1 : 0;
}

}  // namespace

Action addSummaryCommand(CLI::App& app) {
  auto o = std::make_shared<SummaryOptions>();
  auto* cmd = app.add_subcommand("summary", "What ran, for how long, device busy time, top kernels, transfers, allocations");
  cmd->add_option("files", o->files, "Capture files")->required();
  cmd->add_option("--format", o->format, "text or jsonl");
  cmd->add_option("--top", o->top, "How many kernels to list");
  addReportFilterOptions(*cmd, o->filter);
  return [o] { return summary(*o); };
}

}  // namespace gtap::cli
