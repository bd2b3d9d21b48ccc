// HSA replay records (docs/replay.md, HSA): ids for the agents, pools,
// memory, signals, queues, code objects, executables and kernels the program
// uses; every packet it hands a queue, as the intercept handler sees it at the
// doorbell, with the addresses in kernarg segments found through the code
// object's metadata; copies and fills; the host operations on signals and the
// waits the device work is ordered by; the bytes the device reads from host
// memory and those it leaves there for the program. Hooks call it only for
// the program's own calls (not nested ones, not gtap's) with GTAP_MODE replay.
#pragma once

#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>

#include <cstdint>
#include <memory>
#include <string>

#include "call_scope.h"
#include "replay_stream.h"

namespace gtap::hsa {

// Whether this call is the program's and replay records.
bool replaying(const core::CallScope& scope);

class ReplayRecorder {
 public:
  static ReplayRecorder& get();

  // The record's place in the stream, taken before a call another thread may
  // wait for (a signal's store).
  uint64_t begin() { return core::replay::nextSeq(); }

  // --- memory ---
  // `pool` is a memory pool's or a region's handle.
  void allocated(const core::CallScope& scope, uint64_t pool, void* ptr, size_t size, uint32_t flags);
  // Before the real free; returns the seq to retract if the free fails, or 0.
  uint64_t freeing(const core::CallScope& scope, void* ptr);
  void allowedAccess(const core::CallScope& scope, uint32_t count, const hsa_agent_t* agents, const void* ptr);
  void locked(const core::CallScope& scope, void* host, size_t size, const hsa_agent_t* agents, int count,
              uint64_t pool, uint32_t flags, void* agentPtr);
  uint64_t unlocking(const core::CallScope& scope, void* host);

  // --- signals ---
  void signalCreated(const core::CallScope& scope, hsa_signal_t signal, hsa_signal_value_t initial, uint32_t count,
                     const hsa_agent_t* consumers, uint64_t attributes);
  // Destructions: before the real call (another thread may be handed the
  // same handle as soon as it returns); the seq to retract if it fails, or 0.
  uint64_t signalDestroyed(const core::CallScope& scope, hsa_signal_t signal);
  // A host store or read-modify-write: opBegin before the real call (0: the
  // signal is not the program's), opDone after.
  uint64_t opBegin(hsa_signal_t signal);
  void opDone(uint64_t seq, const core::CallScope& scope, hsa_signal_t signal, uint8_t op, hsa_signal_value_t value,
              hsa_signal_value_t expected);
  // A wait that returned `observed` for signal `index` of `signals`; recorded
  // when that signal's condition holds.
  void waited(const core::CallScope& scope, uint8_t kind, uint32_t count, const hsa_signal_t* signals,
              const hsa_signal_condition_t* conditions, const hsa_signal_value_t* values, uint32_t index,
              hsa_signal_value_t observed);
  // A load: recorded when it sees a signal the device decrements fall.
  void loaded(const core::CallScope& scope, hsa_signal_t signal, hsa_signal_value_t value);
  void groupCreated(hsa_signal_group_t group, uint32_t count, const hsa_signal_t* signals);
  void groupWaited(const core::CallScope& scope, hsa_signal_group_t group, const hsa_signal_condition_t* conditions,
                   const hsa_signal_value_t* values, hsa_signal_t signal, hsa_signal_value_t observed);

  // --- queues and packets ---
  void queueCreated(const core::CallScope& scope, hsa_queue_t* queue, hsa_agent_t agent, uint32_t size,
                    hsa_queue_type32_t type, uint32_t privateSegmentSize, uint32_t groupSegmentSize);
  uint64_t queueDestroyed(const core::CallScope& scope, hsa_queue_t* queue);
  // From the intercept handler, before the packets go on: host memory
  // changes, then one record per packet.
  void packets(hsa_queue_t* queue, const void* packets, uint64_t count, uint64_t firstIndex);

  // --- code objects, executables, kernels ---
  void codeObject(const core::CallScope& scope, hsa_code_object_reader_t reader, const void* data, size_t size);
  uint64_t codeObjectDestroyed(const core::CallScope& scope, hsa_code_object_reader_t reader);
  void executableCreated(const core::CallScope& scope, hsa_executable_t executable, hsa_profile_t profile,
                         hsa_default_float_rounding_mode_t rounding, const char* options);
  void codeObjectLoaded(const core::CallScope& scope, hsa_executable_t executable, hsa_agent_t agent,
                        hsa_code_object_reader_t reader, const char* options);
  void executableFrozen(const core::CallScope& scope, hsa_executable_t executable);
  uint64_t executableDestroyed(const core::CallScope& scope, hsa_executable_t executable);

  // --- copies and fills (before the real call: the source is read now) ---
  uint64_t copying(const core::CallScope& scope, void* dst, hsa_agent_t dstAgent, const void* src,
                   hsa_agent_t srcAgent, size_t size, uint32_t numDeps, const hsa_signal_t* deps,
                   hsa_signal_t signal, bool synchronous);
  // After hsa_memory_copy returned: what it wrote for the program to read.
  void copiedSynchronously(const core::CallScope& scope, uint64_t seq, void* dst, size_t size);
  uint64_t filling(const core::CallScope& scope, void* dst, uint32_t value, size_t count);

  void unsupported(const core::CallScope& scope, std::string reason);
  // A record that was written before its call failed.
  void failed(uint64_t seq, const core::CallScope& scope);

  struct Impl;

 private:
  ReplayRecorder();
  std::unique_ptr<Impl> impl_;
};

// For the table entries replay records without a hook of their own
// (replay_calls.h): signal creation, operations, loads and waits, and the
// calls replay cannot reproduce.
void replayUnsupportedCall(const core::CallScope& scope, const char* name);

}  // namespace gtap::hsa
