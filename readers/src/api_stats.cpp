#include "gtap/readers/api_stats.h"

#include <algorithm>
#include <map>

#include "gtap/readers/parallel.h"
#include "gtap/readers/stats.h"

namespace gtap::readers {

ApiSummary summarizeApi(const std::vector<const Capture*>& captures) {
  struct Acc {
    std::string api;
    schema::Api apiKind = schema::Api::UNKNOWN;
    DurationHistogram durations;
    uint64_t unfinished = 0;
    uint64_t failed = 0;
    void merge(const Acc& other) {
      // A later file that names the function's API has the last word.
      if (!other.api.empty()) {
        api = other.api;
        apiKind = other.apiKind;
      }
      durations.merge(other.durations);
      unfinished += other.unfinished;
      failed += other.failed;
    }
  };
  // Each file on its own (gtap -j: several at once), then merged in the
  // order given: the same whatever the number of threads.
  struct Part {
    std::map<std::string, Acc> byName;
    uint64_t events = 0;
  };
  std::vector<Part> parts(captures.size());
  std::map<std::string, Acc> byName;
  ApiSummary summary;
  forEachInParallel(captures.size(), [&](size_t index) {
    const Capture* capture = captures[index];
    Part& part = parts[index];
    // Function ids are per file (small, dense); names join files.
    // A damaged file may hold any id: those past the id ranges go to a map.
    constexpr uint32_t kDenseIds = 1u << 16;
    std::vector<Acc*> byId;
    std::map<uint32_t, Acc*> sparse;
    auto accFor = [&](uint32_t id) -> Acc& {
      Acc** slot = nullptr;
      if (id < kDenseIds) {
        if (id >= byId.size()) byId.resize(size_t{id} + 1, nullptr);
        slot = &byId[id];
      } else {
        slot = &sparse[id];
      }
      if (*slot != nullptr) return **slot;
      Acc& acc = part.byName[capture->functionName(id)];
      auto f = capture->functions().find(id);
      if (f != capture->functions().end()) {
        acc.api = apiName(f->second.api);
        acc.apiKind = f->second.api;
      }
      *slot = &acc;
      return acc;
    };
    part.events += capture->forEachCallBatch([&](std::span<const ApiCall> calls) {
      for (const ApiCall& call : calls) {
        Acc& acc = accFor(call.function);
        if (!call.finished) {
          ++acc.unfinished;
          continue;
        }
        acc.durations.add(call.endNs - call.beginNs);
        if (isErrorResult(acc.apiKind, call.result)) ++acc.failed;
      }
    });
  }, [&](size_t index) {
    Part& part = parts[index];
    summary.events += part.events;
    for (auto& [name, acc] : part.byName) byName[name].merge(acc);
    part = Part();  // what it held is merged
    captures[index]->reader().releasePages();
  });
  for (auto& [name, acc] : byName) {
    FunctionStats s;
    s.name = name;
    s.api = acc.api;
    s.count = acc.durations.count();
    s.unfinished = acc.unfinished;
    s.failed = acc.failed;
    Distribution d = acc.durations.distribution();
    s.totalNs = d.total;
    s.minNs = d.min;
    s.maxNs = d.max;
    s.meanNs = d.mean;
    s.p50Ns = d.p50;
    s.p99Ns = d.p99;
    summary.calls += s.count + s.unfinished;
    summary.functions.push_back(std::move(s));
  }
  std::sort(summary.functions.begin(), summary.functions.end(), [](const auto& a, const auto& b) {
    return a.totalNs != b.totalNs ? a.totalNs > b.totalNs : a.name < b.name;
  });
  return summary;
}

}  // namespace gtap::readers
