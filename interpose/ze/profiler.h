// What gtap learns about a Level Zero program beyond its API calls: devices
// and their clocks, runtime objects, device work with device times, and
// allocations. Hooks (hooks/*.cpp) feed it; the writer drains it through a
// chunk producer.
#pragma once

#include <level_zero/ze_api.h>

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "call_scope.h"
#include "chunk_producer.h"

namespace gtap::ze {

using core::recordKernels;
using core::recordMemory;
using core::recordStacks;

enum class OpKind : uint8_t { kernel, copy, fill, barrier, other };
enum class Direction : uint8_t { unknown, hostToDevice, deviceToHost, deviceToDevice, hostToHost };
constexpr uint64_t kNoDispatch = ~uint64_t{0};

// One appended device operation. Executed once on an immediate list, once per
// execution of a regular list. Ops live in pooled slots (no allocation per
// launch): the fields after `capturedDone` are the slot's bookkeeping.
struct Op {
  OpKind kind = OpKind::kernel;
  uint64_t kernel = 0;  // gtap id
  std::array<uint32_t, 3> groupCount{};
  std::array<uint32_t, 3> groupSize{};
  uint64_t bytes = 0;
  Direction direction = Direction::unknown;
  uint64_t list = 0;  // gtap id
  uint32_t device = ~0u;
  ze_event_handle_t event = nullptr;  // the event whose timestamps time it
  bool ownEvent = false;              // gtap's event (else the program's)
  uint32_t thread = ~0u;
  uint64_t appendIndex = ~uint64_t{0};
  uint64_t appendTicks = 0;
  // Kernel launches: the dispatch number (immediate lists), or the launch's
  // place among its regular list's launches (numbered at each execution).
  uint64_t dispatch = kNoDispatch;
  uint64_t listLaunch = kNoDispatch;
  std::vector<uint64_t> stack;
  bool pending = false;  // an execution not yet read
  // When the program resets `event` on the device later in the same list, its
  // timestamps are copied first into `captured` (gtap's host memory), and
  // `capturedDone` (gtap's event) says when the copy has happened.
  ze_kernel_timestamp_result_t* captured = nullptr;
  ze_event_handle_t capturedDone = nullptr;

  Op* nextInList = nullptr;   // regular lists: the op appended after this one
  Op* nextPending = nullptr;  // submitted, not yet read
  void* listHandle = nullptr;
  void* context = nullptr;
  // The profiler's state of the regular list executing it and of the
  // program's event timing it, whose counts of submitted ops it is in (set
  // at submission; opaque here).
  void* listInfo = nullptr;
  void* eventInfo = nullptr;
  bool immediate = false;
  // gtap's event (or capturedDone) may be signaled: reset before its next use.
  bool dirty = false;
  // The execution being read: where and when it was submitted.
  uint64_t queue = 0;
  uint64_t submitTicks = 0;
  uint32_t submitThread = ~0u;
  // What reading it found (set by the thread reading it).
  uint8_t readState = 0;
  uint64_t readStart = 0, readEnd = 0;
  const char* readNote = nullptr;
  // Measured launches (GTAP_COUNTERS): gtap's metric query around it (a
  // zet_metric_query_handle_t), its counter set and, once read, the query's
  // raw data.
  void* query = nullptr;
  uint32_t counterSet = 0;
  std::vector<uint8_t> counterRaw;
};

// What a created object's record carries beyond the common fields. (Outside
// Profiler, so that its member initialisers are complete where
// Profiler::objectCreated's default argument uses them.)
struct ProfilerObjectExtras {
  std::string name;
  std::vector<uint8_t> binary;
  std::string binaryFormat, buildFlags;
  std::vector<std::pair<std::string, std::string>> properties;
  std::vector<uint8_t> debugInfo;  // mode samples: a module's debug ELF
  uint64_t codeAddress = 0;        // mode samples: a kernel's first instruction on the device
};

class Profiler {
 public:
  static Profiler& get();

  using ObjectExtras = ProfilerObjectExtras;

  // --- objects (called after the real call succeeded) ---
  void devicesSeen(ze_driver_handle_t driver, uint32_t count, ze_device_handle_t* devices);
  // The object and its record are made in one step under the lock: the writer
  // may take the records away at any moment.
  uint64_t objectCreated(uint8_t kind, void* handle, void* parentHandle, ze_device_handle_t device,
                         uint32_t flags, uint32_t ordinal, uint32_t index, const core::CallScope& scope,
                         ObjectExtras extras = {});
  // What the hooks take before the real destroy and give to objectDestroyed
  // after it, so that only the object destroyed is forgotten.
  const void* objectToken(void* handle) const;
  void objectDestroyed(void* handle, const void* token);
  void moduleCreated(ze_module_handle_t module, ze_context_handle_t context, ze_device_handle_t device,
                     const ze_module_desc_t* desc, const core::CallScope& scope);
  void kernelCreated(ze_kernel_handle_t kernel, ze_module_handle_t module, const char* name,
                     const core::CallScope& scope);
  void kernelGroupSize(ze_kernel_handle_t kernel, uint32_t x, uint32_t y, uint32_t z);
  void listCreated(ze_command_list_handle_t list, ze_context_handle_t context, ze_device_handle_t device,
                   bool immediate, uint32_t ordinal, uint32_t index, uint32_t flags, const core::CallScope& scope);
  void listReset(ze_command_list_handle_t list);  // also before destroy
  void eventPoolCreated(ze_event_pool_handle_t pool, bool timestamps, bool counterBased = false);
  void eventCreated(ze_event_handle_t event, ze_event_pool_handle_t pool);
  void eventDestroyed(ze_event_handle_t event, const void* token);
  void contextDestroying(ze_context_handle_t context);

  // --- device work ---
  // The event to pass to the real append, or `programEvent` unchanged when
  // gtap does not time this operation. `signalAfter` is set when the
  // program's event cannot carry timestamps and must be signalled after ours;
  // `known` is false for a list gtap has not seen created (then nothing is timed).
  ze_event_handle_t eventForAppend(ze_command_list_handle_t list, ze_event_handle_t programEvent,
                                   bool& signalAfter, bool& known);
  // Indirect launches: no dispatch number (replay does not number them), so
  // none is recorded while a dispatch range is set.
  bool shouldTimeKernel(ze_kernel_handle_t kernel);
  // A launch about to be appended by the program (not nested): numbers it as
  // replay scopes do (docs/replay.md) and says whether its device work is
  // recorded (GTAP_KERNEL_FILTER, GTAP_DISPATCH_RANGE). A launch the runtime
  // then refuses is handed to launchFailed.
  bool launchStarting(ze_command_list_handle_t list, ze_kernel_handle_t kernel, Op& op);
  void launchFailed(ze_command_list_handle_t list, const Op& op);
  // A launch gtap records about to be appended: when GTAP_COUNTERS measures
  // its device, the metric query to bracket it with, also set in `op` (null:
  // not measured).
  void* queryForLaunch(ze_command_list_handle_t list, Op& op);
  // `op.appendTicks` is taken by the caller before the real append.
  void appended(ze_command_list_handle_t list, Op op, ze_event_handle_t event, bool ownEvent,
                const core::CallScope& scope);
  void appendFailed(ze_command_list_handle_t list, ze_event_handle_t event, bool ownEvent);
  void executing(ze_command_queue_handle_t queue, uint32_t count, ze_command_list_handle_t* lists,
                 const core::CallScope& scope);
  // Reads the device times of everything that has finished.
  void resolve();
  // The program is about to reset or destroy one of its events.
  void programEventEnding(ze_event_handle_t event);
  // The program appends a device-side reset of `event` to `list`: gtap first
  // appends a copy of the timestamps of the operations the event times.
  void deviceResetAppending(ze_command_list_handle_t list, ze_event_handle_t event);
  // The program appends a call to `list` that signals `event`: a
  // counter-based event is re-armed by it, so the calls it timed until now
  // are read, or their timestamps copied first.
  void programEventSignalling(ze_command_list_handle_t list, ze_event_handle_t event);

  // --- memory ---
  void allocated(uint8_t kind, void* address, size_t size, size_t alignment, ze_device_handle_t device,
                 const core::CallScope& scope);
  void freeing(void* address, const core::CallScope& scope);
  Direction directionOf(const void* dst, const void* src);

  std::vector<uint64_t> captureStack();

  // On the writer thread: hands what was gathered since the last flush to the file.
  void produce(core::ChunkSink& sink, bool final);
  // The counter values of the measured ops recorded so far (at exit).
  void calculateCounters();

  struct Impl;
  Impl* impl() { return impl_.get(); }

 private:
  Profiler();
  std::unique_ptr<Impl> impl_;
};

}  // namespace gtap::ze
