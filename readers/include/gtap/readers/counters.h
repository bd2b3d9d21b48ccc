// Hardware counters and device metrics in a capture (format 1.7): the
// counter sets the device ops' values belong to, what was asked for and not
// collected, and the device metrics sampled over time.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "gtap/format/schema/capture.capnp.h"

namespace gtap::readers {

class Capture;
struct DeviceOp;

struct CounterInfo {
  std::string name, description, units, block;
  schema::CounterType type = schema::CounterType::UNSIGNED;
  // A stored value's 64 bits as a number.
  double value(uint64_t bits) const;
};

struct CounterSetInfo {
  uint32_t id = 0;
  uint32_t device = ~0u;
  std::string source, group;
  std::vector<CounterInfo> counters;
  uint32_t pass = 0, passes = 1;
};

struct CounterNoteInfo {
  std::string counter;
  uint32_t device = ~0u;
  std::string reason;
  uint32_t pass = 0;
};

struct DeviceMetricSeries {
  uint32_t device = ~0u;
  std::string source;
  uint64_t intervalNs = 0;
  struct Metric {
    std::string name, units;
    bool cumulative = false;
  };
  std::vector<Metric> metrics;
  std::vector<int64_t> times;  // host ns, one per sample
  std::vector<double> values;  // times.size() × metrics.size(); NaN: not read
  std::string note;
  double at(size_t sample, size_t metric) const { return values[sample * metrics.size() + metric]; }
};

struct CapturedCounters {
  std::map<uint32_t, CounterSetInfo> sets;  // by id
  std::vector<CounterNoteInfo> notes;
  std::string requested;
  std::vector<DeviceMetricSeries> metrics;  // one per device, source and metric list, samples in file order
  std::vector<std::string> problems;        // chunks left out, naming the file and offset
  bool any() const { return !sets.empty() || !notes.empty() || !requested.empty() || !metrics.empty(); }
};

// Reads every counters and device-metrics chunk. A chunk that does not
// decode, or whose lists disagree (values not a multiple of the metrics), is
// left out with a line in `problems` naming the file and offset. With a
// report window on the capture (--from, --to), only the device-metric
// samples taken in it are kept.
CapturedCounters loadCounters(const Capture& capture);

// The counters of one capture's dispatches as the exports read them: each
// measured operation's set, when its values fit one, and what did not fit.
class DispatchCounters {
 public:
  explicit DispatchCounters(CapturedCounters counters) : counters_(std::move(counters)) {}
  // The set `op`'s values belong to, or null when it was not measured, or
  // names a set the file does not define, or carries more or fewer values
  // than its set has counters (counted for problems()).
  const CounterSetInfo* setOf(const DeviceOp& op);
  const CapturedCounters& counters() const { return counters_; }
  // The chunks left out and the dispatches whose values were, naming `path`.
  std::vector<std::string> problems(const std::string& path) const;

 private:
  CapturedCounters counters_;
  std::map<uint32_t, uint64_t> unknownSets_, wrongCounts_;  // set -> dispatches
};

// A counter's value as text: whole numbers without a fraction, others to six
// significant digits.
std::string counterValueText(double v);

}  // namespace gtap::readers
