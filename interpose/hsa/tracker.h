// What gtap learns about an HSA program beyond its API calls: agents and the
// system clock, queues, executables and their kernels, every packet the
// program puts on its queues with the device times of what ran, copies, and
// memory. The hooks (hooks/*.cpp) and the queue intercept handler feed it; the
// writer drains it through a chunk producer.
#pragma once

#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>

#include <cstddef>
#include <cstdint>
#include <memory>

#include "call_scope.h"
#include "internal_error.h"
#include "profile_records.h"
#include "session.h"

namespace gtap::hsa {

using core::recordKernels;
using core::recordMemory;
using core::recordStacks;

class Tracker {
 public:
  static Tracker& get();

  // OnLoad: agents, memory pools, clock, the replay note. OnUnload: every
  // completion still outstanding is read or written as untimed.
  void runtimeLoaded();
  void runtimeUnloading();

  // --- queues ---
  // Called in place of the program's hsa_queue_create: in kernels mode the
  // queue is an intercept queue whose packets gtap sees on doorbell, with
  // profiling enabled; otherwise (or when the runtime refuses) a plain one.
  // `real` is the program's hsa_queue_create: told when the intercept queue
  // made stands for it (internal_error.h).
  hsa_status_t createQueue(core::RealCall<decltype(&::hsa_queue_create)>& real, hsa_agent_t agent, uint32_t size,
                           hsa_queue_type32_t type,
                           void (*callback)(hsa_status_t, hsa_queue_t*, void*), void* data,
                           uint32_t privateSegmentSize, uint32_t groupSegmentSize, hsa_queue_t** queue,
                           const core::CallScope& scope);
  void queueDestroying(hsa_queue_t* queue);

  // --- code objects, executables, kernels ---
  void readerFromMemory(hsa_code_object_reader_t reader, const void* data, size_t size);
  void readerFromFile(hsa_code_object_reader_t reader, hsa_file_t file);
  void readerDestroyed(hsa_code_object_reader_t reader);
  // The bytes a reader was made from (valid while the reader lives); false
  // when gtap did not see it made.
  bool readerBytes(hsa_code_object_reader_t reader, const void*& data, size_t& size);
  void executableCreated(hsa_executable_t executable, const core::CallScope& scope);
  void codeObjectLoaded(hsa_executable_t executable, hsa_agent_t agent, hsa_code_object_reader_t reader,
                        const core::CallScope& scope);
  void executableFrozen(hsa_executable_t executable, const core::CallScope& scope);
  void executableDestroyed(hsa_executable_t executable);

  // --- memory ---
  void allocatedFromPool(uint64_t pool, void* address, size_t size, const core::CallScope& scope);
  void freeing(void* address, const core::CallScope& scope);
  void locked(void* host, size_t size, void* agentAddress, const core::CallScope& scope);
  void unlocking(void* host, const core::CallScope& scope);

  // --- copies ---
  // The completion signal to hand the runtime for an async copy: gtap's, so
  // the copy is timed and the program's is signalled after it; or `program`
  // when gtap does not time it. A copy the runtime then refuses is reported
  // with asyncCopyFailed(token).
  hsa_signal_t asyncCopyStarting(hsa_signal_t program, const void* dst, hsa_agent_t dstAgent, const void* src,
                                 hsa_agent_t srcAgent, size_t size, const core::CallScope& scope, void*& token);
  void asyncCopyFailed(void* token);
  // hsa_memory_copy and hsa_amd_memory_fill: synchronous, no device time.
  void synchronousOp(bool fill, const void* dst, const void* src, size_t size, uint64_t beginTicks,
                     const core::CallScope& scope);

  // The device times gtap read for the last work whose completion signal was
  // the program's `signal` (kernel or barrier packets, or copies), so the
  // program's own profiling queries on it answer as without gtap.
  bool programTimes(hsa_signal_t signal, bool copy, uint64_t& start, uint64_t& end);
  void programSignalDestroyed(hsa_signal_t signal);

  // The exit work: reads what has completed, then leaves the runtime alone.
  void processExiting();
  // On the writer thread: what was gathered since the last call.
  void takeRecords(core::profile::Outbox& out);
  // Hands the written records' storage back for reuse.
  void returnRecords(core::profile::Outbox& out);

  struct Impl;

 private:
  Tracker();
  std::unique_ptr<Impl> impl_;
};

}  // namespace gtap::hsa
