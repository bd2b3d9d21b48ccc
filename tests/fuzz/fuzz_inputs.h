// What each fuzz target does with its input, shared with the regression tests
// of the normal build (tests/unit/fuzz_regression_test.cpp), which feed the
// inputs the fuzzers found through the same calls. Each function models a
// command: an input may be refused with the exception the command reports,
// and must do nothing worse.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <ostream>
#include <span>
#include <streambuf>
#include <string>
#include <vector>

#include "gtap/format/reader.h"
#include "gtap/readers/api_stats.h"
#include "gtap/readers/capture.h"
#include "gtap/readers/capture_archive.h"
#include "gtap/readers/counter_stats.h"
#include "gtap/readers/counters.h"
#include "gtap/readers/executables.h"
#include "gtap/readers/flame.h"
#include "gtap/readers/memory_events.h"
#include "gtap/readers/memory_stats.h"
#include "gtap/readers/overview.h"
#include "gtap/readers/ranges.h"
#include "gtap/readers/replay_dump.h"
#include "gtap/readers/replay_stream.h"
#include "gtap/readers/replayer.h"
#include "gtap/readers/roofline.h"
#include "gtap/readers/timeline_builder.h"

namespace gtap::fuzz {

// Output formatted whole and thrown away.
class Discard : public std::streambuf {
 protected:
  int overflow(int c) override { return c; }
  std::streamsize xsputn(const char*, std::streamsize n) override { return n; }
};

// The reports (info, api, kernels, memory, summary, explain, executables,
// counters):
// the capture read, its calls, device work, overview, kernels, transfers,
// allocations, timeline and code objects, the readers that stream the device
// operations (and go on whole at IREE HAL work), then every chunk decoded.
inline void captureReader(std::span<const uint8_t> bytes, bool inArchive = false) {
  try {
    // A merged file (gtap merge): its index, then each member as a capture.
    if (!inArchive && bytes.size() >= 8 && std::memcmp(bytes.data(), readers::kArchiveMagic, 8) == 0) {
      readers::CaptureArchive archive(bytes, "fuzz-input");
      size_t read = 0;
      for (const auto& m : archive.members())
        if (read++ < 8) captureReader(archive.bytes(m), true);
      return;
    }
    readers::Capture capture(bytes, "fuzz-input");
    readers::summarizeApi({&capture});
    // Device work, with hostile device clocks and object references.
    std::vector<readers::LoadedCapture> loaded{{&capture, readers::loadDeviceWork(capture)}};
    readers::overviewOf(loaded[0], 3);
    readers::kernelRows(loaded, readers::KernelGrouping::shape, true);
    readers::allocationRows(loaded, false);
    // gtap memory --events and --at, and the JSON Lines export's memory rows.
    auto events = readers::memoryEvents(capture, loaded[0].work);
    readers::liveAt(events, events.empty() ? 0 : events[events.size() / 2].op.hostNs);
    readers::transferRows(loaded, false);
    readers::buildTimeline(loaded);
    std::vector<std::string> notes;
    readers::executableRows(loaded, notes);  // blob reassembly and code-object parsing
    const readers::Capture* streamed[] = {&capture};
    readers::kernelRowsStreamed(streamed, readers::KernelGrouping::queue, true, notes);
    // Named ranges: gtap info's count and kernels --by=range (the timelines
    // below draw them).
    readers::describeRanges(readers::loadRanges(capture));
    readers::kernelRowsStreamed(streamed, readers::KernelGrouping::range, false, notes);
    // What explain and summary build in their one pass (the symboliser that
    // names explain's stacks is not part of the fuzzing build).
    readers::DeviceWork work;
    readers::KernelRowsBuilder kernels(readers::KernelGrouping::shape, false);
    kernels.beginCapture(0, capture, work);
    readers::overviewStreamed(
        capture, work, [&](const readers::DeviceOp& op) { kernels.add(op); }, 3,
        [&] {
          kernels = readers::KernelRowsBuilder(readers::KernelGrouping::shape, false);
          kernels.beginCapture(0, capture, work);
        });
    kernels.rows();
    // The timeline exports' reading: a batch at a time (stacks named by a
    // resolver that answers for every module, as a symboliser might).
    readers::FrameResolver resolve = [](const readers::HostModule& m, uint64_t address, std::string& problem) {
      if (address & 1) problem = "odd address in " + m.path;
      return std::vector<readers::ResolvedFrame>{{"f", m.path, 1, (address & 2) != 0}, {"main", "", 0, false}};
    };
    readers::buildTimeline(streamed, notes, resolve);
    // gtap flame: every weight and output, its stacks named the same way.
    for (auto weight : {readers::FlameWeight::device, readers::FlameWeight::api, readers::FlameWeight::count}) {
      readers::FlameOptions options;
      options.weight = weight;
      options.perProcess = weight == readers::FlameWeight::api;
      options.maxDepth = weight == readers::FlameWeight::count ? 2 : 0;
      // Instructions named by a resolver that answers for some offsets, as
      // a debug ELF would.
      readers::InstructionResolver instructions = [](const readers::Capture&, const readers::Object& module,
                                                     const std::string& kernel, uint64_t offset, std::string& problem) {
        if (module.debugInfoSize == 0) problem = "no debug ELF";
        if (offset & 1) return std::vector<readers::ResolvedFrame>{};
        return std::vector<readers::ResolvedFrame>{{kernel, "k.c", int(offset & 0xff), (offset & 2) != 0}};
      };
      auto graph = readers::buildFlameGraph(streamed, options, resolve, instructions);
      Discard sink;
      std::ostream out(&sink);
      readers::writeFolded(graph, out);
      readers::writeFlameSvg(graph, "fuzz", out);
      readers::writeFlameHtml(graph, "fuzz", out);
    }
    // gtap kernels --instructions.
    readers::instructionReport(streamed, "*", {});
    // gtap counters (per kernel and per dispatch, device metrics, the
    // roofline's table, plot and page section) and the exports' reading of
    // counter values.
    readers::loadCounters(capture);
    for (bool perDispatch : {false, true}) {
      auto counters = readers::counterReport(streamed, perDispatch, perDispatch);
      auto points = counters.roofline();
      Discard sink;
      std::ostream out(&sink);
      readers::writeRooflineSvg(points, "fuzz", out);
      out << readers::rooflineHtmlSection(points);
    }
    {
      readers::DispatchCounters dispatchCounters(readers::loadCounters(capture));
      readers::DeviceWork counted;
      readers::visitDeviceWork(capture, counted, false, [&](std::span<const readers::DeviceOp> ops) {
        for (const auto& op : ops)
          if (const auto* set = dispatchCounters.setOf(op))
            for (size_t i = 0; i < set->counters.size(); ++i)
              readers::counterValueText(set->counters[i].value(op.counterValues[i]));
      });
      dispatchCounters.problems(capture.path());
    }
    // What the record exports read: the operations once each, in order.
    readers::DeviceWork visited;
    readers::visitDeviceWork(capture, visited, true, [](std::span<const readers::DeviceOp> ops) {
      volatile size_t n = ops.size();
      (void)n;
    });
    for (const auto& chunk : capture.reader().chunks()) {
      try {
        auto decoded = capture.reader().decode(chunk);
        if (chunk.kind == static_cast<uint16_t>(schema::ChunkKind::BLOB)) {
          auto blob = decoded.root<schema::Blob>();
          volatile size_t n = blob.getData().size();
          (void)n;
        }
      } catch (const format::FormatError&) {
      } catch (const kj::Exception&) {
      }
    }
  } catch (const format::FormatError&) {
  }
}

// gtap dump: opening the capture and reading its replay stream may refuse the
// input; writing the records and the summary must not throw.
inline void replayDump(std::span<const uint8_t> bytes) {
  std::unique_ptr<readers::Capture> capture;
  readers::ReplayStream stream;
  try {
    capture = std::make_unique<readers::Capture>(bytes, "fuzz-input");
    stream = readers::loadReplayStream(*capture);
  } catch (const std::exception&) {
    return;
  }
  Discard sink;
  std::ostream out(&sink);
  readers::writeReplayDumpText(out, *capture, stream);
  readers::writeReplayDumpJsonLines(out, *capture, stream);
}

// gtap replay up to the first call into a runtime: the stream read and
// validated (cut streams, unsupported records, scopes) with every payload
// resolved (blobs assembled, external files checked, read-backs included).
// Returns why the input was refused (empty when it would be replayed).
inline std::string replayValidate(std::span<const uint8_t> bytes) {
  try {
    readers::Capture capture(bytes, "fuzz-input");
    readers::ReplayStream stream = readers::loadReplayStream(capture);
    readers::ReplayOptions options;
    options.verify = true;
    readers::Replayer replayer(capture, stream, options);
    replayer.validate();
  } catch (const std::exception& e) {
    return e.what();
  }
  return {};
}

}  // namespace gtap::fuzz
