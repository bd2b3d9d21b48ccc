// The tracker's state, shared by the files that hold its parts (tracker.cpp:
// agents, the clock, its life and the writer's side; tracker_queues.cpp,
// tracker_executables.cpp, tracker_memory.cpp, tracker_copies.cpp,
// tracker_signals.cpp). Everything here is guarded by Impl::mu unless it says
// otherwise.
#pragma once

#include <atomic>
#include <deque>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "allocations.h"
#include "hsa_tables.h"
#include "profile_records.h"
#include "tracker.h"

namespace gtap::hsa {

using core::profile::kNoDevice;
constexpr int64_t kClockSampleIntervalNs = 50'000'000;

inline uint32_t threadIdOf(const core::CallScope& scope) {
  return scope.thread() ? scope.thread()->id : core::currentThreadId();
}

struct DeviceInfo {
  uint32_t id = 0;
  hsa_agent_t agent{};
  bool gpu = false;
  int64_t lastSampleNs = 0;
  uint64_t copyQueue = 0;  // gtap id of the object that stands for its copy engine
};

struct KernelInfo {
  uint64_t id = 0;
  uint32_t kernargSize = 0;
  bool wanted = true;  // its name passes GTAP_KERNEL_FILTER
};

struct Timed;

struct ModuleInfo {
  uint64_t id = 0;
  hsa_agent_t agent{};
  std::vector<uint8_t> bytes;  // kept until the executable is frozen
};

struct ExecutableInfo {
  uint64_t id = 0;
  std::vector<ModuleInfo> modules;
  std::vector<uint64_t> kernelObjects;
};

struct ReaderInfo {
  const void* data = nullptr;  // from memory: the program's bytes (valid until the reader is destroyed)
  size_t size = 0;
  std::vector<uint8_t> owned;  // from a file: read when the reader was made
};

// A packet or copy gtap times: its record, gtap's completion signal, and the
// program's, which gtap signals once the work is done.
struct Timed {
  core::profile::OpRecord rec;
  hsa_signal_t mine{};
  hsa_signal_t program{};
  hsa_agent_t agent{};  // packets: the queue's agent, for the dispatch time
};
struct QueueInfo {
  uint64_t id = 0;
  uint32_t device = kNoDevice;
  hsa_agent_t agent{};
  hsa_queue_t* queue = nullptr;
  std::deque<Timed> inFlight;  // packets gtap times, in queue order (under the tracker's lock)
};

// An async copy gtap times through a completion handler. Whoever sets
// `finished` first (the handler, or a drain at exit or shut-down) reads it;
// the handler alone recycles the entry.
struct Pending : Timed {
  std::atomic<bool> finished{false};
};

// The times gtap read for work whose completion signal was the program's, so
// the program's own profiling queries on that signal get them.
struct ProgramTimes {
  bool copy = false;
  uint64_t start = 0, end = 0;
};
inline hsa_signal_value_t signalValue(hsa_signal_t s) { return GTAP_HSA_REAL(hsa_signal_load_relaxed)(s); }

struct Tracker::Impl {
  std::mutex mu;
  std::vector<DeviceInfo> devices;
  std::unordered_map<uint64_t, uint32_t> deviceOfAgent;
  std::unordered_map<uint64_t, std::pair<schema::MemoryKind, uint32_t>> pools;  // pool or region -> kind, device
  std::unordered_map<uint64_t, KernelInfo> kernels;                             // by kernel object
  std::unordered_map<uint64_t, ExecutableInfo> executables;
  std::unordered_map<uint64_t, ReaderInfo> readers;
  core::AllocationTable allocations;
  core::AllocationTable lockedRanges;  // host memory locked for the devices
  std::unordered_map<hsa_queue_t*, QueueInfo*> queues;
  std::unordered_set<Pending*> outstanding;
  std::vector<Pending*> freePending;
  std::vector<hsa_signal_t> freeSignals;        // interrupt signals (async copies)
  std::vector<hsa_signal_t> freePacketSignals;  // signals only the device waits on (packets)
  std::unordered_map<uint64_t, ProgramTimes> programTimes;  // by the program's signal handle
  uint64_t timestampFrequency = 1'000'000'000;
  // Kernel dispatch packets seen on doorbells, in the order they were: the
  // dispatch numbers of GTAP_DISPATCH_RANGE.
  uint64_t dispatches = 0;
  bool loaded = false;
  bool canTime = false;  // the runtime has every entry timing needs
  bool warnedIntercept = false;
  uint32_t stackDepth = 32;
  core::profile::Outbox out;
  core::profile::Outbox spare;  // emptied by the writer, swapped in at the next flush

  uint32_t deviceOf(hsa_agent_t agent) {
    auto it = deviceOfAgent.find(agent.handle);
    return it == deviceOfAgent.end() ? kNoDevice : it->second;
  }
  void sampleClockLocked(DeviceInfo& d);
  uint64_t objectLocked(schema::ObjectKind kind, uint64_t handle, uint32_t device, uint64_t parent,
                        std::string name, uint32_t thread, core::profile::ObjectRecord extras = {});
  hsa_signal_t acquireSignalLocked();
  hsa_signal_t acquirePacketSignalLocked();
  // Reads the packets of `q` that have completed, in order, up to the first
  // that has not (the device signals gtap's signal; nothing waits for it).
  void collectLocked(QueueInfo& q);
  void collectAllLocked() {
    for (auto& [handle, q] : queues) collectLocked(*q);
  }
  Pending* acquirePendingLocked();
  // Starts timing `rec`: gtap's signal with a completion handler. False when
  // the runtime would not take the handler (then nothing is swapped).
  bool armLocked(Pending* p);
  // Reads the times of a finished copy and hands its completion to the program.
  void completeCopy(Timed& t);
  schema::CopyDirection directionOf(const void* dst, const void* src);
  static void interceptHandler(const void* packets, uint64_t count, uint64_t userIndex, void* data,
                               hsa_amd_queue_intercept_packet_writer writer);
  // interceptHandler's work; `kept` is how many packets the queue had in
  // flight before this doorbell's, `written` whether the writer was called.
  static void interceptPackets(QueueInfo* queue, const void* packets, uint64_t count, uint64_t userIndex,
                               hsa_amd_queue_intercept_packet_writer writer, size_t& kept, bool& written);
  static bool onSignalled(hsa_signal_value_t value, void* arg);
  void drainLocked(bool runtimeEnding);
};

}  // namespace gtap::hsa
