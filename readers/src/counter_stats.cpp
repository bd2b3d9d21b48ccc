#include "gtap/readers/counter_stats.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>

#include "gtap/readers/device_work.h"
#include "gtap/readers/parallel.h"
#include "gtap/readers/report_filter.h"

namespace gtap::readers {

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool contains(const std::string& haystack, const char* needle) { return haystack.find(needle) != std::string::npos; }

// Work-groups a launch ran: HSA gives the grid in work-items (the last group
// of a dimension may be partial), Level Zero the group count.
uint64_t workGroupsOf(const DeviceOp& op) {
  uint64_t n = 1;
  if (!op.gridSize.empty()) {
    for (size_t i = 0; i < op.gridSize.size() && i < 3; ++i) {
      uint64_t size = op.groupSize[i] ? op.groupSize[i] : 1;
      n *= (op.gridSize[i] + size - 1) / size;
    }
    return n;
  }
  for (uint32_t g : op.groupCount) n *= g;
  return n;
}

}  // namespace

void counterRole(CounterColumn& c) {
  std::string name = lower(c.name), units = lower(c.units);
  c.flops = c.bytes = false;
  c.byteScale = 1;
  // A rate ("GB/s", "flop/s") is not an amount: it cannot be summed over
  // dispatches.
  if (contains(units, "/")) return;
  if (contains(units, "flop") || contains(name, "flop")) {
    c.flops = true;
    return;
  }
  // The roofline is against memory bandwidth: bytes a cache level moved
  // (Intel's L3_BYTE_READ, LOAD_STORE_CACHE_BYTE_READ, SLM) are not memory
  // traffic.
  for (const char* level : {"cache", "l1_", "l2_", "l3_", "slm", "lds"})
    if (contains(name, level)) return;
  if (units == "bytes" || units == "byte" || units == "b") {
    c.bytes = true;
  } else if (units == "kb" || units == "kib" || units == "kilobytes") {
    c.bytes = true;
    c.byteScale = 1024;
  } else if (units == "mb" || units == "mib" || units == "megabytes") {
    c.bytes = true;
    c.byteScale = 1024.0 * 1024.0;
  } else if (units.empty() || units == "count" || units == "events") {
    // Names that say bytes when the units do not: Intel's
    // GPU_MEMORY_BYTE_READ / _WRITE, *_BYTES_READ / *_BYTES_WRITTEN and the
    // like; AMD's FETCH_SIZE and WRITE_SIZE are in kilobytes.
    if (name == "fetch_size" || name == "write_size") {
      c.bytes = true;
      c.byteScale = 1024;
    } else if (contains(name, "byte_read") || contains(name, "byte_write") || contains(name, "bytes_read") ||
               contains(name, "bytes_written") || contains(name, "bytesread") || contains(name, "byteswritten") ||
               contains(name, "readbytes") || contains(name, "writebytes") || contains(name, "writtenbytes")) {
      c.bytes = true;
    }
  }
}

void ValueStats::add(double v) {
  if (!count || v < min) min = v;
  if (!count || v > max) max = v;
  total += v;
  ++count;
}

void ValueStats::add(const ValueStats& o) {
  if (!o.count) return;
  if (!count || o.min < min) min = o.min;
  if (!count || o.max > max) max = o.max;
  total += o.total;
  count += o.count;
}

std::optional<double> DerivedSums::busyShare() const {
  if (busyDenominator <= 0) return std::nullopt;
  return busyNumerator / busyDenominator;
}
std::optional<double> DerivedSums::wavesPerGroup() const {
  if (waveGroups <= 0) return std::nullopt;
  return waves / waveGroups;
}
std::optional<double> DerivedSums::frequencyHz() const {
  if (clockNs <= 0) return std::nullopt;
  return clocks / clockNs * 1e9;
}
void DerivedSums::add(const DerivedSums& o) {
  busyNumerator += o.busyNumerator;
  busyDenominator += o.busyDenominator;
  waves += o.waves;
  waveGroups += o.waveGroups;
  clocks += o.clocks;
  clockNs += o.clockNs;
}

std::optional<double> MeasuredDispatch::value(uint32_t column) const {
  for (const auto& [c, v] : values)
    if (c == column) return v;
  return std::nullopt;
}

std::string CounterReport::deviceName(size_t capture, uint32_t device) const {
  if (capture < devices.size()) {
    auto it = devices[capture].find(device);
    if (it != devices[capture].end() && !it->second.name.empty()) return it->second.name;
  }
  return device == ~0u ? std::string("-") : "device " + std::to_string(device);
}

std::vector<RooflinePoint> CounterReport::roofline() const {
  std::vector<RooflinePoint> out;
  for (const auto& k : kernels) {
    if (!k.hasFlops && !k.hasBytes) continue;
    RooflinePoint p;
    p.kernel = k.kernel;
    p.process = k.process;
    p.device = deviceName(k.deviceCapture, k.device);
    p.flops = k.flops;
    p.bytes = k.bytes;
    p.timeNs = k.rooflineNs;
    if (k.hasFlops && k.hasBytes && k.bytes > 0) p.intensity = k.flops / k.bytes;
    if (k.rooflineNs > 0) {
      p.flopsPerSecond = k.flops / static_cast<double>(k.rooflineNs) * 1e9;
      p.bytesPerSecond = k.bytes / static_cast<double>(k.rooflineNs) * 1e9;
    }
    if (k.deviceCapture < devices.size()) {
      auto it = devices[k.deviceCapture].find(k.device);
      if (it != devices[k.deviceCapture].end()) {
        p.peakFlopsPerSecond = it->second.peakFlopsPerSecond;
        p.peakBytesPerSecond = it->second.peakBytesPerSecond;
      }
    }
    if (p.peakFlopsPerSecond > 0 && p.peakBytesPerSecond > 0 && p.intensity > 0) {
      p.attainable = std::min(p.peakFlopsPerSecond, p.intensity * p.peakBytesPerSecond);
      p.ofAttainable = p.flopsPerSecond / p.attainable;
    }
    out.push_back(std::move(p));
  }
  return out;
}

namespace {

// The inputs of the derived metrics one dispatch carries.
DerivedSums derivedOf(const MeasuredDispatch& d, const std::vector<CounterColumn>& columns) {
  std::optional<double> grbmCount, grbmActive, sqWaves, gpuTime, gpuBusy, coreClocks;
  for (const auto& [c, v] : d.values) {
    const std::string& n = columns[c].name;
    if (n == "GRBM_COUNT") grbmCount = v;
    else if (n == "GRBM_GUI_ACTIVE") grbmActive = v;
    else if (n == "SQ_WAVES") sqWaves = v;
    else if (n == "GpuTime") gpuTime = v;
    else if (n == "GpuBusyTime") gpuBusy = v;
    else if (n == "GpuCoreClocks") coreClocks = v;
  }
  DerivedSums s;
  if (grbmCount && grbmActive) {
    s.busyNumerator = *grbmActive;
    s.busyDenominator = *grbmCount;
  } else if (gpuTime && gpuBusy) {
    s.busyNumerator = *gpuBusy;
    s.busyDenominator = *gpuTime;
  }
  if (sqWaves && d.workGroups) {
    s.waves = *sqWaves;
    s.waveGroups = static_cast<double>(d.workGroups);
  }
  if (coreClocks && gpuTime) {
    s.clocks = *coreClocks;
    s.clockNs = *gpuTime;
  } else if (grbmCount && d.timed && d.durationNs > 0) {
    s.clocks = *grbmCount;
    s.clockNs = static_cast<double>(d.durationNs);
  }
  return s;
}

class ReportBuilder {
 public:
  ReportBuilder(CounterReport& report, bool perDispatch, bool perProcess)
      : r_(report), perDispatch_(perDispatch), perProcess_(perProcess) {}

  void capture(const Capture& capture) {
    size_t index = r_.captures.size();
    r_.captures.push_back(capture.path());
    r_.processes.push_back(capture.label());
    CapturedCounters counters = loadCounters(capture);
    for (auto& p : counters.problems) r_.problems.push_back(std::move(p));
    r_.anyCounterData = r_.anyCounterData || counters.any();
    r_.requested.push_back(counters.requested);
    for (const auto& n : counters.notes) r_.notes.push_back({index, n});
    // Each set's counters as report columns.
    std::map<uint32_t, std::vector<uint32_t>> setColumns;
    for (const auto& [id, set] : counters.sets) {
      auto& cols = setColumns[id];
      for (const auto& c : set.counters) cols.push_back(column(c));
    }

    DeviceWork work;
    // Problems are said once per file and set, with how many dispatches.
    std::map<uint32_t, uint64_t> unknownSet;
    std::map<std::pair<uint32_t, size_t>, uint64_t> wrongCount;
    // Every operation is read, so that a dispatch's index is its place in
    // the file whatever the report's filter keeps.
    uint64_t opIndex = 0;
    const ReportFilter* filter = capture.filter();
    if (filter && !filter->narrowsRecords()) filter = nullptr;
    streamEveryDeviceOp(capture, work, false, [&](std::span<const DeviceOp> ops) {
      for (const DeviceOp& op : ops) {
        uint64_t at = opIndex++;
        if (!op.counterSet) continue;
        if (filter && !filter->keepsOp(capture, op)) continue;
        auto set = setColumns.find(op.counterSet);
        if (set == setColumns.end()) {
          ++unknownSet[op.counterSet];
          continue;
        }
        if (set->second.size() != op.counterValues.size()) {
          ++wrongCount[{op.counterSet, op.counterValues.size()}];
          continue;
        }
        const CounterSetInfo& info = counters.sets.at(op.counterSet);
        MeasuredDispatch d;
        d.capture = index;
        d.index = at;
        d.kernel = op.name.empty() ? std::string("(unnamed)") : std::string(op.name);
        d.device = op.device;
        d.queue = work.queueName(op.queue);
        d.timed = op.timed;
        d.durationNs = op.timed ? op.durationNs() : 0;
        d.workGroups = workGroupsOf(op);
        d.set = op.counterSet;
        for (size_t i = 0; i < op.counterValues.size(); ++i)
          d.values.emplace_back(set->second[i], info.counters[i].value(op.counterValues[i]));
        add(std::move(d));
      }
      return true;
    });
    for (const auto& n : work.notes) r_.problems.push_back(n);
    for (const auto& [id, n] : unknownSet)
      r_.problems.push_back(capture.path() + ": " + std::to_string(n) + " dispatch" + (n == 1 ? "" : "es") +
                            (n == 1 ? " names" : " name") + " counter set " + std::to_string(id) +
                            ", which the file does not define; their values are left out");
    for (const auto& [key, n] : wrongCount)
      r_.problems.push_back(capture.path() + ": " + std::to_string(n) + " dispatch" + (n == 1 ? "" : "es") +
                            " of counter set " + std::to_string(key.first) + (n == 1 ? " carries " : " carry ") + std::to_string(key.second) +
                            " values for its " + std::to_string(setColumns[key.first].size()) +
                            " counters; their values are left out");
    auto& devices = r_.devices.emplace_back();
    for (const auto& [id, d] : work.devices) devices[id] = {d.name, d.peakFlopsPerSecond, d.peakBytesPerSecond};
    for (const auto& series : counters.metrics) summarise(index, series);
  }

  // The report of one other capture (built alone, not finished) as this
  // report's next capture: its columns and kernels joined to these by name,
  // its indices moved past the captures before it.
  void absorb(CounterReport&& part) {
    size_t base = r_.captures.size();
    std::vector<uint32_t> columns;
    for (const auto& c : part.columns) {
      CounterInfo info;
      info.name = c.name;
      info.units = c.units;
      columns.push_back(column(info));
    }
    auto move = [](auto& from, auto& to) {
      to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
    };
    move(part.captures, r_.captures);
    move(part.processes, r_.processes);
    move(part.requested, r_.requested);
    move(part.problems, r_.problems);
    move(part.devices, r_.devices);
    for (auto& n : part.notes) r_.notes.push_back({n.capture + base, std::move(n.note)});
    for (auto& m : part.metrics) {
      m.capture += base;
      r_.metrics.push_back(std::move(m));
    }
    r_.measured += part.measured;
    r_.anyCounterData = r_.anyCounterData || part.anyCounterData;
    for (auto& k : part.kernels) {
      auto [it, fresh] = kernelIndex_.emplace(std::make_pair(k.process, k.kernel), r_.kernels.size());
      if (fresh) {
        KernelCounters copy;
        copy.kernel = k.kernel;
        copy.process = k.process;
        copy.device = k.device;
        copy.deviceCapture = k.deviceCapture + base;
        r_.kernels.push_back(std::move(copy));
      }
      KernelCounters& to = r_.kernels[it->second];
      to.dispatches += k.dispatches;
      to.deviceNs += k.deviceNs;
      for (size_t c = 0; c < k.values.size(); ++c) {
        if (!k.values[c].count) continue;
        if (to.values.size() <= columns[c]) to.values.resize(columns[c] + 1);
        to.values[columns[c]].add(k.values[c]);
      }
      to.derived.add(k.derived);
      to.busyShare.add(k.busyShare);
      to.wavesPerGroup.add(k.wavesPerGroup);
      to.frequencyHz.add(k.frequencyHz);
      to.flops += k.flops;
      to.bytes += k.bytes;
      to.rooflineNs += k.rooflineNs;
      to.hasFlops = to.hasFlops || k.hasFlops;
      to.hasBytes = to.hasBytes || k.hasBytes;
    }
    for (auto& d : part.dispatches) {
      d.capture += base;
      for (auto& [c, v] : d.values) c = columns[c];
      r_.dispatches.push_back(std::move(d));
    }
  }

  void finish() {
    for (auto& k : r_.kernels) k.values.resize(r_.columns.size());
    std::sort(r_.kernels.begin(), r_.kernels.end(),
              [](const KernelCounters& a, const KernelCounters& b) {
                return std::tie(a.process, a.kernel) < std::tie(b.process, b.kernel);
              });
  }

 private:
  uint32_t column(const CounterInfo& c) {
    auto [it, fresh] = columnIndex_.emplace(c.name, static_cast<uint32_t>(r_.columns.size()));
    if (fresh) {
      CounterColumn col;
      col.name = c.name;
      col.units = c.units;
      counterRole(col);
      r_.columns.push_back(std::move(col));
    }
    return it->second;
  }

  void add(MeasuredDispatch d) {
    d.derived = derivedOf(d, r_.columns);
    ++r_.measured;
    std::string process = perProcess_ ? r_.processes[d.capture] : std::string();
    auto [it, fresh] = kernelIndex_.emplace(std::make_pair(process, d.kernel), r_.kernels.size());
    if (fresh) {
      KernelCounters k;
      k.kernel = d.kernel;
      k.process = process;
      k.device = d.device;
      k.deviceCapture = d.capture;
      r_.kernels.push_back(std::move(k));
    }
    KernelCounters& k = r_.kernels[it->second];
    ++k.dispatches;
    if (d.timed) k.deviceNs += d.durationNs;
    bool roofline = false;
    for (const auto& [c, v] : d.values) {
      if (k.values.size() <= c) k.values.resize(c + 1);
      k.values[c].add(v);
      const CounterColumn& col = r_.columns[c];
      if (col.flops) {
        k.flops += v;
        k.hasFlops = roofline = true;
      } else if (col.bytes) {
        k.bytes += v * col.byteScale;
        k.hasBytes = roofline = true;
      }
    }
    if (roofline && d.timed) k.rooflineNs += d.durationNs;
    k.derived.add(d.derived);
    if (auto v = d.derived.busyShare()) k.busyShare.add(*v);
    if (auto v = d.derived.wavesPerGroup()) k.wavesPerGroup.add(*v);
    if (auto v = d.derived.frequencyHz()) k.frequencyHz.add(*v);
    if (perDispatch_) r_.dispatches.push_back(std::move(d));
  }

  void summarise(size_t capture, const DeviceMetricSeries& s) {
    std::string device = r_.deviceName(capture, s.device);
    if (s.metrics.empty() || s.times.empty()) {
      MetricSummary m;
      m.capture = capture;
      m.device = s.device;
      m.deviceName = device;
      m.source = s.source;
      m.note = s.note.empty() ? "no samples" : s.note;
      r_.metrics.push_back(std::move(m));
      return;
    }
    for (size_t k = 0; k < s.metrics.size(); ++k) {
      MetricSummary m;
      m.capture = capture;
      m.device = s.device;
      m.deviceName = device;
      m.source = s.source;
      m.metric = s.metrics[k].name;
      m.units = s.metrics[k].units;
      m.cumulative = s.metrics[k].cumulative;
      ValueStats stats;
      std::optional<std::pair<int64_t, double>> first, previous;
      std::pair<int64_t, double> last{};
      for (size_t i = 0; i < s.times.size(); ++i) {
        double v = s.at(i, k);
        if (std::isnan(v)) continue;
        ++m.samples;
        if (!m.cumulative) {
          stats.add(v);
          continue;
        }
        if (previous && s.times[i] > previous->first)
          stats.add((v - previous->second) / static_cast<double>(s.times[i] - previous->first) * 1e9);
        previous = std::make_pair(s.times[i], v);
        if (!first) first = previous;
        last = *previous;
      }
      m.min = stats.min;
      m.max = stats.max;
      m.mean = stats.mean();
      if (m.cumulative && first && last.first > first->first)
        m.rate = (last.second - first->second) / static_cast<double>(last.first - first->first) * 1e9;
      if (!s.note.empty()) m.note = s.note;
      r_.metrics.push_back(std::move(m));
    }
  }

  CounterReport& r_;
  bool perDispatch_, perProcess_;
  std::unordered_map<std::string, uint32_t> columnIndex_;
  std::map<std::pair<std::string, std::string>, size_t> kernelIndex_;
};

}  // namespace

CounterReport counterReport(std::span<const Capture* const> captures, bool perDispatch, bool perProcess) {
  // Each capture's report built on its own, several at once (gtap -j), and
  // joined in order: the same report whatever the number of threads.
  CounterReport report;
  ReportBuilder builder(report, perDispatch, perProcess);
  std::vector<std::optional<CounterReport>> parts(captures.size());
  forEachInParallel(
      captures.size(),
      [&](size_t i) {
        CounterReport& part = parts[i].emplace();
        ReportBuilder alone(part, perDispatch, perProcess);
        alone.capture(*captures[i]);
        captures[i]->reader().releasePages();
      },
      [&](size_t i) {
        builder.absorb(std::move(*parts[i]));
        parts[i].reset();
      });
  builder.finish();
  return report;
}

}  // namespace gtap::readers
