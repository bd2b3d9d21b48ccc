// Level Zero replay records (docs/replay.md): ids for the program's objects,
// its allocations, what its command lists hold, and the bytes the device reads
// from host memory and leaves for the program. Hooks call it only for the
// program's own calls (not nested ones) and only with GTAP_MODE=replay.
#pragma once

#include <level_zero/ze_api.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "call_scope.h"
#include "replay_stream.h"

namespace gtap::ze {

// Whether this call is the program's and replay records.
bool replaying(const core::CallScope& scope);

class ReplayRecorder {
 public:
  using Op = schema::ReplayRecord::Which;
  static ReplayRecorder& get();

  // The record's place in the stream, taken before a call that is not a wait.
  uint64_t begin() { return core::replay::nextSeq(); }

  // --- objects (after the real call succeeded) ---
  void devicesSeen(ze_driver_handle_t driver, uint32_t count, ze_device_handle_t* devices,
                   const core::CallScope& scope);
  void contextCreated(uint64_t seq, const core::CallScope& scope, ze_context_handle_t context,
                      const ze_context_desc_t* desc, uint32_t numDevices, ze_device_handle_t* devices);
  void moduleCreated(uint64_t seq, const core::CallScope& scope, ze_module_handle_t module,
                     ze_context_handle_t context, ze_device_handle_t device, const ze_module_desc_t* desc);
  void kernelCreated(uint64_t seq, const core::CallScope& scope, ze_kernel_handle_t kernel, ze_module_handle_t module,
                     const ze_kernel_desc_t* desc);
  void kernelArgument(uint64_t seq, const core::CallScope& scope, ze_kernel_handle_t kernel, uint32_t index,
                      size_t size, const void* value);
  void queueCreated(uint64_t seq, const core::CallScope& scope, ze_command_queue_handle_t queue,
                    ze_context_handle_t context, ze_device_handle_t device, const ze_command_queue_desc_t* desc);
  void listCreated(uint64_t seq, const core::CallScope& scope, ze_command_list_handle_t list,
                   ze_context_handle_t context, ze_device_handle_t device, const ze_command_list_desc_t* desc);
  void immediateListCreated(uint64_t seq, const core::CallScope& scope, ze_command_list_handle_t list,
                            ze_context_handle_t context, ze_device_handle_t device,
                            const ze_command_queue_desc_t* desc);
  void eventPoolCreated(uint64_t seq, const core::CallScope& scope, ze_event_pool_handle_t pool,
                        ze_context_handle_t context, const ze_event_pool_desc_t* desc, uint32_t numDevices,
                        ze_device_handle_t* devices);
  void eventCreated(uint64_t seq, const core::CallScope& scope, ze_event_handle_t event, ze_event_pool_handle_t pool,
                    const ze_event_desc_t* desc);
  void fenceCreated(uint64_t seq, const core::CallScope& scope, ze_fence_handle_t fence,
                    ze_command_queue_handle_t queue, const ze_fence_desc_t* desc);
  // A record naming one object and some values (close, reset, host signal,
  // group size, ...).
  void simple(uint64_t seq, const core::CallScope& scope, Op op, const void* handle,
              std::vector<uint64_t> values = {});
  void destroyed(uint64_t seq, const core::CallScope& scope, Op op, const void* handle);

  // --- memory ---
  void memAllocated(uint64_t seq, const core::CallScope& scope, uint8_t kind, ze_context_handle_t context,
                    ze_device_handle_t device, size_t size, size_t alignment, void* ptr);
  // Before the real free (the address may be handed out again at once);
  // returns the seq to retract if the free fails, or 0.
  uint64_t memFreeing(const core::CallScope& scope, ze_context_handle_t context, void* ptr);

  // --- appends: `appending` before the real call, the op's own after it
  // succeeded. On an immediate list the append is a submission: host memory
  // changes are recorded first. ---
  struct Append {
    uint64_t seq = 0;
    uint64_t dispatch = ~uint64_t{0};
  };
  Append appending(const core::CallScope& scope, ze_command_list_handle_t list, bool launch);
  void launched(const Append& a, const core::CallScope& scope, ze_command_list_handle_t list,
                ze_kernel_handle_t kernel, const ze_group_count_t* groups, bool cooperative, ze_event_handle_t signal,
                uint32_t numWaits, ze_event_handle_t* waits);
  struct Region {  // a copy's region, when it has one
    const ze_copy_region_t* dst = nullptr;
    uint32_t dstPitch = 0, dstSlicePitch = 0;
    const ze_copy_region_t* src = nullptr;
    uint32_t srcPitch = 0, srcSlicePitch = 0;
  };
  void copied(const Append& a, const core::CallScope& scope, ze_command_list_handle_t list, void* dst,
              const void* src, size_t size, const Region* region, ze_event_handle_t signal, uint32_t numWaits,
              ze_event_handle_t* waits);
  void filled(const Append& a, const core::CallScope& scope, ze_command_list_handle_t list, void* dst,
              const void* pattern, size_t patternSize, size_t size, ze_event_handle_t signal, uint32_t numWaits,
              ze_event_handle_t* waits);
  // Barrier (signal + waits), signalEvent / eventReset (one event),
  // waitOnEvents (events).
  void listOp(const Append& a, const core::CallScope& scope, Op op, ze_command_list_handle_t list,
              ze_event_handle_t signal, uint32_t numEvents, ze_event_handle_t* events);

  // --- submission and waits ---
  // Before the real call: host memory changes, then the execute record.
  uint64_t executing(const core::CallScope& scope, ze_command_queue_handle_t queue, uint32_t count,
                     ze_command_list_handle_t* lists, ze_fence_handle_t fence);
  void executed(uint64_t seq, const core::CallScope& scope, ze_command_queue_handle_t queue, ze_result_t result);
  // After a wait succeeded: its record, then the read-backs it completed.
  void waited(const core::CallScope& scope, Op op, const void* handle, uint64_t timeout);

  void unsupported(const core::CallScope& scope, std::string reason);
  // A record that was written before its call failed.
  void failed(uint64_t seq, const core::CallScope& scope);

  struct Impl;

 private:
  ReplayRecorder();
  std::unique_ptr<Impl> impl_;
};

}  // namespace gtap::ze

// For the generated wrappers of calls replay does not reproduce.
namespace gtap::ze {
void replayUnsupported(const core::CallScope& scope, const char* name);
}
