#include "gtap/readers/explain.h"

#include <algorithm>
#include <cstdio>
#include <set>

#include "gtap/readers/overview.h"
#include "gtap/readers/recorded_mode.h"
#include "gtap/readers/stack_text.h"
#include "gtap/readers/table.h"
#include "top_k.h"

namespace gtap::readers {

namespace {

std::string pct(int64_t part, int64_t whole) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%",
                whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0);
  return buf;
}

// Why there is nothing to account for, when no device ran anything.
void writeNoDeviceWork(const Capture& c, const ProcessOverview& p, std::ostream& out) {
  if (p.halDispatches)
    out << "No device work was recorded: the " << p.halDispatches
        << " IREE HAL dispatches recorded into command buffers carry no device times (those come from the "
           "device runtime underneath, HSA or Level Zero, when the driver uses one).\n\n";
  else if (!recorded(c, format::kModeKernels))
    out << "No device work was recorded: the capture was recorded with mode " << recordedMode(c)
        << " (record it with --mode=" << recordedMode(c) << ",kernels).\n\n";
  else
    out << "No device work was found: the capture was recorded with mode " << recordedMode(c)
        << ", which records it, and the program ran none gtap could see.\n\n";
}

void writeBusy(const ProcessOverview& p, std::ostream& out) {
  int64_t duration = p.endNs - p.startNs;
  for (const auto& d : p.devices) {
    out << "\n" << d.name << " was busy " << formatNanoseconds(d.busyNs) << ", " << pct(d.busyNs, duration)
        << " of the run";
    if (d.lastNs > d.firstNs)
      out << " and " << pct(d.busyNs, d.lastNs - d.firstNs) << " of the stretch from its first operation to its last";
    out << ".\n";
  }
}

void writeKernelShares(std::vector<KernelRow> rows, size_t top, std::ostream& out) {
  // IREE HAL dispatches carry no device time: not part of where it went.
  rows.erase(std::remove_if(rows.begin(), rows.end(), [](const auto& r) { return r.level == "hal"; }), rows.end());
  if (rows.empty()) return;
  out << "\nWhere device time went:\n";
  for (size_t i = 0; i < rows.size() && i < top; ++i) {
    const auto& r = rows[i];
    char share[16];
    std::snprintf(share, sizeof share, "%.1f%%", r.share * 100);
    out << "  " << (i + 1) << ". " << r.key << ": " << share << " of kernel time, " << r.time.count << " run"
        << (r.time.count == 1 ? "" : "s") << ", " << formatNanoseconds(r.time.total) << " in all, median "
        << formatNanoseconds(r.time.p50) << "\n";
  }
}

// The `top` timed kernel launches that took longest, as the operations come
// (a heap of `top`, never every launch): longest first, equal times in the
// order they were read.
class SlowestLaunches {
 public:
  explicit SlowestLaunches(size_t top) : kept_(top, slower) {}
  void offer(const DeviceOp& op) {
    uint64_t order = read_++;
    if (!op.timed || op.kind != schema::DeviceOpKind::KERNEL) return;
    kept_.offer({op.durationNs(), order, op});
  }
  // Longest first.
  std::vector<DeviceOp> take() {
    std::vector<DeviceOp> ops;
    for (auto& k : kept_.take()) ops.push_back(k.op);
    return ops;
  }

 private:
  struct Kept {
    int64_t durationNs;
    uint64_t order;
    DeviceOp op;
  };
  static bool slower(const Kept& a, const Kept& b) {
    return a.durationNs != b.durationNs ? a.durationNs > b.durationNs : a.order < b.order;
  }
  uint64_t read_ = 0;
  TopK<Kept, bool (*)(const Kept&, const Kept&)> kept_;
};

void writeIdleGaps(const ProcessOverview& p, std::ostream& out) {
  for (const auto& d : p.devices) {
    if (d.largestGaps.empty()) continue;
    int64_t idle = (d.lastNs - d.firstNs) - d.busyNs;
    out << "\n" << d.name << " sat idle " << formatNanoseconds(idle)
        << " between its first and last operation. Longest idle stretches:\n";
    for (const auto& g : d.largestGaps) {
      out << "  " << formatNanoseconds(g.endNs - g.startNs) << " after " << g.before << ", before " << g.after
          << " (at +" << formatNanoseconds(g.startNs - p.startNs) << ")";
      if (!g.hostCalls.empty()) {
        out << "; the host meanwhile was in";
        for (size_t i = 0; i < g.hostCalls.size() && i < 3; ++i)
          out << (i ? "," : "") << " " << g.hostCalls[i].first << " (" << formatNanoseconds(g.hostCalls[i].second)
              << ")";
      } else {
        out << "; the host made no API call meanwhile";
      }
      out << "\n";
    }
  }
}

void writeSlowestLaunches(const Capture& c, const DeviceWork& work, const ProcessOverview& p,
                          const std::vector<DeviceOp>& slowest, Symbolizer& symbolizer, std::ostream& out) {
  if (slowest.empty()) return;
  out << "\nSlowest launches:\n";
  std::set<std::string> problems;
  for (const DeviceOp& op : slowest) {
    out << "  " << op.name << " took " << formatNanoseconds(op.durationNs()) << " (groups " << op.groupCount[0] << "x"
        << op.groupCount[1] << "x" << op.groupCount[2] << " of " << op.groupSize[0] << "x" << op.groupSize[1] << "x"
        << op.groupSize[2] << "), submitted at +" << formatNanoseconds(op.submitNs - p.startNs) << "\n";
    if (const HalOrigin* hal = op.hal) {
      out << "      the IREE HAL dispatch of " << hal->name << " it became, recorded into command buffer " << hal->list
          << " at +" << formatNanoseconds(hal->dispatchNs - p.startNs) << ", submitted by queue_execute at +"
          << formatNanoseconds(hal->submissionNs - p.startNs) << "\n";
    }
    std::vector<std::string> why;
    auto frames = describeStack(work, op.stack, symbolizer, &why);
    problems.insert(why.begin(), why.end());
    if (frames.empty() && recorded(c, format::kModeStacks))
      out << "      (no stack recorded for this launch)\n";
    else if (frames.empty())
      out << "      (no stack: the capture was recorded with mode " << recordedMode(c)
          << "; record stacks with --mode=" << recordedMode(c) << ",stacks)\n";
    // The program's own frames matter; what runs main() does not.
    for (size_t f = 0; f < frames.size() && f < 8; ++f) {
      out << "      " << frames[f] << "\n";
      if (frames[f].rfind("main ", 0) == 0) break;
    }
  }
  for (const auto& w : problems) out << "  note: " << w << "\n";
}

void writeHalJoin(const HalJoin& join, std::ostream& out) {
  if (!join.executions || !join.deviceKernels) return;
  out << "\nIREE HAL: the command buffers the program submitted ran " << join.executions << " dispatch"
      << (join.executions == 1 ? "" : "es") << "; " << join.joined
      << " joined the device dispatch of the same kernel they became (in submission order)";
  if (join.joined < join.executions) out << ", " << join.executions - join.joined << " found none";
  out << ". ";
  if (join.notFromHal)
    out << join.notFromHal << " of the " << join.deviceKernels
        << " device dispatches came from no HAL dispatch (the driver's own work, or another library's).\n";
  else
    out << "Every device dispatch came from one.\n";
}

// The account, from what one pass over the operations built.
void writeAccount(const Capture& c, const DeviceWork& work, const ProcessOverview& p, std::vector<KernelRow> rows,
                  const std::vector<DeviceOp>& slowest, size_t top, Symbolizer& symbolizer, std::ostream& out) {
  out << p.label << " (" << p.executable << ") ran " << formatNanoseconds(p.endNs - p.startNs) << ".\n";
  if (p.devices.empty()) {
    writeNoDeviceWork(c, p, out);
    return;
  }
  writeBusy(p, out);
  writeKernelShares(std::move(rows), top, out);
  writeIdleGaps(p, out);
  writeSlowestLaunches(c, work, p, slowest, symbolizer, out);
  writeHalJoin(work.halJoin, out);
  if (!p.untimedReasons.empty()) {
    out << "\nSome device work has no device times:";
    for (const auto& r : p.untimedReasons) out << " " << r << ".";
    out << "\n";
  }
  if (!p.closedCleanly) out << "\nThe capture was cut short and recovered: " << p.recovery << "\n";
  out << "\n";
}

}  // namespace

void writeExplanation(const LoadedCapture& lc, size_t top, Symbolizer& symbolizer, std::ostream& out) {
  auto p = overviewOf(lc, top);
  SlowestLaunches slowest(top);
  for (const DeviceOp& op : lc.work.ops) slowest.offer(op);
  auto rows = p.devices.empty() ? std::vector<KernelRow>{}
                                : kernelRows(std::span<const LoadedCapture>(&lc, 1), KernelGrouping::name, false);
  writeAccount(*lc.capture, lc.work, p, std::move(rows), slowest.take(), top, symbolizer, out);
}

void writeExplanation(const Capture& capture, size_t top, Symbolizer& symbolizer, std::ostream& out) {
  DeviceWork work;
  KernelRowsBuilder table(KernelGrouping::name, false);
  table.beginCapture(0, capture, work);
  SlowestLaunches slowest(top);
  auto p = overviewStreamed(
      capture, work,
      [&](const DeviceOp& op) {
        table.add(op);
        slowest.offer(op);
      },
      top,
      [&] {
        // IREE HAL command-buffer work, joined: the operations come again.
        table = KernelRowsBuilder(KernelGrouping::name, false);
        table.beginCapture(0, capture, work);
        slowest = SlowestLaunches(top);
      });
  writeAccount(capture, work, p, p.devices.empty() ? std::vector<KernelRow>{} : table.rows(), slowest.take(), top,
               symbolizer, out);
}

}  // namespace gtap::readers
