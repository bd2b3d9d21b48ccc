#include "gtap/readers/command_view.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "gtap/readers/report_filter.h"

namespace gtap::readers {

namespace {

ListCommand commandOf(const DeviceOp& op) {
  ListCommand c;
  c.kind = op.recordedBy == schema::Api::IREE_HAL && !op.operation.empty() ? std::string(op.operation)
                                                                           : std::string(opKindText(op.kind));
  c.name = std::string(op.name);
  c.groupCount = op.groupCount;
  c.groupSize = op.groupSize;
  c.bytes = op.bytes;
  c.direction = op.direction;
  c.appendNs = op.appendNs;
  return c;
}

CommandTime timeOf(const DeviceOp& op) { return {true, op.timed, op.startNs, op.endNs}; }

// A Level Zero list: each distinct submit time is an execution (an immediate
// list's commands each run once, as appended: one execution); a command is
// the append that made it (its thread and call).
void fillLevelZero(const DeviceWork& work, const std::vector<uint32_t>& ops, bool immediate, CommandListView& view) {
  std::map<int64_t, std::vector<uint32_t>> byExecution;
  for (uint32_t i : ops) byExecution[immediate ? 0 : work.ops[i].submitNs].push_back(i);
  using Key = std::tuple<uint32_t, uint64_t, int64_t>;
  std::map<Key, size_t> commandOfAppend;
  size_t execution = 0;
  for (auto& [submitNs, indices] : byExecution) {
    std::stable_sort(indices.begin(), indices.end(),
                     [&](uint32_t a, uint32_t b) { return work.ops[a].appendNs < work.ops[b].appendNs; });
    view.executions.push_back(immediate ? work.ops[indices.front()].submitNs : submitNs);
    for (uint32_t i : indices) {
      const DeviceOp& op = work.ops[i];
      Key key{op.thread, op.appendIndex, op.appendNs};
      auto [it, added] = commandOfAppend.try_emplace(key, view.commands.size());
      if (added) view.commands.push_back(commandOf(op));
      ListCommand& c = view.commands[it->second];
      c.times.resize(execution + 1);
      c.times[execution] = timeOf(op);
    }
    ++execution;
  }
}

// An IREE HAL command buffer: its recorded commands (not its begin and end),
// each queue_execute of it an execution; a dispatch's times are those of the
// device dispatch it was joined to.
void fillHal(const DeviceWork& work, const std::vector<uint32_t>& recorded, const std::vector<uint32_t>& submissions,
             CommandListView& view) {
  std::map<uint32_t, size_t> commandAt, executionAt;
  for (uint32_t i : recorded) {
    const DeviceOp& op = work.ops[i];
    if (op.operation == "begin" || op.operation == "end") continue;
    commandAt[i] = view.commands.size();
    view.commands.push_back(commandOf(op));
  }
  for (uint32_t i : submissions) {
    executionAt[i] = view.executions.size();
    view.executions.push_back(work.ops[i].submitNs);
  }
  // Every execution runs every command recorded; only dispatches get times.
  for (auto& c : view.commands) c.times.assign(view.executions.size(), CommandTime{true, false, 0, 0});
  for (const DeviceOp& op : work.ops) {
    if (!op.hal || op.hal->list != view.id) continue;
    auto c = commandAt.find(op.hal->dispatch);
    auto e = executionAt.find(op.hal->submission);
    if (c == commandAt.end() || e == executionAt.end()) continue;
    view.commands[c->second].times[e->second] = timeOf(op);
  }
}

}  // namespace

std::vector<CommandListView> commandListViews(const Capture& capture, const DeviceWork& work) {
  // The operations of each list, and an IREE HAL command buffer's submissions.
  const ReportFilter* filter = capture.filter();
  std::map<uint64_t, std::vector<uint32_t>> appended, halRecorded, halSubmitted;
  for (uint32_t i = 0; i < work.ops.size(); ++i) {
    const DeviceOp& op = work.ops[i];
    if (!op.list) continue;
    if (filter && !isHalSubmission(op) && !filter->keepsOp(capture, op)) continue;
    if (op.recordedBy != schema::Api::IREE_HAL) appended[op.list].push_back(i);
    else if (isHalSubmission(op)) halSubmitted[op.list].push_back(i);
    else halRecorded[op.list].push_back(i);
  }
  std::vector<CommandListView> views;
  for (const auto& [id, object] : work.objects) {
    if (object.kind != schema::ObjectKind::COMMAND_LIST && object.kind != schema::ObjectKind::IMMEDIATE_COMMAND_LIST)
      continue;
    CommandListView view;
    view.capture = &capture;
    view.id = id;
    view.name = object.name;
    if (auto hal = halRecorded.find(id); hal != halRecorded.end()) {
      view.kind = "hal command buffer";
      auto s = halSubmitted.find(id);
      fillHal(work, hal->second, s == halSubmitted.end() ? std::vector<uint32_t>{} : s->second, view);
    } else if (auto ops = appended.find(id); ops != appended.end()) {
      bool immediate = object.kind == schema::ObjectKind::IMMEDIATE_COMMAND_LIST;
      view.kind = immediate ? "ze immediate list" : "ze command list";
      fillLevelZero(work, ops->second, immediate, view);
    }
    if (view.commands.empty()) continue;
    for (const auto& c : view.commands)
      for (const auto& t : c.times)
        if (t.timed) view.deviceNs += t.endNs - t.startNs;
    views.push_back(std::move(view));
  }
  return views;
}

}  // namespace gtap::readers
