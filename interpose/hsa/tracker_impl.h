// The tracker's state, shared by the files that hold its parts (tracker.cpp:
// agents, the clock, its life and the writer's side; tracker_queues.cpp,
// tracker_executables.cpp, tracker_memory.cpp, tracker_copies.cpp,
// tracker_signals.cpp). Everything here is guarded by Impl::mu unless it says
// otherwise.
#pragma once

#include <hsa/hsa_ven_amd_aqlprofile.h>

#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "allocations.h"
#include "device_work.h"
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
  uint32_t gpuIndex = ~0u;  // among the GPU agents, in the runtime's order (GTAP_DEVICE_FILTER)
};

// Hardware counters on one device (tracker_counters.cpp): the events of the
// pass this run collects, as one AQL profile around each measured dispatch.
struct CounterDevice {
  bool measure = false;
  uint32_t set = 0;  // its CounterSetRecord id
  std::vector<hsa_ven_amd_aqlprofile_event_t> events;
  uint32_t commandBytes = 0, outputBytes = 0;  // each profile's buffers (get_info)
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

// A copy gtap times: its record, gtap's completion signal, and the
// program's, which gtap signals once the work is done.
struct Timed {
  core::profile::OpRecord rec;
  hsa_signal_t mine{};
  hsa_signal_t program{};
  hsa_agent_t agent{};
};

// A packet gtap times, from its doorbell until its completion is read. A slot
// keeps its completion signal (gtap's) and the storage of its variable parts
// for the queue's life, so a doorbell allocates nothing.
struct PacketSlot {
  hsa_signal_t mine{};
  hsa_signal_t program{};
  core::devicework::Header rec;  // the fixed fields; its counts are set when it is read
  uint64_t unknownKernel = 0;    // a kernel object gtap did not see frozen (for the note)
  std::vector<uint8_t> arguments;
  std::vector<uint64_t> stack;
  // Counters (when its queue's device measures): the profile whose start and
  // stop packets bracket the dispatch, its buffers (the queue's), and gtap's
  // signal the stop packet completes. `measured`: this packet's.
  hsa_ven_amd_aqlprofile_profile_t profile{};
  hsa_signal_t stopped{};
  bool measured = false;
  // A packet of gtap's after the program's completion barrier completes
  // `stopped` (the stop packet, or a barrier): only then is the slot read.
  bool fenced = false;
};

// A queue gtap intercepts. Its packets in flight are a ring of slots: the
// doorbell's thread (one at a time per queue, as the runtime calls the packet
// handler) fills them at `head`; whoever reads completions (that thread when
// the ring fills up, the writer at each flush, a profiling query) takes
// `consuming` and reads them in order from `tail`. No lock on either side.
struct QueueInfo {
  uint64_t id = 0;
  uint32_t device = kNoDevice;
  hsa_agent_t agent{};
  hsa_queue_t* queue = nullptr;
  std::unique_ptr<PacketSlot[]> slots;
  uint64_t capacity = 0;  // a power of two; 0: nothing is timed on this queue
  std::atomic<uint64_t> head{0}, tail{0};
  std::atomic<bool> consuming{false};
  std::atomic<bool> producing{false};
  // GTAP_QUEUE_FILTER and GTAP_DEVICE_FILTER: false leaves its work
  // unrecorded and unmeasured. `measures`: its slots have counter profiles.
  bool wanted = true;
  bool measures = false;
};

// The times of the last work completing each program signal gtap swapped,
// for the program's own profiling queries on it: a fixed open-addressed table
// written without a lock (a sequence count per entry), so reading a
// completion on the program's thread costs no lock or allocation.
class ProgramTimesTable {
 public:
  // valid false: the program's queries on it go to the runtime.
  void put(uint64_t signal, bool copy, bool valid, uint64_t start, uint64_t end);
  bool get(uint64_t signal, bool copy, uint64_t& start, uint64_t& end);
  void clear();

 private:
  struct Entry {
    std::atomic<uint64_t> key{0};
    std::atomic<uint32_t> sequence{0};  // odd while written
    uint64_t start = 0, end = 0;
    bool copy = false, valid = false;
  };
  static constexpr size_t kEntries = 4096;  // a power of two
  static constexpr size_t kProbes = 64;
  Entry* find(uint64_t signal, bool insert);
  Entry entries_[kEntries];
};

// An async copy gtap times through a completion handler. Whoever sets
// `finished` first (the handler, or a drain at exit or shut-down) reads it;
// the handler alone recycles the entry.
struct Pending : Timed {
  std::atomic<bool> finished{false};
};

// The device metrics ROCm SMI sampled since the last call, into `out`.
void takeDeviceMetrics(core::profile::Outbox& out);

inline hsa_signal_value_t signalValue(hsa_signal_t s) { return GTAP_HSA_REAL(hsa_signal_load_relaxed)(s); }

struct Tracker::Impl {
  std::mutex mu;
  std::vector<DeviceInfo> devices;
  std::unordered_map<uint64_t, uint32_t> deviceOfAgent;
  std::unordered_map<uint64_t, std::pair<schema::MemoryKind, uint32_t>> pools;  // pool or region -> kind, device
  using KernelMap = std::unordered_map<uint64_t, KernelInfo>;                   // by kernel object
  KernelMap kernels;
  // A copy of `kernels` the doorbells read without the lock, published anew
  // when executables are frozen or destroyed; earlier copies are kept (a
  // doorbell may still be reading one).
  std::atomic<const KernelMap*> kernelsView{nullptr};
  std::vector<std::unique_ptr<KernelMap>> kernelViews;
  std::unordered_map<uint64_t, ExecutableInfo> executables;
  std::unordered_map<uint64_t, ReaderInfo> readers;
  core::AllocationTable allocations;
  core::AllocationTable lockedRanges;  // host memory locked for the devices
  std::unordered_map<hsa_queue_t*, QueueInfo*> queues;
  std::unordered_set<Pending*> outstanding;
  std::vector<Pending*> freePending;
  std::vector<hsa_signal_t> freeSignals;  // interrupt signals (async copies)
  ProgramTimesTable programTimes;         // by the program's signal handle; no lock
  uint64_t timestampFrequency = 1'000'000'000;
  // Kernel dispatch packets seen on doorbells, in the order they were: the
  // dispatch numbers of GTAP_DISPATCH_RANGE.
  std::atomic<uint64_t> dispatches{0};
  std::atomic<bool> loaded{false};
  std::atomic<bool> canTime{false};  // the runtime has every entry timing needs
  bool warnedIntercept = false;
  uint32_t stackDepth = 32;
  // Hardware counters (tracker_counters.cpp), by DeviceInfo id; set up once
  // with the devices, read without the lock afterwards.
  std::vector<CounterDevice> counterDevices;
  hsa_ven_amd_aqlprofile_1_00_pfn_t aql{};
  hsa_amd_memory_pool_t hostPool{};  // fine-grained system memory for profile buffers
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
  hsa_signal_t newPacketSignal();
  void publishKernelsLocked();
  // GTAP_COUNTERS: plans each GPU agent's pass, records the counter set and
  // notes, and says once that measured dispatches run one at a time.
  void setUpCountersLocked();
  // Counter profiles for every slot of a new queue on a measuring device;
  // false when its buffers cannot be had (its work is then not measured).
  bool armQueueCounters(QueueInfo& q);
  // The values a slot's stop packet left, in the set's order, and the raw
  // output buffer; false (and `note`) when the extension would not read them.
  bool readCounters(PacketSlot& slot, std::vector<uint64_t>& values, const char*& note);
  // With counters on: a thread of gtap's that reads the measuring queues'
  // completed dispatches (their times and counters) every few milliseconds,
  // so that reading them seldom falls to the program's thread.
  void startCounterReaderLocked();
  bool counterReader = false;
  // Device metrics (GTAP_METRICS_INTERVAL_MS) through ROCm SMI.
  void startDeviceMetricsLocked();
  // Reads the packets of `q` that have completed, in order, up to the first
  // that has not (the device signals gtap's signal; nothing waits for it),
  // into the calling thread's device-work buffer. `wait`: if another thread
  // is reading them, wait for it rather than leave them to it, and wait
  // (briefly) for the stop or fence packet right behind a completed packet.
  void consume(QueueInfo& q, bool wait);
  // Every packet still in flight on `q`, written untimed with `note`.
  void abandonInFlight(QueueInfo& q, const char* note);
  void collectAllLocked() {
    for (auto& [handle, q] : queues) consume(*q, true);
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
  // interceptHandler's work; `kept` is the queue's ring head before this
  // doorbell's packets, `written` whether the writer was called.
  static void interceptPackets(QueueInfo* queue, const void* packets, uint64_t count, uint64_t userIndex,
                               hsa_amd_queue_intercept_packet_writer writer, uint64_t& kept, bool& written);
  static bool onSignalled(hsa_signal_value_t value, void* arg);
  void drainLocked(bool runtimeEnding);
};

}  // namespace gtap::hsa
