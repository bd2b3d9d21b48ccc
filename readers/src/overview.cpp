#include "gtap/readers/overview.h"

#include "top_k.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
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

// The overview of one capture, built as its device operations come (in file
// order), then finished with its API calls and memory operations.
class OverviewBuilder {
 public:
  OverviewBuilder(const Capture& c, const DeviceWork& work, size_t gapCount)
      : c_(c), work_(work), gapCount_(gapCount) {
    p_.startNs = INT64_MAX;
    p_.endNs = INT64_MIN;
  }

  void add(const DeviceOp& op) {
    // A dispatch's run on a CPU driver is the host's device work.
    if (op.recordedBy == schema::Api::IREE_HAL && op.operation != "host_execution") {
      if (op.kind == schema::DeviceOpKind::KERNEL) {
        ++p_.halDispatches;
        if (auto k = work_.objects.find(op.kernel); k != work_.objects.end()) halExecutables_.insert(k->second.parent);
      } else if (op.kind == schema::DeviceOpKind::FILL) {
        ++p_.halFills;
        p_.halFillBytes += op.bytes;
      } else if (op.kind == schema::DeviceOpKind::COPY) {
        ++p_.halCopies;
        p_.halCopyBytes += op.bytes;
      } else if (op.operation == "queue_execute") {
        ++p_.halSubmissions;
      } else if (op.operation == "semaphore_wait" || op.operation == "wait_semaphores") {
        ++p_.halWaits;
      }
      return;
    }
    PerDevice& d = devices_[op.device];
    switch (op.kind) {
      case schema::DeviceOpKind::KERNEL: ++d.o.kernels; break;
      case schema::DeviceOpKind::COPY: ++d.o.copies; d.o.copyBytes += op.bytes; break;
      case schema::DeviceOpKind::FILL: ++d.o.fills; break;
      case schema::DeviceOpKind::BARRIER: ++d.o.barriers; break;
      default: break;
    }
    if (op.timed) {
      // In blocks that never move: no copy as the list grows.
      if (d.timed.empty() || d.timed.back().size() == kBlock) d.timed.emplace_back().reserve(kBlock);
      d.timed.back().push_back({op.startNs, op.endNs, op.name});
      d.inStartOrder = d.inStartOrder && op.startNs >= d.lastStart;
      d.lastStart = op.startNs;
      span(op.startNs, op.endNs);
    } else {
      ++d.o.untimed;
      if (!op.note.empty() && op.note.data() != lastReason_.data()) {
        // Notes are interned: a run of one reason is inserted once.
        reasons_.emplace(op.note);
        lastReason_ = op.note;
      }
    }
  }

  ProcessOverview finish() {
    ProcessOverview& p = p_;
    p.label = c_.label();
    p.executable = c_.process().executable;
    p.threads = c_.threads().size();
    p.closedCleanly = c_.recovery().closedCleanly;
    p.recovery = c_.recovery().stopReason;
    p.eventsDropped = c_.trailer().eventsDropped;
    p.untimedReasons.assign(reasons_.begin(), reasons_.end());
    p.halUnrecordedWaits = halUnrecordedWaits(work_);
    p.halExecutables = halExecutables_.size();
    // Each device's busy time and longest idle gaps first; then, as the
    // calls come, what the host was doing during those gaps (the outermost
    // calls' time inside each, by function).
    for (auto& [device, per] : devices_) {
      DeviceOverview d = per.o;
      d.device = device;
      auto dev = work_.devices.find(device);
      d.name = dev != work_.devices.end() ? dev->second.name : "device " + std::to_string(device);
      auto& timed = per.timed;
      // In start order; equal starts in file order (most captures are in
      // that order already: one queue's work comes as it ran).
      // Otherwise each block is sorted where it lies and the blocks merged
      // as they are read.
      if (!per.inStartOrder)
        for (auto& block : timed)
          std::stable_sort(block.begin(), block.end(), [](const Interval& a, const Interval& b) { return a.startNs < b.startNs; });
      if (!timed.empty()) gaps(d, timed, !per.inStartOrder);
      timed = {};
      p.devices.push_back(std::move(d));
    }
    struct HostDuring {
      Gap* gap;
      std::map<uint32_t, int64_t> byFunction;
    };
    // Per device, its gaps in time order (they never overlap): a call looks
    // only at those it can overlap.
    std::vector<std::vector<HostDuring>> during;
    for (auto& d : p.devices) {
      if (d.largestGaps.empty()) continue;
      auto& mine = during.emplace_back();
      for (Gap& g : d.largestGaps) mine.push_back({&g, {}});
      std::sort(mine.begin(), mine.end(), [](const HostDuring& a, const HostDuring& b) { return a.gap->startNs < b.gap->startNs; });
    }
    std::unordered_map<uint32_t, schema::Api> apiOf;
    c_.forEachCallBatch([&](std::span<const ApiCall> calls) {
      for (const ApiCall& call : calls) {
        ++p.apiCalls;
        if (!call.finished) {
          ++p.unfinishedCalls;
          span(call.beginNs, call.beginNs);
          continue;
        }
        auto [api, added] = apiOf.try_emplace(call.function, schema::Api::UNKNOWN);
        if (added)
          if (auto f = c_.functions().find(call.function); f != c_.functions().end()) api->second = f->second.api;
        if (isErrorResult(api->second, call.result)) ++p.failedCalls;
        span(call.beginNs, call.endNs);
        if (call.depth == 0) {
          p.apiNs += call.endNs - call.beginNs;
          for (auto& device : during) {
            auto h = std::partition_point(device.begin(), device.end(),
                                          [&](const HostDuring& x) { return x.gap->endNs <= call.beginNs; });
            for (; h != device.end() && h->gap->startNs < call.endNs; ++h) {
              int64_t overlap = std::min(call.endNs, h->gap->endNs) - std::max(call.beginNs, h->gap->startNs);
              if (overlap > 0) h->byFunction[call.function] += overlap;
            }
          }
        }
      }
    });
    for (auto& device : during) {
      for (HostDuring& h : device) {
        auto& calls = h.gap->hostCalls;
        for (auto& [f, ns] : h.byFunction) calls.emplace_back(c_.functionName(f), ns);
        std::sort(calls.begin(), calls.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
      }
    }
    for (const MemoryOp& m : work_.memory) {
      span(m.hostNs, m.hostNs);
      if (!m.isFree) {
        ++p.allocations;
        p.allocatedBytes += m.size;
      }
    }
    if (p.startNs > p.endNs) p.startNs = p.endNs = c_.process().startHostNs;
    return std::move(p_);
  }

 private:
  struct Interval {
    int64_t startNs, endNs;
    std::string_view name;
  };
  static constexpr size_t kBlock = 1 << 16;
  struct PerDevice {
    DeviceOverview o;
    std::vector<std::vector<Interval>> timed;  // in file order
    bool inStartOrder = true;  // every start at or after the one before
    int64_t lastStart = INT64_MIN;
  };

  void span(int64_t a, int64_t b) {
    p_.startNs = std::min(p_.startNs, a);
    p_.endNs = std::max(p_.endNs, b);
  }

  // Calls f on each interval of `blocks` in start order (equal starts in
  // block order): the blocks in turn when they follow one another, else
  // merged (each block in start order).
  template <class F>
  static void inStartOrder(const std::vector<std::vector<Interval>>& blocks, bool merge, F&& f) {
    if (!merge) {
      for (const auto& block : blocks)
        for (const Interval& each : block) f(each);
      return;
    }
    struct Head {
      int64_t startNs;
      size_t block, at;
    };
    auto after = [](const Head& a, const Head& b) { return a.startNs != b.startNs ? a.startNs > b.startNs : a.block > b.block; };
    std::vector<Head> heads;
    for (size_t b = 0; b < blocks.size(); ++b)
      if (!blocks[b].empty()) heads.push_back({blocks[b][0].startNs, b, 0});
    std::make_heap(heads.begin(), heads.end(), after);
    while (!heads.empty()) {
      std::pop_heap(heads.begin(), heads.end(), after);
      Head& h = heads.back();
      f(blocks[h.block][h.at]);
      if (++h.at < blocks[h.block].size()) {
        h.startNs = blocks[h.block][h.at].startNs;
        std::push_heap(heads.begin(), heads.end(), after);
      } else {
        heads.pop_back();
      }
    }
  }

  // `timed`: blocks of intervals, in start order or (merge) each sorted.
  void gaps(DeviceOverview& d, const std::vector<std::vector<Interval>>& timed, bool merge) {
    // The first in start order: the first block's first, or (merging) the
    // earliest block front, the first block of those that tie.
    const Interval* earliest = &timed.front().front();
    if (merge)
      for (const auto& block : timed)
        if (!block.empty() && block.front().startNs < earliest->startNs) earliest = &block.front();
    d.firstNs = earliest->startNs;
    // Union of intervals: busy time counts overlapping work once; a stretch
    // covered by nothing is an idle gap.
    int64_t coverEnd = earliest->endNs;
    const Interval* lastEnding = earliest;
    d.busyNs = earliest->endNs - earliest->startNs;
    // The longest idle stretches (longest first; equal lengths in time
    // order: gaps never share a start), kept as the stretches come, so
    // memory does not grow with the number of gaps.
    struct Idle {
      int64_t startNs, endNs;
      const Interval* before;
      const Interval* after;
    };
    auto longer = [](const Idle& a, const Idle& b) {
      int64_t la = a.endNs - a.startNs, lb = b.endNs - b.startNs;
      return la != lb ? la > lb : a.startNs < b.startNs;
    };
    TopK<Idle, decltype(longer)> longest(gapCount_, longer);
    inStartOrder(timed, merge, [&](const Interval& each) {
      const Interval* op = &each;
      if (op == earliest) return;
      if (op->startNs > coverEnd) {
        if (gapCount_) longest.offer({coverEnd, op->startNs, lastEnding, op});
        d.busyNs += op->endNs - op->startNs;
      } else if (op->endNs > coverEnd) {
        d.busyNs += op->endNs - coverEnd;
      }
      if (op->endNs > coverEnd) {
        coverEnd = op->endNs;
        lastEnding = op;
      }
    });
    d.lastNs = coverEnd;
    std::vector<Idle> idle = longest.take();
    size_t kept = idle.size();
    std::vector<Gap> gaps;
    gaps.reserve(kept);
    for (size_t i = 0; i < kept; ++i)
      gaps.push_back({idle[i].startNs, idle[i].endNs, std::string(idle[i].before->name),
                      std::string(idle[i].after->name), {}});
    d.largestGaps = std::move(gaps);
  }

  const Capture& c_;
  const DeviceWork& work_;
  size_t gapCount_;
  ProcessOverview p_;
  std::map<uint32_t, PerDevice> devices_;
  std::set<std::string> reasons_;
  std::string_view lastReason_;
  std::set<uint64_t> halExecutables_;
};

ProcessOverview overviewOf(const LoadedCapture& lc, size_t gapCount) {
  OverviewBuilder b(*lc.capture, lc.work, gapCount);
  for (const DeviceOp& op : lc.work.ops) b.add(op);
  return b.finish();
}

ProcessOverview overviewStreamed(const Capture& capture, DeviceWork& work,
                                 const std::function<void(const DeviceOp&)>& also, size_t gapCount,
                                 const std::function<void()>& restart) {
  auto b = std::make_unique<OverviewBuilder>(capture, work, gapCount);
  streamDeviceWorkJoined(
      capture, work,
      [&](std::span<const DeviceOp> ops) {
        for (const DeviceOp& op : ops) {
          b->add(op);
          if (also) also(op);
        }
      },
      [&] {
        b = std::make_unique<OverviewBuilder>(capture, work, gapCount);
        if (restart) restart();
      });
  return b->finish();
}

}  // namespace gtap::readers
