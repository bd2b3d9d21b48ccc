#include "gtap/readers/queue_view.h"

#include <algorithm>
#include <map>

#include "gtap/readers/report_filter.h"

namespace gtap::readers {

namespace {

// A command an IREE HAL program recorded into a command buffer: it runs only
// when a queue_execute submits the buffer.
bool recordedIntoCommandBuffer(const DeviceOp& op) {
  return op.recordedBy == schema::Api::IREE_HAL && op.list && op.operation != "queue_execute";
}

// Operations of a Level Zero regular command list: an execute runs them all,
// so those submitted at one time to one queue are one submission.
bool fromRegularList(const DeviceOp& op) {
  return op.recordedBy != schema::Api::IREE_HAL && op.list && op.list != op.queue;
}

std::string queueKind(const DeviceWork& work, uint64_t queue, const DeviceOp& first) {
  auto it = work.objects.find(queue);
  if (it != work.objects.end() && it->second.kind == schema::ObjectKind::IMMEDIATE_COMMAND_LIST)
    return "ze immediate list";
  switch (first.recordedBy) {
    case schema::Api::IREE_HAL: return "hal queue";
    case schema::Api::HSA: return "hsa queue";
    case schema::Api::LEVEL_ZERO: return "ze queue";
    default: return "queue";
  }
}

struct Span {
  uint32_t operations = 0, timed = 0;
  int64_t start = 0, end = 0;
  void add(const DeviceOp& op) {
    ++operations;
    if (!op.timed) return;
    start = timed ? std::min(start, op.startNs) : op.startNs;
    end = timed ? std::max(end, op.endNs) : op.endNs;
    ++timed;
  }
};

}  // namespace

std::vector<QueueView> queueViews(const Capture& capture, const DeviceWork& work) {
  // What each IREE HAL queue_execute became on the device (by its index).
  const ReportFilter* filter = capture.filter();
  auto keeps = [&](const DeviceOp& op) { return !filter || filter->keepsOp(capture, op); };
  std::map<uint32_t, Span> executed;
  for (const DeviceOp& op : work.ops)
    if (op.hal && keeps(op)) executed[op.hal->submission].add(op);
  std::map<uint64_t, std::vector<uint32_t>> byQueue;
  for (uint32_t i = 0; i < work.ops.size(); ++i) {
    const DeviceOp& op = work.ops[i];
    if (!op.queue || recordedIntoCommandBuffer(op)) continue;
    // A queue_execute is kept when the filter keeps work it became.
    if (keeps(op) || (isHalSubmission(op) && executed.count(i))) byQueue[op.queue].push_back(i);
  }
  std::vector<QueueView> views;
  for (auto& [queue, indices] : byQueue) {
    std::stable_sort(indices.begin(), indices.end(),
                     [&](uint32_t a, uint32_t b) { return work.ops[a].submitNs < work.ops[b].submitNs; });
    QueueView view;
    view.capture = &capture;
    view.id = queue;
    view.name = work.queueName(queue);
    view.kind = queueKind(work, queue, work.ops[indices.front()]);
    for (size_t at = 0; at < indices.size();) {
      const DeviceOp& first = work.ops[indices[at]];
      size_t end = at + 1;
      if (fromRegularList(first))
        while (end < indices.size() && fromRegularList(work.ops[indices[end]]) &&
               work.ops[indices[end]].submitNs == first.submitNs)
          ++end;
      QueueSubmission s;
      s.submitNs = first.submitNs;
      s.thread = first.thread;
      s.what = fromRegularList(first) ? "execute"
               : !first.operation.empty() ? std::string(first.operation)
                                          : std::string(opKindText(first.kind));
      s.waits.assign(first.waits().begin(), first.waits().end());
      s.signals.assign(first.signals().begin(), first.signals().end());
      Span span;
      for (size_t k = at; k < end; ++k) {
        const DeviceOp& op = work.ops[indices[k]];
        if (op.list && std::find(s.lists.begin(), s.lists.end(), op.list) == s.lists.end()) s.lists.push_back(op.list);
        if (isHalSubmission(op)) {
          if (auto it = executed.find(indices[k]); it != executed.end()) span = it->second;
          continue;
        }
        if (op.recordedBy == schema::Api::IREE_HAL) continue;  // a HAL queue operation: no device times
        s.names.emplace_back(op.name);
        span.add(op);
      }
      s.operations = span.operations;
      s.timed = span.timed;
      if (span.timed) {
        s.hasSpan = true;
        s.startNs = span.start;
        s.endNs = span.end;
      }
      view.submissions.push_back(std::move(s));
      at = end;
    }
    // Gaps, and the union of the spans, in the order the device ran them.
    bool any = false;
    int64_t latestEnd = 0, busyFrom = 0, busyTo = 0;
    for (auto& s : view.submissions) {
      if (!s.hasSpan) continue;
      if (any) {
        s.hasGap = true;
        s.gapNs = s.startNs - latestEnd;
        if (s.gapNs > 0) view.gapNs += s.gapNs;
      }
      latestEnd = any ? std::max(latestEnd, s.endNs) : s.endNs;
      any = true;
    }
    std::vector<std::pair<int64_t, int64_t>> spans;
    for (const auto& s : view.submissions)
      if (s.hasSpan) spans.emplace_back(s.startNs, s.endNs);
    std::sort(spans.begin(), spans.end());
    for (size_t k = 0; k < spans.size(); ++k) {
      if (k == 0 || spans[k].first > busyTo) {
        view.busyNs += busyTo - busyFrom;
        busyFrom = spans[k].first;
        busyTo = spans[k].second;
      } else {
        busyTo = std::max(busyTo, spans[k].second);
      }
    }
    view.busyNs += busyTo - busyFrom;
    if (any) view.spanNs = latestEnd - spans.front().first;
    views.push_back(std::move(view));
  }
  return views;
}

}  // namespace gtap::readers
