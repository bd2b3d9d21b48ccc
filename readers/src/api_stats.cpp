#include "gtap/readers/api_stats.h"

#include <algorithm>
#include <map>

namespace gtap::readers {

namespace {
// Nearest-rank percentile of sorted values.
int64_t percentile(const std::vector<int64_t>& sorted, double p) {
  if (sorted.empty()) return 0;
  size_t rank = static_cast<size_t>(p / 100.0 * static_cast<double>(sorted.size()) + 0.999999);
  rank = std::clamp<size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}
}  // namespace

ApiSummary summarizeApi(const std::vector<const Capture*>& captures) {
  struct Acc {
    std::string api;
    std::vector<int64_t> durations;
    uint64_t unfinished = 0;
    uint64_t failed = 0;
  };
  std::map<std::string, Acc> byName;
  ApiSummary summary;
  for (const Capture* capture : captures) {
    // Function ids are per file; names join files.
    std::map<uint32_t, Acc*> byId;
    auto accFor = [&](uint32_t id) -> Acc& {
      auto it = byId.find(id);
      if (it != byId.end()) return *it->second;
      Acc& acc = byName[capture->functionName(id)];
      auto f = capture->functions().find(id);
      if (f != capture->functions().end()) acc.api = apiName(f->second.api);
      byId[id] = &acc;
      return acc;
    };
    summary.events += capture->forEachCall([&](const ApiCall& call) {
      Acc& acc = accFor(call.function);
      if (!call.finished) {
        ++acc.unfinished;
        return;
      }
      acc.durations.push_back(call.endNs - call.beginNs);
      if (call.result != 0) ++acc.failed;
    });
  }
  for (auto& [name, acc] : byName) {
    FunctionStats s;
    s.name = name;
    s.api = acc.api;
    s.count = acc.durations.size();
    s.unfinished = acc.unfinished;
    s.failed = acc.failed;
    if (!acc.durations.empty()) {
      std::sort(acc.durations.begin(), acc.durations.end());
      for (int64_t d : acc.durations) s.totalNs += d;
      s.minNs = acc.durations.front();
      s.maxNs = acc.durations.back();
      s.meanNs = static_cast<double>(s.totalNs) / static_cast<double>(s.count);
      s.p50Ns = percentile(acc.durations, 50);
      s.p99Ns = percentile(acc.durations, 99);
    }
    summary.calls += s.count + s.unfinished;
    summary.functions.push_back(std::move(s));
  }
  std::sort(summary.functions.begin(), summary.functions.end(), [](const auto& a, const auto& b) {
    return a.totalNs != b.totalNs ? a.totalNs > b.totalNs : a.name < b.name;
  });
  return summary;
}

}  // namespace gtap::readers
