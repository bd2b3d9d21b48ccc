#include "gtap/readers/overview.h"

#include <algorithm>
#include <map>
#include <set>
#include <span>
#include <string_view>
#include <unordered_map>

namespace gtap::readers {

std::vector<std::string> halUnrecordedWaits(const DeviceWork& work) {
  std::set<std::string> images;
  for (const auto& [id, o] : work.objects) {
    if (o.kind != schema::ObjectKind::UNKNOWN || o.name != "iree_async_semaphore_multi_wait") continue;
    std::string image = "?";
    for (const auto& [key, value] : o.properties)
      if (key == "image") image = value;
    images.insert(image);
  }
  return {images.begin(), images.end()};
}

std::string halUnrecordedWaitsText(const std::vector<std::string>& images, uint64_t recorded) {
  std::string text =
      "the IREE in ";
  for (size_t i = 0; i < images.size(); ++i) text += (i ? ", " : "") + images[i];
  text += " waits on semaphore lists (iree_hal_semaphore_list_wait, iree_hal_fence_wait, "
          "iree_hal_device_wait_semaphores, the VM's fence waits) through iree_async_semaphore_multi_wait, "
          "which calls no HAL vtable slot; gtap does not see those waits";
  if (recorded == UINT64_MAX) return text;
  text += recorded ? ", and the " + std::to_string(recorded) +
                         " semaphore waits counted are only those through a wait slot"
                   : " (0 semaphore waits does not mean the program never waited)";
  return text;
}

ProcessOverview overviewOf(const LoadedCapture& lc, size_t gapCount) {
  const Capture& c = *lc.capture;
  ProcessOverview p;
  p.label = c.label();
  p.executable = c.process().executable;
  p.threads = c.threads().size();
  p.closedCleanly = c.recovery().closedCleanly;
  p.recovery = c.recovery().stopReason;
  p.eventsDropped = c.trailer().eventsDropped;
  p.startNs = INT64_MAX;
  p.endNs = INT64_MIN;
  auto span = [&](int64_t a, int64_t b) {
    p.startNs = std::min(p.startNs, a);
    p.endNs = std::max(p.endNs, b);
  };
  struct Call {
    int64_t begin, end;
    uint32_t function;
  };
  // The outermost calls are kept only for what the host did during a
  // device's idle gaps: when gaps are asked for and some device operation
  // was timed.
  bool keepCalls = gapCount > 0 && std::any_of(lc.work.ops.begin(), lc.work.ops.end(), [](const DeviceOp& op) {
    return op.timed && !(op.recordedBy == schema::Api::IREE_HAL && op.operation != "host_execution");
  });
  std::vector<Call> outermost;
  std::unordered_map<uint32_t, schema::Api> apiOf;
  c.forEachCallBatch([&](std::span<const ApiCall> calls) {
    for (const ApiCall& call : calls) {
      ++p.apiCalls;
      if (!call.finished) {
        ++p.unfinishedCalls;
        span(call.beginNs, call.beginNs);
        continue;
      }
      auto [api, added] = apiOf.try_emplace(call.function, schema::Api::UNKNOWN);
      if (added)
        if (auto f = c.functions().find(call.function); f != c.functions().end()) api->second = f->second.api;
      if (isErrorResult(api->second, call.result)) ++p.failedCalls;
      span(call.beginNs, call.endNs);
      if (call.depth == 0) {
        p.apiNs += call.endNs - call.beginNs;
        if (keepCalls) outermost.push_back({call.beginNs, call.endNs, call.function});
      }
    }
  });
  auto byBegin = [](const Call& a, const Call& b) { return a.begin < b.begin; };
  if (!std::is_sorted(outermost.begin(), outermost.end(), byBegin))
    std::sort(outermost.begin(), outermost.end(), byBegin);

  std::map<uint32_t, std::vector<const DeviceOp*>> byDevice;
  std::set<std::string> reasons;
  std::string_view lastReason;
  std::set<uint64_t> halExecutables;
  for (const DeviceOp& op : lc.work.ops) {
    // A dispatch's run on a CPU driver is the host's device work.
    if (op.recordedBy == schema::Api::IREE_HAL && op.operation != "host_execution") {
      if (op.kind == schema::DeviceOpKind::KERNEL) {
        ++p.halDispatches;
        if (auto k = lc.work.objects.find(op.kernel); k != lc.work.objects.end())
          halExecutables.insert(k->second.parent);
      } else if (op.kind == schema::DeviceOpKind::FILL) {
        ++p.halFills;
        p.halFillBytes += op.bytes;
      } else if (op.kind == schema::DeviceOpKind::COPY) {
        ++p.halCopies;
        p.halCopyBytes += op.bytes;
      } else if (op.operation == "queue_execute") {
        ++p.halSubmissions;
      } else if (op.operation == "semaphore_wait" || op.operation == "wait_semaphores") {
        ++p.halWaits;
      }
      continue;
    }
    auto& list = byDevice[op.device];
    list.push_back(&op);
    if (op.timed) span(op.startNs, op.endNs);
    else if (!op.note.empty() && op.note.data() != lastReason.data()) {
      // Notes are interned: a run of one reason is inserted once.
      reasons.emplace(op.note);
      lastReason = op.note;
    }
  }
  p.untimedReasons.assign(reasons.begin(), reasons.end());
  p.halUnrecordedWaits = halUnrecordedWaits(lc.work);
  p.halExecutables = halExecutables.size();
  for (auto& [device, ops] : byDevice) {
    DeviceOverview d;
    d.device = device;
    auto dev = lc.work.devices.find(device);
    d.name = dev != lc.work.devices.end() ? dev->second.name : "device " + std::to_string(device);
    std::vector<const DeviceOp*> timed;
    for (const DeviceOp* op : ops) {
      switch (op->kind) {
        case schema::DeviceOpKind::KERNEL: ++d.kernels; break;
        case schema::DeviceOpKind::COPY: ++d.copies; d.copyBytes += op->bytes; break;
        case schema::DeviceOpKind::FILL: ++d.fills; break;
        case schema::DeviceOpKind::BARRIER: ++d.barriers; break;
        default: break;
      }
      if (op->timed) timed.push_back(op); else ++d.untimed;
    }
    std::sort(timed.begin(), timed.end(), [](const DeviceOp* a, const DeviceOp* b) { return a->startNs < b->startNs; });
    if (!timed.empty()) {
      d.firstNs = timed.front()->startNs;
      // Union of intervals: busy time counts overlapping work once; a stretch
      // covered by nothing is an idle gap.
      int64_t coverEnd = timed.front()->endNs;
      const DeviceOp* lastEnding = timed.front();
      d.busyNs = timed.front()->durationNs();
      // Every idle stretch as four words; names only for the largest kept.
      struct Idle {
        int64_t startNs, endNs;
        const DeviceOp* before;
        const DeviceOp* after;
      };
      std::vector<Idle> idle;
      for (size_t i = 1; i < timed.size(); ++i) {
        const DeviceOp* op = timed[i];
        if (op->startNs > coverEnd) {
          idle.push_back({coverEnd, op->startNs, lastEnding, op});
          d.busyNs += op->durationNs();
        } else if (op->endNs > coverEnd) {
          d.busyNs += op->endNs - coverEnd;
        }
        if (op->endNs > coverEnd) {
          coverEnd = op->endNs;
          lastEnding = op;
        }
      }
      d.lastNs = coverEnd;
      // Longest first; equal lengths in time order (what a stable sort of all gaps gave).
      auto longer = [](const Idle& a, const Idle& b) {
        int64_t la = a.endNs - a.startNs, lb = b.endNs - b.startNs;
        return la != lb ? la > lb : a.startNs < b.startNs;
      };
      size_t kept = std::min(gapCount, idle.size());
      std::partial_sort(idle.begin(), idle.begin() + static_cast<std::ptrdiff_t>(kept), idle.end(), longer);
      std::vector<Gap> gaps;
      gaps.reserve(kept);
      for (size_t i = 0; i < kept; ++i)
        gaps.push_back({idle[i].startNs, idle[i].endNs, std::string(idle[i].before->name),
                        std::string(idle[i].after->name), {}});
      // What the host was doing meanwhile.
      for (Gap& g : gaps) {
        std::map<uint32_t, int64_t> byFunction;
        for (const Call& call : outermost) {
          if (call.begin >= g.endNs) break;
          int64_t overlap = std::min(call.end, g.endNs) - std::max(call.begin, g.startNs);
          if (overlap > 0) byFunction[call.function] += overlap;
        }
        for (auto& [f, ns] : byFunction) g.hostCalls.emplace_back(c.functionName(f), ns);
        std::sort(g.hostCalls.begin(), g.hostCalls.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
      }
      d.largestGaps = std::move(gaps);
    }
    p.devices.push_back(std::move(d));
  }
  for (const MemoryOp& m : lc.work.memory) {
    span(m.hostNs, m.hostNs);
    if (!m.isFree) {
      ++p.allocations;
      p.allocatedBytes += m.size;
    }
  }
  if (p.startNs > p.endNs) p.startNs = p.endNs = c.process().startHostNs;
  return p;
}

}  // namespace gtap::readers
