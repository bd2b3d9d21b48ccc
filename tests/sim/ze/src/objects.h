// The objects behind the driver's handles.
#pragma once

#include "common.h"

#ifndef GTAP_SIM_KERNEL_TYPES_ONLY
#define GTAP_SIM_KERNEL_TYPES_ONLY
#endif
#include "gtap_sim_kernel.h"

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace sim {

class Engine;
struct Command;
using CommandStream = std::vector<Command>;
struct MetricGroup;
struct MetricStreamer;

struct Driver : Object {
  static constexpr Kind kKind = Kind::Driver;
  Driver() : Object(kKind) {}
};

struct Device : Object {
  static constexpr Kind kKind = Kind::Device;
  Device() : Object(kKind) {}
  // The device's metric groups (metrics.cpp), made with the device and never
  // destroyed: instruction sampling (sampling.cpp) and the query-based
  // ComputeBasic (metric_query.cpp).
  MetricGroup* metricGroup = nullptr;
  MetricGroup* queryGroup = nullptr;  // ComputeBasic, the first of queryGroups
  std::vector<MetricGroup*> queryGroups;
  // Sysman (sysman.cpp): engine groups and the frequency domain, made with
  // the device and never destroyed.
  std::vector<Object*> engineGroups;
  Object* frequencyDomain = nullptr;
  // The open streamer, guarded by sync::mutex(); and, for the signal handler
  // and for launches starting, its address and period (published after it is
  // complete, cleared before it is closed).
  std::shared_ptr<MetricStreamer> streamer;
  std::atomic<MetricStreamer*> sampling{nullptr};
  std::atomic<uint32_t> samplingPeriodNs{0};
};

// The single driver and device, created by zeInit and never destroyed.
Driver* theDriver();
Device* theDevice();
void createDriverAndDevice();

// Command queue groups of the device (see device.cpp).
struct QueueGroup {
  ze_command_queue_group_property_flags_t flags;
  size_t maxFillPatternSize;
  uint32_t numQueues;
};
inline constexpr uint32_t kNumQueueGroups = 2;
const QueueGroup& queueGroup(uint32_t ordinal);
// Validates a queue descriptor (also used by immediate command lists).
ze_result_t checkQueueDesc(const ze_command_queue_desc_t* desc);
inline bool groupCanCompute(uint32_t ordinal) {
  return (queueGroup(ordinal).flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE) != 0;
}

struct Context : Object {
  static constexpr Kind kKind = Kind::Context;
  Context() : Object(kKind) {}
  // zetContextActivateMetricGroups: the groups active on this context, of
  // every device. Guarded by sync::mutex().
  std::vector<const MetricGroup*> activeMetricGroups;
};

struct EventPool : Object {
  static constexpr Kind kKind = Kind::EventPool;
  EventPool(ze_event_pool_flags_t f, uint32_t n, uint32_t cb = 0)
      : Object(kKind), flags(f), counterBased(cb), slotUsed(n, false) {}
  const ze_event_pool_flags_t flags;
  // Counter-based pools (ZE_experimental_event_pool_counter_based): the
  // extension's flags, never 0 for such a pool (its default, immediate lists
  // only, is stored as that flag); 0 for a pool of ordinary events.
  const uint32_t counterBased;
  std::mutex mutex;  // guards slotUsed
  std::vector<bool> slotUsed;
  bool timestamps() const { return (flags & ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP) != 0; }
};

struct Event : Object {
  static constexpr Kind kKind = Kind::Event;
  Event(std::shared_ptr<EventPool> p, uint32_t i) : Object(kKind), pool(std::move(p)), index(i) {}
  const std::shared_ptr<EventPool> pool;
  const uint32_t index;
  // The event's memory. On hardware the host reads and resets an event by
  // reading and writing its memory, without a lock: here the host reads
  // through a sequence count (odd while a write is under way), and the
  // device's signal (under sync::mutex()) and the host's reset are the writers.
  std::atomic<uint64_t> memorySeq{0};
  std::atomic<bool> signaled{false};
  std::atomic<bool> hasTimestamp{false};
  std::atomic<uint64_t> timestamp[4]{};  // global start, end; context start, end
  // Guarded by sync::mutex().
  uint32_t waiters = 0;  // threads waiting for this event: a signal wakes them only if any
  // Counter-based events: every submitted command that signals the event arms
  // it anew (`armed` counts the arms); `outstanding` holds the arms whose
  // command has not completed. The event is signaled when its latest arm has.
  uint64_t armed = 0;
  std::vector<uint64_t> outstanding;
  uint64_t lastWrittenArm = 0;  // the arm whose call last wrote the timestamps
};

struct Fence : Object {
  static constexpr Kind kKind = Kind::Fence;
  explicit Fence(const void* q) : Object(kKind), queue(q) {}
  const void* const queue;  // identity of the owning queue, for validation only
  bool signaled = false;    // guarded by sync::mutex()
};

struct BuildLog : Object {
  static constexpr Kind kKind = Kind::BuildLog;
  explicit BuildLog(std::string t) : Object(kKind), text(std::move(t)) {}
  const std::string text;
};

struct Module : Object {
  static constexpr Kind kKind = Kind::Module;
  Module() : Object(kKind) {}
  ~Module() override;
  void* library = nullptr;               // dlopen handle of the host shared object
  // The anonymous file stays open while the module is loaded: glibc finds an
  // already loaded object by its path, and a closed descriptor's
  // /proc/self/fd/N path would name the next module's file too.
  int fd = -1;
  std::vector<uint8_t> binary;           // the bytes the program gave
  // Where the loaded copy's code is: its executable PT_LOAD segments,
  // [begin, end) in the process, and the load bias (runtime address minus
  // ELF virtual address). Fixed at load; read by the sampling signal handler.
  struct CodeRange {
    uintptr_t begin;
    uintptr_t end;
  };
  std::vector<CodeRange> code;
  uintptr_t loadBias = 0;
  std::vector<const gtap_sim_kernel_desc*> kernels;
  std::vector<const char*> kernelNames;  // same order, for zeModuleGetKernelNames
  std::array<uint8_t, ZE_MAX_MODULE_UUID_SIZE> uuid{};
  const gtap_sim_kernel_desc* findKernel(const char* name) const;
};

// What a launch needs, copied when the launch is appended: Level Zero takes
// argument values and group size at append time, not at execution.
struct LaunchState {
  std::shared_ptr<Module> module;  // keeps the code mapped while work is queued
  const gtap_sim_kernel_desc* desc = nullptr;
  std::array<uint32_t, 3> groupSize{1, 1, 1};
  std::array<uint32_t, 3> globalOffset{0, 0, 0};
  std::vector<std::vector<uint8_t>> values;  // per argument; empty for local memory
  std::vector<uint32_t> localSizes;          // per argument; bytes of local memory or 0
};

struct Kernel : Object {
  static constexpr Kind kKind = Kind::Kernel;
  Kernel() : Object(kKind) {}
  std::shared_ptr<Module> module;
  const gtap_sim_kernel_desc* desc = nullptr;
  std::array<uint8_t, ZE_MAX_KERNEL_UUID_SIZE> uuid{};
  std::mutex mutex;  // guards everything below
  std::array<uint32_t, 3> groupSize{1, 1, 1};
  std::array<uint32_t, 3> globalOffset{0, 0, 0};
  std::vector<std::vector<uint8_t>> values;
  std::vector<uint32_t> localSizes;
  std::vector<bool> argSet;
  ze_kernel_indirect_access_flags_t indirectAccess = 0;
  ze_cache_config_flags_t cacheConfig = 0;
  // Snapshot for a launch; fails when an argument was never set.
  ze_result_t snapshot(std::shared_ptr<LaunchState>& out);
};

struct CommandQueue : Object {
  static constexpr Kind kKind = Kind::CommandQueue;
  CommandQueue();
  ~CommandQueue() override;
  uint32_t ordinal = 0;
  uint32_t index = 0;
  ze_command_queue_mode_t mode = ZE_COMMAND_QUEUE_MODE_DEFAULT;
  std::unique_ptr<Engine> engine;
};

struct CommandList : Object {
  static constexpr Kind kKind = Kind::CommandList;
  CommandList();
  ~CommandList() override;
  uint32_t ordinal = 0;
  bool immediate = false;
  ze_command_queue_mode_t mode = ZE_COMMAND_QUEUE_MODE_DEFAULT;  // immediate lists only
  bool inOrder = false;  // created in-order (every list runs in order here; the flag says the program asked)
  std::mutex mutex;                                              // guards stream and closed
  std::shared_ptr<CommandStream> stream;                         // regular lists
  bool closed = false;
  std::unique_ptr<Engine> engine;                                // immediate lists
};

}  // namespace sim
