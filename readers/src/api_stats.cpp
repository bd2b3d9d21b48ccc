#include "gtap/readers/api_stats.h"

#include <algorithm>
#include <map>

#include "gtap/readers/parallel.h"
#include "gtap/readers/stats.h"

namespace gtap::readers {

namespace {

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

}  // namespace

// What one capture adds.
struct ApiSummaryBuilder::Part {
  std::map<std::string, Acc> byName;
  uint64_t events = 0;
};

struct ApiSummaryBuilder::State {
  std::map<std::string, Acc> byName;
  uint64_t events = 0;
};

ApiSummaryBuilder::ApiSummaryBuilder() : state_(std::make_unique<State>()) {}
ApiSummaryBuilder::~ApiSummaryBuilder() = default;

std::shared_ptr<ApiSummaryBuilder::Part> ApiSummaryBuilder::read(const Capture& capture) {
  auto part = std::make_shared<Part>();
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
    if (*slot) return **slot;
    Acc& acc = part->byName[capture.functionName(id)];
    if (auto it = capture.functions().find(id); it != capture.functions().end()) {
      acc.api = apiName(it->second.api);
      acc.apiKind = it->second.api;
    }
    *slot = &acc;
    return acc;
  };
  part->events += capture.forEachCallBatch([&](std::span<const ApiCall> calls) {
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
  return part;
}

void ApiSummaryBuilder::merge(std::shared_ptr<Part> part) {
  state_->events += part->events;
  for (auto& [name, acc] : part->byName) state_->byName[name].merge(acc);
}

ApiSummary ApiSummaryBuilder::finish() {
  ApiSummary summary;
  summary.events = state_->events;
  for (auto& [name, acc] : state_->byName) {
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

ApiSummary summarizeApi(const std::vector<const Capture*>& captures) {
  // Each file on its own (gtap -j: several at once), then merged in the
  // order given: the same whatever the number of threads.
  std::vector<std::shared_ptr<ApiSummaryBuilder::Part>> parts(captures.size());
  ApiSummaryBuilder builder;
  forEachInParallel(
      captures.size(), [&](size_t index) { parts[index] = ApiSummaryBuilder::read(*captures[index]); },
      [&](size_t index) {
        builder.merge(std::move(parts[index]));
        captures[index]->reader().releasePages();
      });
  return builder.finish();
}

}  // namespace gtap::readers
