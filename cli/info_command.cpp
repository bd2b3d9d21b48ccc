// gtap info: what a capture file holds and whether it was closed cleanly.
#include <ctime>
#include <iostream>

#include "commands.h"
#include "gtap/format/device_filter.h"
#include "gtap/readers/overview.h"
#include "gtap/readers/phases.h"
#include "gtap/readers/ranges.h"
#include "gtap/readers/table.h"
#include "open_captures.h"

namespace gtap::cli {

namespace {

struct InfoOptions {
  std::vector<std::string> files;
  std::string format = "text";
};

std::string isoTime(int64_t realtimeNs) {
  std::time_t t = static_cast<std::time_t>(realtimeNs / 1000000000);
  std::tm tm {};
  gmtime_r(&t, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string status(const readers::Capture& c) {
  const auto& r = c.recovery();
  if (r.closedCleanly) return "closed cleanly (" + c.trailer().closeReason + ")";
  return "recovered " + std::to_string(r.validBytes) + " of " + std::to_string(r.fileSize) +
         " bytes: " + r.stopReason;
}

int info(const InfoOptions& o) {
  readers::OutputFormat format;
  if (!readers::parseOutputFormat(o.format, format) || format == readers::OutputFormat::csv) {
    std::cerr << "gtap info: --format must be text or jsonl\n";
    return 2;
  }
  auto opened = openCaptures(o.files, "info");
  for (const auto& c : opened.captures) {
    const auto& p = c->process();
    uint64_t stored = 0, raw = 0;
    for (const auto& [kind, s] : c->kindStats()) {
      stored += s.storedBytes;
      raw += s.rawBytes;
    }
    // Counting events needs a pass over the event chunks.
    uint64_t events = c->forEachCall([](const readers::ApiCall&) {});
    double ratio = stored ? static_cast<double>(raw) / static_cast<double>(stored) : 0;
    std::string args;
    for (const auto& a : p.arguments) args += (args.empty() ? "" : " ") + a;
    // What the capture says it could not see.
    // Objects say it: the operations are not read (the stream stops at once).
    readers::DeviceWork objects;
    readers::streamDeviceWork(*c, objects, false, [](std::span<const readers::DeviceOp>) { return false; });
    std::vector<std::string> unrecordedWaits = readers::halUnrecordedWaits(objects);
    readers::ProgramRanges ranges = readers::loadRanges(*c);
    if (format == readers::OutputFormat::jsonl) {
      std::cout << "{\"type\":\"capture\",\"file\":\"" << readers::jsonEscape(c->path()) << "\",\"format\":\""
                << c->reader().formatMajor() << "." << c->reader().formatMinor()
                << "\",\"producer\":\"" << readers::jsonEscape(p.producer) << "\",\"pid\":" << p.pid
                << ",\"ppid\":" << p.ppid << ",\"forked_from\":" << p.forkedFromPid
                << ",\"rank\":" << p.rank << ",\"host\":\"" << readers::jsonEscape(p.hostname)
                << "\",\"executable\":\"" << readers::jsonEscape(p.executable)
                << "\",\"command\":\"" << readers::jsonEscape(args) << "\",\"mode\":\""
                << readers::jsonEscape(p.mode) << "\",\"device_filter\":\""
                << readers::jsonEscape(gtap::format::deviceWorkFilter(p.config)) << "\",\"start\":\"" << isoTime(p.startRealtimeNs)
                << "\",\"closed_cleanly\":" << (c->recovery().closedCleanly ? "true" : "false")
                << ",\"close_reason\":\"" << readers::jsonEscape(c->trailer().closeReason)
                << "\",\"recovery\":\"" << readers::jsonEscape(c->recovery().stopReason)
                << "\",\"file_bytes\":" << c->recovery().fileSize
                << ",\"valid_bytes\":" << c->recovery().validBytes << ",\"events\":" << events
                << ",\"events_dropped\":" << c->trailer().eventsDropped << ",\"hal_waits_unrecorded_in\":[";
      for (size_t i = 0; i < unrecordedWaits.size(); ++i)
        std::cout << (i ? "," : "") << "\"" << readers::jsonEscape(unrecordedWaits[i]) << "\"";
      std::cout << "]"
                << ",\"threads\":" << c->threads().size() << ",\"ranges\":" << ranges.ranges.size()
                << ",\"ranges_open_at_end\":" << ranges.openAtEnd()
                << ",\"unmatched_range_pops\":" << ranges.unmatchedPops << ",\"unrecorded_functions\":[";
      bool firstName = true;
      for (const auto& n : c->unrecordedFunctions()) {
        std::cout << (firstName ? "" : ",") << "\"" << readers::jsonEscape(n) << "\"";
        firstName = false;
      }
      std::cout << "],\"chunks\":{";
      bool first = true;
      for (const auto& [kind, s] : c->kindStats()) {
        std::cout << (first ? "" : ",") << "\"" << readers::kindName(kind) << "\":{\"count\":"
                  << s.chunks << ",\"stored_bytes\":" << s.storedBytes << ",\"raw_bytes\":" << s.rawBytes
                  << "}";
        first = false;
      }
      std::cout << "},\"compression_ratio\":" << ratio << "}\n";
      continue;
    }
    std::cout << c->path() << "\n"
              << "  format       " << c->reader().formatMajor() << "." << c->reader().formatMinor()
              << " (" << p.producer << ")\n"
              << "  status       " << status(*c) << "\n"
              << "  process      pid " << p.pid << ", parent " << p.ppid;
    if (p.forkedFromPid) std::cout << ", forked from captured pid " << p.forkedFromPid;
    if (p.rank >= 0) std::cout << ", rank " << p.rank << (p.worldSize > 0 ? " of " + std::to_string(p.worldSize) : "");
    std::cout << "\n  host         " << p.hostname << "\n"
              << "  command      " << args << "\n"
              << "  started      " << isoTime(p.startRealtimeNs) << "\n"
              << "  mode         " << p.mode << "\n";
    if (std::string filter = gtap::format::deviceWorkFilter(p.config); !filter.empty())
      std::cout << "  filtered     device work of " << filter << " only\n";
    if (std::string phases = readers::describePhases(*c, 0); !phases.empty())
      std::cout << "  phases       " << phases << "\n";
    if (std::string named = readers::describeRanges(ranges); !named.empty())
      std::cout << "  ranges       " << named << "\n";
    std::cout
              << "  threads      " << c->threads().size() << "\n"
              << "  events       " << events;
    if (c->trailer().eventsDropped) std::cout << " (" << c->trailer().eventsDropped << " dropped)";
    // Calls to these passed through to the runtime without a record.
    auto unrecorded = c->unrecordedFunctions();
    if (!unrecorded.empty()) {
      std::cout << "\n  unrecorded functions: " << unrecorded.size() << " (";
      for (size_t i = 0; i < unrecorded.size(); ++i) std::cout << (i ? ", " : "") << unrecorded[i];
      std::cout << ")";
    }
    std::cout << "\n  size         " << readers::formatBytes(c->recovery().fileSize) << " on disk, "
              << readers::formatBytes(raw) << " decoded, ratio ";
    std::printf("%.1f\n", ratio);
    std::cout.flush();
    readers::Table chunks("chunk", {"chunk kind", "count", "stored", "decoded"});
    for (const auto& [kind, s] : c->kindStats())
      chunks.add({readers::Cell::str(readers::kindName(kind)), readers::Cell::count(static_cast<int64_t>(s.chunks)),
                  readers::Cell::bytes(static_cast<int64_t>(s.storedBytes)),
                  readers::Cell::bytes(static_cast<int64_t>(s.rawBytes))});
    std::cout << "\n";
    chunks.print(std::cout, readers::OutputFormat::text);
    for (const auto& n : c->notes()) std::cout << "  note: " << n << "\n";
    for (const auto& n : ranges.problems) std::cout << "  note: " << n << "\n";
    if (!unrecordedWaits.empty())
      std::cout << "  IREE waits   not recorded: " << readers::halUnrecordedWaitsText(unrecordedWaits, UINT64_MAX)
                << "\n";
    std::cout << "\n";
  }
  return opened.failures ? 1 : 0;
}

}  // namespace

Action addInfoCommand(CLI::App& app) {
  auto o = std::make_shared<InfoOptions>();
  auto* cmd = app.add_subcommand("info", "What capture files hold: process, chunks, sizes, clean close or recovery");
  cmd->add_option("files", o->files, "Capture files")->required();
  cmd->add_option("--format", o->format, "text or jsonl");
  return [o] { return info(*o); };
}

}  // namespace gtap::cli
