#include "gtap/readers/memory_events.h"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace gtap::readers {

std::vector<MemoryEvent> memoryEvents(const Capture& capture, const DeviceWork& work) {
  std::vector<MemoryEvent> events;
  events.reserve(work.memory.size());
  for (const MemoryOp& m : work.memory) events.push_back({m, {}, 0, ~uint64_t{0}});
  std::stable_sort(events.begin(), events.end(),
                   [](const MemoryEvent& a, const MemoryEvent& b) { return a.op.hostNs < b.op.hostNs; });
  if (events.empty()) return events;
  // Each thread's events, in time order, by their place in `events`.
  std::unordered_map<uint32_t, std::vector<size_t>> byThread;
  for (size_t i = 0; i < events.size(); ++i) byThread[events[i].op.thread].push_back(i);
  // The calls come thread by thread in any order; the innermost around an
  // event (the latest to begin) wins.
  std::unordered_map<uint32_t, std::string> names;
  capture.forEachCallBatch([&](std::span<const ApiCall> calls) {
    for (const ApiCall& call : calls) {
      if (!call.finished) continue;
      auto t = byThread.find(call.thread);
      if (t == byThread.end()) continue;
      const auto& mine = t->second;
      auto first = std::lower_bound(mine.begin(), mine.end(), call.beginNs,
                                    [&](size_t i, int64_t ns) { return events[i].op.hostNs < ns; });
      for (auto it = first; it != mine.end() && events[*it].op.hostNs <= call.endNs; ++it) {
        MemoryEvent& e = events[*it];
        if (e.callIndex != ~uint64_t{0} && e.callBeginNs > call.beginNs) continue;
        auto [name, added] = names.try_emplace(call.function);
        if (added) name->second = capture.functionName(call.function);
        e.function = name->second;
        e.callBeginNs = call.beginNs;
        e.callIndex = call.beginIndex;
      }
    }
  });
  return events;
}

std::vector<MemoryEvent> liveAt(const std::vector<MemoryEvent>& events, int64_t atNs) {
  // By (device, address): the allocation that holds it now.
  std::map<std::pair<uint32_t, uint64_t>, const MemoryEvent*> live;
  for (const MemoryEvent& e : events) {
    if (e.op.hostNs > atNs) break;
    auto key = std::make_pair(e.op.device, e.op.address);
    if (e.op.isFree) {
      // A free names its address; on some runtimes it does not name the device.
      if (!live.erase(key))
        for (auto it = live.begin(); it != live.end(); ++it)
          if (it->first.second == e.op.address) {
            live.erase(it);
            break;
          }
    } else {
      live[key] = &e;
    }
  }
  std::vector<MemoryEvent> out;
  for (const auto& [key, e] : live) out.push_back(*e);
  std::sort(out.begin(), out.end(), [](const MemoryEvent& a, const MemoryEvent& b) {
    return a.op.hostNs != b.op.hostNs ? a.op.hostNs < b.op.hostNs : a.op.address < b.op.address;
  });
  return out;
}

}  // namespace gtap::readers
