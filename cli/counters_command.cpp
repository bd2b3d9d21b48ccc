// gtap counters: what the hardware counters of captures say (per kernel, per
// measured dispatch, derived metrics, device metrics, the roofline), and
// --list: the counters and metric groups the devices offer, through each
// runtime's own interface (offered_counters.h), so a user can pick names for
// --counters.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "exit_status.h"
#include "gtap/readers/counter_stats.h"
#include "gtap/readers/roofline.h"
#include "gtap/readers/table.h"
#include "install_paths.h"
#include "offered_counters.h"
#include "open_captures.h"
#include "report_filter_options.h"
#include "output.h"

namespace gtap::cli {

namespace {

struct CountersOptions {
  std::vector<std::string> files;
  bool list = false;
  bool sim = false;
  std::string format = "text";
  bool perDispatch = false;
  bool perProcess = false;
  bool deviceMetrics = false;
  bool roofline = false;
  std::string output;
  bool force = false;
  ReportFilterOptions filter;
};

// A counter's value: whole numbers as integers for scripts, others as reals.
readers::Cell valueCell(double v) {
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 9.0e15)
    return readers::Cell::count(static_cast<int64_t>(v));
  readers::Cell c = readers::Cell::ratio(v, 6);
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", v);
  c.text = text;
  return c;
}

// A rate or an amount with an SI prefix for people ("8.00 T"), exact for
// scripts.
readers::Cell siCell(double v) {
  const char* prefixes[] = {"", " k", " M", " G", " T", " P", " E"};
  int i = 0;
  double shown = v;
  while (std::fabs(shown) >= 1000 && i < 6) {
    shown /= 1000;
    ++i;
  }
  readers::Cell c;
  c.real = v;
  char text[40];
  std::snprintf(text, sizeof text, "%.3g%s", shown, prefixes[i]);
  c.text = text;
  return c;
}

readers::Cell optionalCell(std::optional<double> v, int decimals = 3) {
  return v ? readers::Cell::ratio(*v, decimals) : readers::Cell::str("-");
}

readers::Cell megahertz(std::optional<double> hz) {
  return hz ? readers::Cell::ratio(*hz / 1e6, 1) : readers::Cell::str("-");
}

// Rows of the per-kernel table for one derived metric: its figure over the
// kernel (a ratio of sums) as the mean, its extremes over the dispatches.
void addDerived(readers::Table& table, const readers::KernelCounters& k, bool perProcess, const char* name,
                const char* units, std::optional<double> figure, const readers::ValueStats& perDispatch,
                double scale, int decimals) {
  if (!figure) return;
  std::vector<readers::Cell> row;
  if (perProcess) row.push_back(readers::Cell::str(k.process));
  row.push_back(readers::Cell::str(k.kernel));
  row.push_back(readers::Cell::str(name));
  row.push_back(readers::Cell::str(units));
  row.push_back(readers::Cell::count(static_cast<int64_t>(perDispatch.count)));
  row.push_back(readers::Cell::str("-"));
  row.push_back(readers::Cell::ratio(*figure * scale, decimals));
  row.push_back(readers::Cell::ratio(perDispatch.min * scale, decimals));
  row.push_back(readers::Cell::ratio(perDispatch.max * scale, decimals));
  table.add(std::move(row));
}

void printKernels(const readers::CounterReport& r, bool perProcess, readers::OutputFormat format) {
  std::vector<std::string> columns;
  if (perProcess) columns.push_back("process");
  for (const char* c : {"kernel", "counter", "units", "dispatches", "total", "mean", "min", "max"})
    columns.push_back(c);
  readers::Table table("kernel_counter", columns);
  for (const auto& k : r.kernels) {
    for (size_t c = 0; c < r.columns.size(); ++c) {
      const auto& v = k.values[c];
      if (!v.count) continue;
      std::vector<readers::Cell> row;
      if (perProcess) row.push_back(readers::Cell::str(k.process));
      row.push_back(readers::Cell::str(k.kernel));
      row.push_back(readers::Cell::str(r.columns[c].name));
      row.push_back(readers::Cell::str(r.columns[c].units.empty() ? "-" : r.columns[c].units));
      row.push_back(readers::Cell::count(static_cast<int64_t>(v.count)));
      row.push_back(valueCell(v.total));
      row.push_back(valueCell(v.mean()));
      row.push_back(valueCell(v.min));
      row.push_back(valueCell(v.max));
      table.add(std::move(row));
    }
    addDerived(table, k, perProcess, "busy share", "ratio", k.derived.busyShare(), k.busyShare, 1, 4);
    addDerived(table, k, perProcess, "waves per work-group", "waves", k.derived.wavesPerGroup(), k.wavesPerGroup, 1,
               2);
    addDerived(table, k, perProcess, "achieved frequency", "MHz", k.derived.frequencyHz(), k.frequencyHz, 1e-6, 1);
  }
  if (format == readers::OutputFormat::text)
    std::cout << "Counters per kernel over its measured dispatches (derived metrics: the kernel's figure as the "
                 "mean, extremes over dispatches; docs/counters.md)\n";
  table.print(std::cout, format);
}

void printDispatches(const readers::CounterReport& r, readers::OutputFormat format) {
  bool busy = false, waves = false, frequency = false;
  for (const auto& d : r.dispatches) {
    busy = busy || d.derived.busyShare();
    waves = waves || d.derived.wavesPerGroup();
    frequency = frequency || d.derived.frequencyHz();
  }
  std::vector<std::string> columns = {"capture", "process", "kernel", "device", "queue", "dispatch", "device_time"};
  for (const auto& c : r.columns) columns.push_back(c.name);
  if (busy) columns.push_back("busy share");
  if (waves) columns.push_back("waves per work-group");
  if (frequency) columns.push_back("achieved MHz");
  readers::Table table("dispatch_counter", columns);
  for (const auto& d : r.dispatches) {
    std::vector<readers::Cell> row;
    row.push_back(readers::Cell::str(r.captures[d.capture]));
    row.push_back(readers::Cell::str(r.processes[d.capture]));
    row.push_back(readers::Cell::str(d.kernel));
    row.push_back(readers::Cell::str(r.deviceName(d.capture, d.device)));
    row.push_back(readers::Cell::str(d.queue));
    row.push_back(readers::Cell::count(static_cast<int64_t>(d.index)));
    row.push_back(d.timed ? readers::Cell::nanoseconds(d.durationNs) : readers::Cell::str("-"));
    for (uint32_t c = 0; c < r.columns.size(); ++c) {
      auto v = d.value(c);
      row.push_back(v ? valueCell(*v) : readers::Cell::str("-"));
    }
    if (busy) row.push_back(optionalCell(d.derived.busyShare(), 4));
    if (waves) row.push_back(optionalCell(d.derived.wavesPerGroup(), 2));
    if (frequency) row.push_back(megahertz(d.derived.frequencyHz()));
    table.add(std::move(row));
  }
  table.print(std::cout, format);
}

void printMetrics(const readers::CounterReport& r, readers::OutputFormat format) {
  readers::Table table("device_metric_summary", {"process", "device", "source", "metric", "units", "samples", "min", "mean", "max", "rate"});
  for (const auto& m : r.metrics) {
    if (m.metric.empty()) continue;
    std::string units = m.units.empty() ? "-" : m.units;
    table.add({readers::Cell::str(r.processes[m.capture]), readers::Cell::str(m.deviceName),
               readers::Cell::str(m.source), readers::Cell::str(m.metric),
               readers::Cell::str(m.cumulative ? units + "/s" : units),
               readers::Cell::count(static_cast<int64_t>(m.samples)), valueCell(m.min), valueCell(m.mean),
               valueCell(m.max), m.cumulative ? valueCell(m.rate) : readers::Cell::str("-")});
  }
  if (format == readers::OutputFormat::text) {
    if (r.metrics.empty()) return;
    if (table.size()) {
      std::cout << "\nDevice metrics (cumulative ones as rates between samples: min, mean and max per interval, "
                   "rate over the run)\n";
      table.print(std::cout, format);
    } else {
      std::cout << "\nDevice metrics:\n";
    }
    // Devices that have none, and why.
    for (const auto& m : r.metrics)
      if (m.metric.empty()) std::cout << "  " << r.processes[m.capture] << ", " << m.deviceName << ": " << m.note << "\n";
    return;
  }
  table.print(std::cout, format);
}

void printRoofline(const std::vector<readers::RooflinePoint>& points, bool perProcess, readers::OutputFormat format) {
  std::vector<std::string> columns;
  if (perProcess) columns.push_back("process");
  for (const char* c : {"kernel", "device", "flop", "bytes", "time", "intensity", "flop_per_s", "bytes_per_s",
                        "peak_flop_per_s", "peak_bytes_per_s", "attainable_flop_per_s", "of_attainable"})
    columns.push_back(c);
  readers::Table table("roofline", columns);
  for (const auto& p : points) {
    std::vector<readers::Cell> row;
    if (perProcess) row.push_back(readers::Cell::str(p.process));
    row.push_back(readers::Cell::str(p.kernel));
    row.push_back(readers::Cell::str(p.device));
    row.push_back(siCell(p.flops));
    row.push_back(siCell(p.bytes));
    row.push_back(readers::Cell::nanoseconds(p.timeNs));
    row.push_back(p.intensity > 0 ? valueCell(p.intensity) : readers::Cell::str("-"));
    row.push_back(p.timeNs > 0 ? siCell(p.flopsPerSecond) : readers::Cell::str("-"));
    row.push_back(p.timeNs > 0 ? siCell(p.bytesPerSecond) : readers::Cell::str("-"));
    row.push_back(p.peakFlopsPerSecond > 0 ? siCell(p.peakFlopsPerSecond) : readers::Cell::str("-"));
    row.push_back(p.peakBytesPerSecond > 0 ? siCell(p.peakBytesPerSecond) : readers::Cell::str("-"));
    row.push_back(p.attainable > 0 ? siCell(p.attainable) : readers::Cell::str("-"));
    if (p.attainable > 0) {
      readers::Cell share = readers::Cell::ratio(p.ofAttainable, 4);
      share.text = readers::Cell::ratio(p.ofAttainable * 100, 1).text + "%";
      row.push_back(share);
    } else {
      row.push_back(readers::Cell::str("-"));
    }
    table.add(std::move(row));
  }
  if (format == readers::OutputFormat::text)
    std::cout << "Roofline: FLOP and bytes from the counters docs/counters.md recognises, intensity in FLOP/byte, "
                 "against the device's peaks\n";
  table.print(std::cout, format);
}

// Says what was asked for and not collected, and the request.
void printNotes(const readers::CounterReport& r, std::ostream& out, const char* prefix) {
  for (const auto& n : r.notes) {
    std::string device = n.note.device == ~0u ? std::string("every device") : r.deviceName(n.capture, n.note.device);
    out << prefix << r.processes[n.capture] << ", " << device << ": " << n.note.counter << ": " << n.note.reason
        << "\n";
  }
}

int report(const CountersOptions& o) {
  std::string formatName = o.format;
  bool svg = formatName == "svg";
  readers::OutputFormat format = readers::OutputFormat::text;
  if (svg) {
    if (!o.roofline) {
      std::cerr << "gtap counters: --format=svg draws the roofline: give --roofline\n";
      return kExitUsage;
    }
    if (o.output.empty()) {
      std::cerr << "gtap counters: --roofline --format=svg writes a file: give -o FILE (- for standard output)\n";
      return kExitUsage;
    }
  } else if (!readers::parseOutputFormat(formatName, format)) {
    std::cerr << "gtap counters: --format must be text, csv or jsonl (or svg with --roofline)\n";
    return kExitUsage;
  }
  if (!o.output.empty() && !svg) {
    std::cerr << "gtap counters: -o writes the roofline's SVG only (--roofline --format=svg); tables go to standard "
                 "output\n";
    return kExitUsage;
  }
  if (int(o.perDispatch) + int(o.deviceMetrics) + int(o.roofline) > 1) {
    std::cerr << "gtap counters: give one of --per-dispatch, --device-metrics and --roofline\n";
    return kExitUsage;
  }
  if (o.perDispatch && o.perProcess) {
    std::cerr << "gtap counters: --per-dispatch rows name their process already; it takes no --per-process\n";
    return kExitUsage;
  }
  std::optional<readers::OutputFile> out;
  if (svg)
    if (int status = openOutput("counters", o.output, o.force, out)) return status;
  auto opened = openCaptures(o.files, "counters", o.filter);
  if (opened.usage) return kExitUsage;
  if (opened.captures.empty()) return kExitError;
  reportNotes(opened, "counters");
  auto captures = opened.pointers();
  auto r = readers::counterReport(captures, o.perDispatch, o.perProcess);
  for (const auto& p : r.problems) std::cerr << "gtap counters: " << p << "\n";
  int status = opened.failures ? kExitError : kExitSuccess;
  if (svg) {
    std::string title = "Roofline: " + (captures.size() == 1 ? captures[0]->label()
                                                             : std::to_string(captures.size()) + " processes");
    auto points = r.roofline();
    auto write = [&](std::ostream& stream) { readers::writeRooflineSvg(points, title, stream); };
    int written = out ? writeOutput("counters", *out, [&](readers::OutputFile& f) { write(f.stream()); })
                      : (writeStdout("counters", write) ? kExitSuccess : kExitError);
    if (points.empty())
      std::cerr << "gtap counters: no kernel has FLOP or byte counters (docs/counters.md says which names count); "
                   "the plot is empty\n";
    return written == kExitSuccess ? status : written;
  }
  bool text = format == readers::OutputFormat::text;
  if (o.deviceMetrics) {
    printMetrics(r, format);
    if (text && r.metrics.empty()) std::cout << "no device metrics in " << (captures.size() == 1 ? captures[0]->path() : std::string("these captures")) << " (record them with gtap run --metrics-interval MS)\n";
    return status;
  }
  if (o.roofline) {
    auto points = r.roofline();
    printRoofline(points, o.perProcess, format);
    if (text && points.empty())
      std::cout << "(no kernel has FLOP or byte counters; docs/counters.md says which names and units count)\n";
    return status;
  }
  if (o.perDispatch) printDispatches(r, format);
  else printKernels(r, o.perProcess, format);
  if (!text) {
    // Never dropped silently, even when the table goes to a script.
    printNotes(r, std::cerr, "gtap counters: not collected: ");
    return status;
  }
  if (!r.measured) {
    std::cout << "no measured dispatches in "
              << (captures.size() == 1 ? captures[0]->path() : std::string("these captures"))
              << (r.anyCounterData ? "" : " (record counters with gtap run --counters LIST; gtap counters --list says which)")
              << "\n";
  }
  if (!r.notes.empty()) {
    std::cout << "\nAsked for and not collected:\n";
    printNotes(r, std::cout, "  ");
  }
  printMetrics(r, format);
  return status;
}

int listCounters(const CountersOptions& o) {
  readers::OutputFormat format;
  if (!readers::parseOutputFormat(o.format, format)) {
    std::cerr << "gtap counters: --format must be text, csv or jsonl\n";
    return kExitUsage;
  }
  std::string error;
  if (o.sim && (!useSimulatedZeDriver(error) || !useSimulatedHsaRuntime(error))) {
    std::cerr << "gtap counters --sim: " << error << "\n";
    return kExitError;
  }
  std::string zeNote, hsaNote;
  std::vector<OfferedDevice> devices = offeredLevelZeroCounters(zeNote);
  for (auto& d : offeredHsaCounters(hsaNote)) devices.push_back(std::move(d));
  if (devices.empty()) {
    std::cerr << "gtap counters: no device: " << zeNote << "; " << hsaNote
              << (o.sim ? "" : "; --sim lists the simulated devices'") << "\n";
    return kExitError;
  }
  readers::Table table("offered_counter", {"runtime", "device", "group", "sampling", "domain", "metric", "value_type", "units", "description"});
  size_t counters = 0;
  bool ze = false, hsa = false;
  for (const auto& d : devices)
    for (const auto& c : d.counters) {
      table.add({readers::Cell::str(d.runtime), readers::Cell::str(d.label), readers::Cell::str(c.offer.group),
                 readers::Cell::str(c.sampling.empty() ? "-" : c.sampling),
                 readers::Cell::str(c.domain.empty() ? "-" : c.domain), readers::Cell::str(c.offer.name),
                 readers::Cell::str(c.type.empty() ? "-" : c.type),
                 readers::Cell::str(c.units.empty() ? "-" : c.units), readers::Cell::str(c.description)});
      ++counters;
      (d.runtime == "hsa" ? hsa : ze) = true;
    }
  table.print(std::cout, format);
  if (format == readers::OutputFormat::text) {
    if (!counters) std::cout << "no device offers counters\n";
    if (ze)
      std::cout << "\nLevel Zero: the metrics of one group are collected in one pass, one group per pass; "
                   "only per-dispatch groups can be --counters.\n";
    if (hsa)
      std::cout << "\nHSA: counters of different blocks share a pass; a block takes as many counters per pass as "
                   "it has counter registers (its 'per pass' in the domain column).\n";
  }
  return kExitSuccess;
}

int counters(const CountersOptions& o) {
  if (o.list) {
    if (!o.files.empty()) {
      std::cerr << "gtap counters: --list asks the devices, not captures: give no files with it\n";
      return kExitUsage;
    }
    if (o.filter.given()) {
      std::cerr << "gtap counters: --list asks the devices: --kernel, --from, --to, --pid and --rank narrow captures\n";
      return kExitUsage;
    }
    return listCounters(o);
  }
  if (o.sim) {
    std::cerr << "gtap counters: --sim goes with --list\n";
    return kExitUsage;
  }
  if (o.files.empty()) {
    std::cerr << "gtap counters: give capture files, or --list (the counters the devices offer)\n";
    return kExitUsage;
  }
  return report(o);
}

}  // namespace

Action addCountersCommand(CLI::App& app) {
  auto o = std::make_shared<CountersOptions>();
  auto* cmd = app.add_subcommand(
      "counters", "Hardware counters of captures per kernel or dispatch, device metrics, roofline; or (--list) the "
                  "counters the devices offer");
  cmd->add_option("files", o->files, "Capture files (several merge: kernels by name)");
  cmd->add_flag("--list", o->list, "List every counter the devices offer (Level Zero metric groups, HSA AQL profile events)");
  cmd->add_flag("--sim", o->sim, "With --list: ask gtap's simulated Level Zero driver and HSA runtime instead of real devices");
  cmd->add_option("--format", o->format, "text, csv or jsonl; svg with --roofline");
  cmd->add_flag("--per-dispatch", o->perDispatch, "One row per measured dispatch, a column per counter");
  cmd->add_flag("--per-process", o->perProcess, "Kernels per process (rank) and name");
  cmd->add_flag("--device-metrics", o->deviceMetrics, "Only the device metrics sampled over time, per device and metric");
  cmd->add_flag("--roofline", o->roofline,
                "Arithmetic intensity and achieved FLOP/s per kernel against the device's peaks (a table, or an SVG "
                "plot with --format=svg -o FILE)");
  cmd->add_option("-o,--output", o->output, "With --roofline --format=svg: the SVG file (- for standard output)");
  cmd->add_flag("--force", o->force, "Replace an existing regular output file (never a link, directory or device)");
  addReportFilterOptions(*cmd, o->filter);
  return [o] { return counters(*o); };
}

}  // namespace gtap::cli
