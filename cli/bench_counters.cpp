#include "bench_counters.h"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>

#include "gtap/readers/capture.h"
#include "gtap/readers/counters.h"
#include "gtap/readers/device_work.h"
#include "gtap/readers/json.h"
#include "gtap/readers/table.h"

namespace gtap::cli {

bool joinCounterPass(const std::string& profile, const BenchTimings& timings, uint32_t pass,
                     JoinedCounters& joined, uint32_t& passesNeeded, std::string& error) {
  try {
    readers::Capture capture(profile);
    readers::CapturedCounters counters = readers::loadCounters(capture);
    for (const auto& p : counters.problems) std::cerr << "gtap bench: " << p << "\n";
    readers::DeviceWork work = readers::loadDeviceWork(capture);
    passesNeeded = 0;
    for (const auto& [id, set] : counters.sets) passesNeeded = std::max(passesNeeded, set.passes);
    if (pass == 0)
      for (const auto& n : counters.notes)
        if (n.reason.rfind("needs another pass", 0) != 0) joined.notes.push_back(n.counter + ": " + n.reason);
    // This pass's counters, as columns of the joined table.
    std::map<uint32_t, std::vector<size_t>> columnOf;  // set id -> column per counter
    for (const auto& [id, set] : counters.sets) {
      auto& columns = columnOf[id];
      for (const auto& c : set.counters) {
        auto it = std::find(joined.names.begin(), joined.names.end(), c.name);
        if (it == joined.names.end()) {
          joined.names.push_back(c.name);
          joined.units.push_back(c.units);
          for (auto& d : joined.dispatches) d.values.push_back(std::numeric_limits<double>::quiet_NaN());
          it = joined.names.end() - 1;
        }
        columns.push_back(static_cast<size_t>(it - joined.names.begin()));
      }
    }
    // Measured dispatches per window, in submission order.
    std::vector<std::vector<const readers::DeviceOp*>> perWindow(timings.windows.size());
    for (const auto& op : work.ops) {
      if (op.kind != schema::DeviceOpKind::KERNEL || !op.counterSet) continue;
      int64_t t = op.submitNs ? op.submitNs : op.appendNs;
      for (size_t w = 0; w < timings.windows.size(); ++w)
        if (t >= timings.windows[w].first && t <= timings.windows[w].second) {
          perWindow[w].push_back(&op);
          break;
        }
    }
    size_t at = 0;
    bool first = joined.dispatches.empty() && pass == 0;
    for (size_t w = 0; w < perWindow.size(); ++w) {
      auto& ops = perWindow[w];
      std::stable_sort(ops.begin(), ops.end(), [](const readers::DeviceOp* a, const readers::DeviceOp* b) {
        return (a->submitNs ? a->submitNs : a->appendNs) < (b->submitNs ? b->submitNs : b->appendNs);
      });
      for (size_t k = 0; k < ops.size(); ++k) {
        const readers::DeviceOp& op = *ops[k];
        if (first) {
          JoinedDispatch d;
          d.window = w;
          d.position = k;
          d.kernel = std::string(op.name);
          d.values.assign(joined.names.size(), std::numeric_limits<double>::quiet_NaN());
          joined.dispatches.push_back(std::move(d));
        }
        if (at >= joined.dispatches.size() || joined.dispatches[at].window != w ||
            joined.dispatches[at].position != k || joined.dispatches[at].kernel != op.name) {
          error = "pass " + std::to_string(pass + 1) + " measured dispatch " + std::to_string(k) + " of window " +
                  std::to_string(w) + " (" + std::string(op.name) +
                  ") where the first pass measured something else: the replays diverged";
          return false;
        }
        JoinedDispatch& d = joined.dispatches[at++];
        auto set = counters.sets.find(op.counterSet);
        if (set == counters.sets.end()) {
          error = profile + ": a dispatch names counter set " + std::to_string(op.counterSet) + ", which the file does not define";
          return false;
        }
        const auto& columns = columnOf[op.counterSet];
        for (size_t i = 0; i < set->second.counters.size() && i < op.counterValues.size(); ++i)
          d.values[columns[i]] = set->second.counters[i].value(op.counterValues[i]);
      }
    }
    if (at != joined.dispatches.size()) {
      error = "pass " + std::to_string(pass + 1) + " measured " + std::to_string(at) + " dispatches, the first " +
              std::to_string(joined.dispatches.size()) + ": the replays diverged";
      return false;
    }
    joined.passes = pass + 1;
    return true;
  } catch (const std::exception& e) {
    error = profile + ": " + e.what();
    return false;
  }
}

namespace {

struct KernelCounters {
  std::string kernel;
  uint64_t dispatches = 0;
  std::vector<double> total, min, max;
  std::vector<uint64_t> seen;
};

std::vector<KernelCounters> perKernel(const JoinedCounters& j) {
  std::vector<KernelCounters> out;
  for (const auto& d : j.dispatches) {
    auto it = std::find_if(out.begin(), out.end(), [&](const KernelCounters& k) { return k.kernel == d.kernel; });
    if (it == out.end()) {
      KernelCounters k;
      k.kernel = d.kernel;
      k.total.assign(j.names.size(), 0);
      k.min.assign(j.names.size(), std::numeric_limits<double>::infinity());
      k.max.assign(j.names.size(), -std::numeric_limits<double>::infinity());
      k.seen.assign(j.names.size(), 0);
      out.push_back(std::move(k));
      it = out.end() - 1;
    }
    ++it->dispatches;
    for (size_t i = 0; i < d.values.size(); ++i) {
      if (std::isnan(d.values[i])) continue;
      it->total[i] += d.values[i];
      it->min[i] = std::min(it->min[i], d.values[i]);
      it->max[i] = std::max(it->max[i], d.values[i]);
      ++it->seen[i];
    }
  }
  return out;
}

std::string number(double v) {
  if (std::isnan(v)) return "-";
  char buf[64];
  if (v == std::floor(v) && std::fabs(v) < 1e15) std::snprintf(buf, sizeof buf, "%.0f", v);
  else std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

}  // namespace

void printCountersText(const JoinedCounters& j) {
  std::cout << "\ncounters: " << j.dispatches.size() << " measured dispatches, " << j.passes
            << (j.passes == 1 ? " pass (one replay)" : " passes (one replay each), joined per dispatch") << "\n";
  std::vector<std::string> header = {"kernel", "dispatches"};
  for (size_t i = 0; i < j.names.size(); ++i)
    header.push_back(j.names[i] + " mean" + (j.units[i].empty() ? "" : " (" + j.units[i] + ")"));
  readers::Table table("bench_counter", header);
  for (const auto& k : perKernel(j)) {
    std::vector<readers::Cell> row = {readers::Cell::str(k.kernel), readers::Cell::count(static_cast<int64_t>(k.dispatches))};
    for (size_t i = 0; i < j.names.size(); ++i)
      row.push_back(readers::Cell::str(k.seen[i] ? number(k.total[i] / static_cast<double>(k.seen[i])) : "-"));
    table.add(std::move(row));
  }
  if (j.dispatches.empty()) std::cout << "no dispatch was measured\n";
  else table.print(std::cout, readers::OutputFormat::text);
  for (const auto& n : j.notes) std::cout << "not collected: " << n << "\n";
}

std::string countersJson(const JoinedCounters& j) {
  auto value = [](double v) { return std::isnan(v) ? std::string("null") : number(v); };
  std::string s = "{\"passes\":" + std::to_string(j.passes) + ",\"names\":[";
  for (size_t i = 0; i < j.names.size(); ++i) {
    if (i) s += ",";
    readers::appendJsonString(s, j.names[i]);
  }
  s += "],\"kernels\":[";
  auto kernels = perKernel(j);
  for (size_t k = 0; k < kernels.size(); ++k) {
    s += k ? ",{\"name\":" : "{\"name\":";
    readers::appendJsonString(s, kernels[k].kernel);
    s += ",\"dispatches\":" + std::to_string(kernels[k].dispatches) + ",\"counters\":{";
    for (size_t i = 0; i < j.names.size(); ++i) {
      if (i) s += ",";
      readers::appendJsonString(s, j.names[i]);
      const auto& x = kernels[k];
      s += x.seen[i] ? ":{\"total\":" + number(x.total[i]) + ",\"mean\":" + number(x.total[i] / double(x.seen[i])) +
                           ",\"min\":" + number(x.min[i]) + ",\"max\":" + number(x.max[i]) + "}"
                     : std::string(":null");
    }
    s += "}}";
  }
  s += "],\"dispatches\":[";
  for (size_t d = 0; d < j.dispatches.size(); ++d) {
    const auto& x = j.dispatches[d];
    s += d ? ",{\"window\":" : "{\"window\":";
    s += std::to_string(x.window) + ",\"position\":" + std::to_string(x.position) + ",\"kernel\":";
    readers::appendJsonString(s, x.kernel);
    s += ",\"values\":[";
    for (size_t i = 0; i < x.values.size(); ++i) s += (i ? "," : "") + value(x.values[i]);
    s += "]}";
  }
  s += "],\"not_collected\":[";
  for (size_t i = 0; i < j.notes.size(); ++i) {
    if (i) s += ",";
    readers::appendJsonString(s, j.notes[i]);
  }
  return s + "]}";
}

}  // namespace gtap::cli
