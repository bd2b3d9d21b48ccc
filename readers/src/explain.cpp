#include "gtap/readers/explain.h"

#include <algorithm>
#include <cstdio>
#include <set>

#include "gtap/readers/overview.h"
#include "gtap/readers/recorded_mode.h"
#include "gtap/readers/stack_text.h"
#include "gtap/readers/table.h"

namespace gtap::readers {

namespace {

std::string pct(int64_t part, int64_t whole) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%",
                whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0);
  return buf;
}

// Why there is nothing to account for, when no device ran anything.
void writeNoDeviceWork(const LoadedCapture& lc, const ProcessOverview& p, std::ostream& out) {
  const Capture& c = *lc.capture;
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

void writeKernelShares(const LoadedCapture& lc, size_t top, std::ostream& out) {
  auto rows = kernelRows(std::span<const LoadedCapture>(&lc, 1), KernelGrouping::name, false);
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

void writeSlowestLaunches(const LoadedCapture& lc, const ProcessOverview& p, size_t top, Symbolizer& symbolizer,
                          std::ostream& out) {
  const Capture& c = *lc.capture;
  std::vector<const DeviceOp*> kernels;
  for (const auto& op : lc.work.ops)
    if (op.timed && op.kind == schema::DeviceOpKind::KERNEL) kernels.push_back(&op);
  if (kernels.empty()) return;
  std::sort(kernels.begin(), kernels.end(),
            [](const DeviceOp* a, const DeviceOp* b) { return a->durationNs() > b->durationNs(); });
  out << "\nSlowest launches:\n";
  std::set<std::string> problems;
  for (size_t i = 0; i < kernels.size() && i < top; ++i) {
    const auto& op = *kernels[i];
    out << "  " << op.name << " took " << formatNanoseconds(op.durationNs()) << " (groups " << op.groupCount[0] << "x"
        << op.groupCount[1] << "x" << op.groupCount[2] << " of " << op.groupSize[0] << "x" << op.groupSize[1] << "x"
        << op.groupSize[2] << "), submitted at +" << formatNanoseconds(op.submitNs - p.startNs) << "\n";
    if (op.halDispatch != DeviceOp::kNone) {
      const auto& hal = lc.work.ops[op.halDispatch];
      const auto& submission = lc.work.ops[op.halSubmission];
      out << "      the IREE HAL dispatch of " << hal.name << " it became, recorded into command buffer " << hal.list
          << " at +" << formatNanoseconds(hal.appendNs - p.startNs) << ", submitted by queue_execute at +"
          << formatNanoseconds(submission.appendNs - p.startNs) << "\n";
    }
    std::vector<std::string> why;
    auto frames = describeStack(lc.work, op.stack, symbolizer, &why);
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

}  // namespace

void writeExplanation(const LoadedCapture& lc, size_t top, Symbolizer& symbolizer, std::ostream& out) {
  auto p = overviewOf(lc, top);
  out << p.label << " (" << p.executable << ") ran " << formatNanoseconds(p.endNs - p.startNs) << ".\n";
  if (p.devices.empty()) {
    writeNoDeviceWork(lc, p, out);
    return;
  }
  writeBusy(p, out);
  writeKernelShares(lc, top, out);
  writeIdleGaps(p, out);
  writeSlowestLaunches(lc, p, top, symbolizer, out);
  writeHalJoin(lc.work.halJoin, out);
  if (!p.untimedReasons.empty()) {
    out << "\nSome device work has no device times:";
    for (const auto& r : p.untimedReasons) out << " " << r << ".";
    out << "\n";
  }
  if (!p.closedCleanly) out << "\nThe capture was cut short and recovered: " << p.recovery << "\n";
  out << "\n";
}

}  // namespace gtap::readers
