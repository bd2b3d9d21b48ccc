// gtap explain: a short account for a person of where the device's time went,
// when it sat idle and what the host did meanwhile, and which launches were
// slowest and from where.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <set>

#include "commands.h"
#include "gtap/readers/overview.h"
#include "gtap/readers/stack_text.h"
#include "gtap/readers/table.h"
#include "open_captures.h"
#include "recorded_hint.h"

namespace gtap::cli {

namespace {

struct ExplainOptions {
  std::vector<std::string> files;
  size_t top = 3;
  std::vector<std::string> debugDirs;
};

std::string pct(int64_t part, int64_t whole) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0);
  return buf;
}

using readers::formatNanoseconds;

void explainOne(const readers::LoadedCapture& lc, const ExplainOptions& o, readers::Symbolizer& symbolizer) {
  auto p = readers::overviewOf(lc, o.top);
  int64_t duration = p.endNs - p.startNs;
  std::cout << p.label << " (" << p.executable << ") ran " << formatNanoseconds(duration) << ".\n";
  int64_t busy = 0;
  for (const auto& d : p.devices) busy += d.busyNs;
  if (p.devices.empty()) {
    if (p.halDispatches)
      std::cout << "No device work was recorded: the " << p.halDispatches
                << " IREE HAL dispatches recorded into command buffers carry no device times (those come from the "
                   "device runtime underneath, HSA or Level Zero, when the driver uses one).\n\n";
    else if (!recorded(*lc.capture, format::kModeKernels))
      std::cout << "No device work was recorded: the capture was recorded with mode " << recordedMode(*lc.capture)
                << " (record it with --mode=" << recordedMode(*lc.capture) << ",kernels).\n\n";
    else
      std::cout << "No device work was found: the capture was recorded with mode " << recordedMode(*lc.capture)
                << ", which records it, and the program ran none gtap could see.\n\n";
    return;
  }
  for (const auto& d : p.devices) {
    std::cout << "\n" << d.name << " was busy " << formatNanoseconds(d.busyNs) << ", " << pct(d.busyNs, duration)
              << " of the run";
    if (d.lastNs > d.firstNs)
      std::cout << " and " << pct(d.busyNs, d.lastNs - d.firstNs) << " of the stretch from its first operation to its last";
    std::cout << ".\n";
  }
  auto rows = readers::kernelRows({lc}, readers::KernelGrouping::name, false);
  // IREE HAL dispatches carry no device time: not part of where it went.
  rows.erase(std::remove_if(rows.begin(), rows.end(), [](const auto& r) { return r.level == "hal"; }), rows.end());
  if (!rows.empty()) {
    std::cout << "\nWhere device time went:\n";
    for (size_t i = 0; i < rows.size() && i < o.top; ++i) {
      const auto& r = rows[i];
      char share[16];
      std::snprintf(share, sizeof share, "%.1f%%", r.share * 100);
      std::cout << "  " << (i + 1) << ". " << r.key << ": " << share << " of kernel time, " << r.time.count
                << " run" << (r.time.count == 1 ? "" : "s") << ", " << formatNanoseconds(r.time.total)
                << " in all, median " << formatNanoseconds(r.time.p50) << "\n";
    }
  }
  for (const auto& d : p.devices) {
    if (d.largestGaps.empty()) continue;
    int64_t idle = (d.lastNs - d.firstNs) - d.busyNs;
    std::cout << "\n" << d.name << " sat idle " << formatNanoseconds(idle) << " between its first and last operation. Longest idle stretches:\n";
    for (const auto& g : d.largestGaps) {
      std::cout << "  " << formatNanoseconds(g.endNs - g.startNs) << " after " << g.before << ", before " << g.after
                << " (at +" << formatNanoseconds(g.startNs - p.startNs) << ")";
      if (!g.hostCalls.empty()) {
        std::cout << "; the host meanwhile was in";
        for (size_t i = 0; i < g.hostCalls.size() && i < 3; ++i)
          std::cout << (i ? "," : "") << " " << g.hostCalls[i].first << " (" << formatNanoseconds(g.hostCalls[i].second) << ")";
      } else {
        std::cout << "; the host made no API call meanwhile";
      }
      std::cout << "\n";
    }
  }
  std::vector<const readers::DeviceOp*> kernels;
  for (const auto& op : lc.work.ops)
    if (op.timed && op.kind == schema::DeviceOpKind::KERNEL) kernels.push_back(&op);
  std::sort(kernels.begin(), kernels.end(),
            [](const readers::DeviceOp* a, const readers::DeviceOp* b) { return a->durationNs() > b->durationNs(); });
  if (!kernels.empty()) {
    std::cout << "\nSlowest launches:\n";
    std::set<std::string> problems;
    for (size_t i = 0; i < kernels.size() && i < o.top; ++i) {
      const auto& op = *kernels[i];
      std::cout << "  " << op.name << " took " << formatNanoseconds(op.durationNs()) << " (groups " << op.groupCount[0]
                << "x" << op.groupCount[1] << "x" << op.groupCount[2] << " of " << op.groupSize[0] << "x"
                << op.groupSize[1] << "x" << op.groupSize[2] << "), submitted at +"
                << formatNanoseconds(op.submitNs - p.startNs) << "\n";
      if (op.halDispatch != readers::DeviceOp::kNone) {
        const auto& hal = lc.work.ops[op.halDispatch];
        const auto& submission = lc.work.ops[op.halSubmission];
        std::cout << "      the IREE HAL dispatch of " << hal.name << " it became, recorded into command buffer "
                  << hal.list << " at +" << formatNanoseconds(hal.appendNs - p.startNs)
                  << ", submitted by queue_execute at +" << formatNanoseconds(submission.appendNs - p.startNs)
                  << "\n";
      }
      std::vector<std::string> why;
      auto frames = readers::describeStack(lc.work, op.stack, symbolizer, &why);
      problems.insert(why.begin(), why.end());
      if (frames.empty() && recorded(*lc.capture, format::kModeStacks))
        std::cout << "      (no stack recorded for this launch)\n";
      else if (frames.empty())
        std::cout << "      (no stack: the capture was recorded with mode " << recordedMode(*lc.capture)
                  << "; record stacks with --mode=" << recordedMode(*lc.capture) << ",stacks)\n";
      // The program's own frames matter; what runs main() does not.
      for (size_t f = 0; f < frames.size() && f < 8; ++f) {
        std::cout << "      " << frames[f] << "\n";
        if (frames[f].rfind("main ", 0) == 0) break;
      }
    }
    for (const auto& w : problems) std::cout << "  note: " << w << "\n";
  }
  const auto& join = lc.work.halJoin;
  if (join.executions && join.deviceKernels) {
    std::cout << "\nIREE HAL: the command buffers the program submitted ran " << join.executions
              << " dispatch" << (join.executions == 1 ? "" : "es") << "; " << join.joined
              << " joined the device dispatch of the same kernel they became (in submission order)";
    if (join.joined < join.executions) std::cout << ", " << join.executions - join.joined << " found none";
    std::cout << ". ";
    if (join.notFromHal)
      std::cout << join.notFromHal << " of the " << join.deviceKernels
                << " device dispatches came from no HAL dispatch (the driver's own work, or another library's).\n";
    else
      std::cout << "Every device dispatch came from one.\n";
  }
  if (!p.untimedReasons.empty()) {
    std::cout << "\nSome device work has no device times:";
    for (const auto& r : p.untimedReasons) std::cout << " " << r << ".";
    std::cout << "\n";
  }
  if (!p.closedCleanly) std::cout << "\nThe capture was cut short and recovered: " << p.recovery << "\n";
  std::cout << "\n";
}

int explain(const ExplainOptions& o) {
  auto opened = openCaptures(o.files, "explain");
  if (opened.captures.empty()) return 1;
  std::vector<std::string> dirs = o.debugDirs;
  if (const char* env = std::getenv("GTAP_DEBUG_PATH")) dirs.push_back(env);
  readers::Symbolizer symbolizer(dirs);
  for (const auto& c : opened.captures) explainOne({c.get(), readers::loadDeviceWork(*c)}, o, symbolizer);
  return opened.failures ? 1 : 0;
}

}  // namespace

Action addExplainCommand(CLI::App& app) {
  auto o = std::make_shared<ExplainOptions>();
  auto* cmd = app.add_subcommand("explain", "Where device time went, idle gaps and what the host did, the slowest launches and their stacks");
  cmd->add_option("files", o->files, "Capture files")->required();
  cmd->add_option("--top", o->top, "How many kernels, gaps and launches to name");
  cmd->add_option("--debug-dir", o->debugDirs, "Directories of separate debug files (by build-id)");
  return [o] { return explain(*o); };
}

}  // namespace gtap::cli
