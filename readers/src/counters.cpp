#include "gtap/readers/counters.h"

#include <kj/exception.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>

#include "gtap/format/container.h"
#include "gtap/readers/capture.h"
#include "gtap/readers/device_work.h"
#include "gtap/readers/report_filter.h"

namespace gtap::readers {

double CounterInfo::value(uint64_t bits) const {
  switch (type) {
    case schema::CounterType::SIGNED: return static_cast<double>(static_cast<int64_t>(bits));
    case schema::CounterType::REAL: return std::bit_cast<double>(bits);
    case schema::CounterType::BOOLEAN: return bits ? 1.0 : 0.0;
    default: return static_cast<double>(bits);
  }
}

namespace {

std::string text(capnp::Text::Reader t) { return std::string(t.cStr(), t.size()); }

void readCounters(schema::Counters::Reader root, CapturedCounters& out) {
  for (auto s : root.getSets()) {
    CounterSetInfo set;
    set.id = s.getId();
    set.device = s.getDevice();
    set.source = text(s.getSource());
    set.group = text(s.getGroup());
    set.pass = s.getPass();
    set.passes = s.getPasses();
    for (auto c : s.getCounters()) {
      CounterInfo info;
      info.name = text(c.getName());
      info.description = text(c.getDescription());
      info.units = text(c.getUnits());
      info.block = text(c.getBlock());
      info.type = c.getType();
      set.counters.push_back(std::move(info));
    }
    if (set.id) out.sets[set.id] = std::move(set);
  }
  for (auto n : root.getNotes())
    out.notes.push_back({text(n.getCounter()), n.getDevice(), text(n.getReason()), n.getPass()});
  if (root.hasRequested() && out.requested.empty()) out.requested = text(root.getRequested());
}

}  // namespace

CapturedCounters loadCounters(const Capture& capture) {
  CapturedCounters out;
  const auto& reader = capture.reader();
  auto& notes = out.problems;
  for (const auto& c : reader.chunks()) {
    bool counters = c.kind == static_cast<uint16_t>(schema::ChunkKind::COUNTERS);
    bool metrics = c.kind == static_cast<uint16_t>(schema::ChunkKind::DEVICE_METRICS);
    if (!counters && !metrics) continue;
    std::string where = capture.path() + ": chunk at offset " + std::to_string(c.offset) + ": ";
    try {
      auto d = reader.decode(c);
      if (counters) {
        CapturedCounters one;
        readCounters(d.root<schema::Counters>(), one);
        for (auto& [id, set] : one.sets) out.sets[id] = std::move(set);
        out.notes.insert(out.notes.end(), one.notes.begin(), one.notes.end());
        if (out.requested.empty()) out.requested = std::move(one.requested);
        continue;
      }
      auto root = d.root<schema::DeviceMetrics>();
      DeviceMetricSeries series;
      series.device = root.getDevice();
      series.source = text(root.getSource());
      series.intervalNs = root.getIntervalNs();
      series.note = text(root.getNote());
      for (auto m : root.getMetrics()) series.metrics.push_back({text(m.getName()), text(m.getUnits()), m.getCumulative()});
      for (int64_t t : root.getTimes()) series.times.push_back(t);
      auto values = root.getValues();
      if (values.size() != series.times.size() * series.metrics.size()) {
        notes.push_back(where + "device metrics hold " + std::to_string(values.size()) + " values for " +
                        std::to_string(series.times.size()) + " samples of " +
                        std::to_string(series.metrics.size()) + " metrics; left out");
        continue;
      }
      // A sampler writes each device's samples since the last flush as a
      // chunk of its own: the chunks of one device, source and metrics are
      // one series.
      DeviceMetricSeries* same = nullptr;
      for (auto& m : out.metrics)
        if (m.device == series.device && m.source == series.source && m.metrics.size() == series.metrics.size() &&
            std::equal(m.metrics.begin(), m.metrics.end(), series.metrics.begin(), [](const auto& a, const auto& b) {
              return a.name == b.name && a.units == b.units && a.cumulative == b.cumulative;
            }))
          same = &m;
      if (!same) {
        series.values.reserve(values.size());
        for (double v : values) series.values.push_back(v);
        out.metrics.push_back(std::move(series));
        continue;
      }
      if (same->note.empty()) same->note = series.note;
      same->times.insert(same->times.end(), series.times.begin(), series.times.end());
      for (double v : values) same->values.push_back(v);
    } catch (const kj::Exception& e) {
      notes.push_back(where + "malformed " + kindName(c.kind) + ": " + e.getDescription().cStr());
    } catch (const format::FormatError& e) {
      notes.push_back(where + e.what());
    }
  }
  // A report's window (--from, --to) keeps the samples taken in it.
  if (const auto* filter = capture.filter(); filter && (filter->fromNs || filter->toNs))
    for (auto& series : out.metrics) {
      size_t width = series.metrics.size(), kept = 0;
      for (size_t i = 0; i < series.times.size(); ++i) {
        if (!filter->inWindow(capture, series.times[i])) continue;
        series.times[kept] = series.times[i];
        std::copy_n(series.values.begin() + static_cast<ptrdiff_t>(i * width), width,
                    series.values.begin() + static_cast<ptrdiff_t>(kept * width));
        ++kept;
      }
      series.times.resize(kept);
      series.values.resize(kept * width);
    }
  return out;
}

const CounterSetInfo* DispatchCounters::setOf(const DeviceOp& op) {
  if (!op.counterSet) return nullptr;
  auto set = counters_.sets.find(op.counterSet);
  if (set == counters_.sets.end()) {
    ++unknownSets_[op.counterSet];
    return nullptr;
  }
  if (set->second.counters.size() != op.counterValues.size()) {
    ++wrongCounts_[op.counterSet];
    return nullptr;
  }
  return &set->second;
}

std::vector<std::string> DispatchCounters::problems(const std::string& path) const {
  std::vector<std::string> out = counters_.problems;
  for (const auto& [id, n] : unknownSets_)
    out.push_back(path + ": " + std::to_string(n) + " dispatch" + (n == 1 ? " names" : "es name") + " counter set " +
                  std::to_string(id) + ", which the file does not define; their values are left out");
  for (const auto& [id, n] : wrongCounts_)
    out.push_back(path + ": " + std::to_string(n) + " dispatch" + (n == 1 ? "" : "es") + " of counter set " +
                  std::to_string(id) + (n == 1 ? " carries" : " carry") + " a number of values other than its " +
                  std::to_string(counters_.sets.at(id).counters.size()) + " counters; their values are left out");
  return out;
}

std::string counterValueText(double v) {
  char text[40];
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 9.0e15) std::snprintf(text, sizeof text, "%.0f", v);
  else std::snprintf(text, sizeof text, "%.6g", v);
  return text;
}

}  // namespace gtap::readers
