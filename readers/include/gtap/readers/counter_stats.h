// What the hardware counters of one or more captures say: per kernel and per
// measured dispatch, the counters' values and the metrics derived from them,
// the roofline figures where FLOP and byte counters were read, what was asked
// for and not collected, and the device metrics sampled over time
// (docs/counters.md).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "gtap/readers/capture.h"
#include "gtap/readers/counters.h"

namespace gtap::readers {

// A counter as the reports show it: the same name in several sets, devices
// or files is one column.
struct CounterColumn {
  std::string name, units;
  // Roofline roles (counterRole): FLOPs done, or bytes moved to or from
  // memory; `byteScale` turns the counter's units into bytes.
  bool flops = false, bytes = false;
  double byteScale = 1;
};

// Whether a counter counts FLOPs or bytes for the roofline, by its name and
// units (docs/counters.md, "Roofline"): sets `flops`, `bytes`, `byteScale`.
void counterRole(CounterColumn& column);

struct ValueStats {
  uint64_t count = 0;
  double total = 0, min = 0, max = 0;
  double mean() const { return count ? total / static_cast<double>(count) : 0; }
  void add(double v);
  void add(const ValueStats& other);  // both sets of values
};

// Metrics derived from counters (docs/counters.md, "Derived metrics"): sums
// of their inputs over the dispatches that have all of them, so a kernel's
// figure weighs each dispatch by its size.
struct DerivedSums {
  double busyNumerator = 0, busyDenominator = 0;  // GRBM_GUI_ACTIVE / GRBM_COUNT, or GpuBusyTime / GpuTime
  double waves = 0, waveGroups = 0;               // SQ_WAVES / work-groups
  double clocks = 0, clockNs = 0;                 // GpuCoreClocks / GpuTime, or GRBM_COUNT / device time
  std::optional<double> busyShare() const;
  std::optional<double> wavesPerGroup() const;
  std::optional<double> frequencyHz() const;
  void add(const DerivedSums& other);
};

struct MeasuredDispatch {
  size_t capture = 0;   // index in the captures given
  uint64_t index = 0;   // the operation's place among the file's device operations, from 0
  std::string kernel;
  uint32_t device = ~0u;
  std::string queue;
  bool timed = false;
  int64_t durationNs = 0;
  uint64_t workGroups = 0;
  uint32_t set = 0;
  std::vector<std::pair<uint32_t, double>> values;  // (column, value)
  DerivedSums derived;
  std::optional<double> value(uint32_t column) const;
};

struct KernelCounters {
  std::string kernel;
  std::string process;  // set when grouping per process
  uint64_t dispatches = 0;  // measured ones
  int64_t deviceNs = 0;     // their device time (timed ones)
  std::vector<ValueStats> values;  // by column
  DerivedSums derived;  // the kernel's figures: ratios of sums
  // The derived metrics of each dispatch that has their inputs (min and max
  // over dispatches).
  ValueStats busyShare, wavesPerGroup, frequencyHz;
  // Roofline: FLOP and byte counters summed, over the device time of the
  // dispatches that carry any of them.
  double flops = 0, bytes = 0;
  int64_t rooflineNs = 0;
  bool hasFlops = false, hasBytes = false;
  uint32_t device = ~0u;  // of its first measured dispatch
  size_t deviceCapture = 0;
};

struct RooflinePoint {
  std::string kernel;
  std::string process;  // when grouped per process
  std::string device;
  double flops = 0, bytes = 0;
  int64_t timeNs = 0;
  double intensity = 0;         // FLOP per byte
  double flopsPerSecond = 0;    // achieved
  double bytesPerSecond = 0;    // achieved
  double peakFlopsPerSecond = 0, peakBytesPerSecond = 0;  // 0: the device did not say
  // The roofline's bound at this intensity, min(peak FLOP/s, intensity × peak
  // bytes/s), and the share of it achieved (0 when the peaks are unknown).
  double attainable = 0, ofAttainable = 0;
};

struct MetricSummary {
  size_t capture = 0;
  uint32_t device = ~0u;
  std::string deviceName, source, metric, units;
  bool cumulative = false;
  uint64_t samples = 0;  // values read (NaN ones not counted)
  // Gauges: the values; cumulative metrics: the rate between consecutive
  // samples, in units per second, and `rate` over the whole series.
  double min = 0, mean = 0, max = 0, rate = 0;
  std::string note;  // why the device has no samples
};

struct CounterNoteRow {
  size_t capture = 0;
  CounterNoteInfo note;
};

struct CounterReport {
  std::vector<std::string> captures;  // paths, as given
  std::vector<std::string> processes; // each capture's label ("pid 123", "rank 1 (pid 9)")
  std::vector<CounterColumn> columns;
  std::vector<KernelCounters> kernels;        // by name
  std::vector<MeasuredDispatch> dispatches;   // in file order, when asked for
  std::vector<CounterNoteRow> notes;
  std::vector<MetricSummary> metrics;
  std::vector<std::string> requested;  // per capture ("" when none)
  std::vector<std::string> problems;   // what is wrong in a file, naming it
  uint64_t measured = 0;               // dispatches with counters
  bool anyCounterData = false;         // any counters or device-metrics chunk at all
  struct DeviceFacts {
    std::string name;
    double peakFlopsPerSecond = 0, peakBytesPerSecond = 0;
  };
  std::vector<std::map<uint32_t, DeviceFacts>> devices;  // per capture
  // Per kernel with FLOP or byte counters, by name.
  std::vector<RooflinePoint> roofline() const;
  std::string deviceName(size_t capture, uint32_t device) const;
};

// Reads the counters, device metrics and measured device operations of each
// capture, a batch of operations at a time, several captures at once (gtap
// -j; the report is the same whatever the number of threads); kernels by name, or by process
// and name with `perProcess`. A dispatch whose values name a
// set the file does not define, or that carries more or fewer values than
// its set has counters, is left out and said once per file and set in
// `problems`.
CounterReport counterReport(std::span<const Capture* const> captures, bool perDispatch, bool perProcess = false);

}  // namespace gtap::readers
