#include "gtap/readers/explain.h"

#include <algorithm>
#include <cstdio>
#include <set>
#include <sstream>

#include "gtap/readers/json.h"
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

// The same account for scripts: one JSON object per line, each with its
// "type" (explain_process, explain_device, explain_kernel, explain_gap,
// explain_launch, explain_hal_join, explain_note).
class JsonRow {
 public:
  explicit JsonRow(const char* type) { s_ = "{\"type\":\"" + std::string(type) + "\""; }
  JsonRow& str(const char* k, std::string_view v) {
    key(k);
    appendJsonString(s_, v);
    return *this;
  }
  JsonRow& num(const char* k, int64_t v) {
    key(k);
    s_ += std::to_string(v);
    return *this;
  }
  JsonRow& real(const char* k, double v) {
    key(k);
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    s_ += buf;
    return *this;
  }
  JsonRow& boolean(const char* k, bool v) {
    key(k);
    s_ += v ? "true" : "false";
    return *this;
  }
  JsonRow& strings(const char* k, const std::vector<std::string>& v) {
    key(k);
    s_ += '[';
    for (size_t i = 0; i < v.size(); ++i) {
      if (i) s_ += ',';
      appendJsonString(s_, v[i]);
    }
    s_ += ']';
    return *this;
  }
  // `json` as it is (an object or array already written).
  JsonRow& raw(const char* k, const std::string& json) {
    key(k);
    s_ += json;
    return *this;
  }
  void writeTo(std::ostream& out) { out << s_ << "}\n"; }

 private:
  void key(const char* k) {
    s_ += ",\"";
    s_ += k;
    s_ += "\":";
  }
  std::string s_;
};

double share(int64_t part, int64_t whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

void writeAccountJsonl(const Capture& c, const DeviceWork& work, const ProcessOverview& p, std::vector<KernelRow> rows,
                       const std::vector<DeviceOp>& slowest, size_t top, Symbolizer& symbolizer, std::ostream& out) {
  const std::string& label = p.label;
  JsonRow process("explain_process");
  process.str("process", label).str("file", c.path()).str("executable", p.executable)
      .num("duration_ns", p.endNs - p.startNs).boolean("closed_cleanly", p.closedCleanly)
      .str("recovery", p.closedCleanly ? std::string() : p.recovery).strings("untimed_reasons", p.untimedReasons);
  if (p.devices.empty()) {
    std::ostringstream why;
    writeNoDeviceWork(c, p, why);
    std::string text = why.str();
    while (!text.empty() && text.back() == '\n') text.pop_back();
    process.str("no_device_work", text);
  }
  process.writeTo(out);
  if (p.devices.empty()) return;
  int64_t duration = p.endNs - p.startNs;
  for (const auto& d : p.devices)
    JsonRow("explain_device").str("process", label).str("device", d.name).num("busy_ns", d.busyNs)
        .num("span_ns", d.lastNs - d.firstNs).num("idle_ns", (d.lastNs - d.firstNs) - d.busyNs)
        .real("busy_share_of_run", share(d.busyNs, duration))
        .real("busy_share_of_span", share(d.busyNs, d.lastNs - d.firstNs)).writeTo(out);
  rows.erase(std::remove_if(rows.begin(), rows.end(), [](const auto& r) { return r.level == "hal"; }), rows.end());
  for (size_t i = 0; i < rows.size() && i < top; ++i)
    JsonRow("explain_kernel").str("process", label).num("rank", static_cast<int64_t>(i + 1)).str("kernel", rows[i].key)
        .real("share", rows[i].share).num("count", static_cast<int64_t>(rows[i].time.count))
        .num("total_ns", rows[i].time.total).num("p50_ns", rows[i].time.p50).writeTo(out);
  for (const auto& d : p.devices)
    for (const auto& g : d.largestGaps) {
      std::string calls = "[";
      for (size_t i = 0; i < g.hostCalls.size(); ++i) {
        calls += i ? ",{\"function\":" : "{\"function\":";
        appendJsonString(calls, g.hostCalls[i].first);
        calls += ",\"ns\":" + std::to_string(g.hostCalls[i].second) + "}";
      }
      calls += "]";
      JsonRow("explain_gap").str("process", label).str("device", d.name).num("start_offset_ns", g.startNs - p.startNs)
          .num("duration_ns", g.endNs - g.startNs).str("before", g.before).str("after", g.after)
          .raw("host_calls", calls).writeTo(out);
    }
  std::set<std::string> problems;
  for (const DeviceOp& op : slowest) {
    std::vector<std::string> why;
    auto frames = describeStack(work, op.stack, symbolizer, &why);
    problems.insert(why.begin(), why.end());
    auto triple = [](const std::array<uint32_t, 3>& v) {
      return "[" + std::to_string(v[0]) + "," + std::to_string(v[1]) + "," + std::to_string(v[2]) + "]";
    };
    JsonRow row("explain_launch");
    row.str("process", label).str("kernel", op.name).num("duration_ns", op.durationNs())
        .raw("groups", triple(op.groupCount)).raw("group_size", triple(op.groupSize))
        .num("submit_offset_ns", op.submitNs - p.startNs).strings("stack", frames);
    if (const HalOrigin* hal = op.hal)
      row.str("hal_dispatch", hal->name).num("hal_command_buffer", static_cast<int64_t>(hal->list))
          .num("hal_dispatch_offset_ns", hal->dispatchNs - p.startNs)
          .num("hal_submission_offset_ns", hal->submissionNs - p.startNs);
    row.writeTo(out);
  }
  const HalJoin& join = work.halJoin;
  if (join.executions && join.deviceKernels)
    JsonRow("explain_hal_join").str("process", label).num("executions", static_cast<int64_t>(join.executions))
        .num("joined", static_cast<int64_t>(join.joined)).num("device_kernels", static_cast<int64_t>(join.deviceKernels))
        .num("not_from_hal", static_cast<int64_t>(join.notFromHal)).writeTo(out);
  for (const auto& w : problems) JsonRow("explain_note").str("process", label).str("note", w).writeTo(out);
}

}  // namespace

void writeExplanation(const LoadedCapture& lc, size_t top, Symbolizer& symbolizer, std::ostream& out,
                      OutputFormat format) {
  auto p = overviewOf(lc, top);
  SlowestLaunches slowest(top);
  for (const DeviceOp& op : lc.work.ops) slowest.offer(op);
  auto rows = p.devices.empty() ? std::vector<KernelRow>{}
                                : kernelRows(std::span<const LoadedCapture>(&lc, 1), KernelGrouping::name, false);
  auto write = format == OutputFormat::jsonl ? writeAccountJsonl : writeAccount;
  write(*lc.capture, lc.work, p, std::move(rows), slowest.take(), top, symbolizer, out);
}

void writeExplanation(const Capture& capture, size_t top, Symbolizer& symbolizer, std::ostream& out,
                      OutputFormat format) {
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
  auto write = format == OutputFormat::jsonl ? writeAccountJsonl : writeAccount;
  write(capture, work, p, p.devices.empty() ? std::vector<KernelRow>{} : table.rows(), slowest.take(), top,
               symbolizer, out);
}

}  // namespace gtap::readers
