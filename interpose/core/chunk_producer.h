// Front ends that keep records of their own (objects, device work, memory)
// hand them to the writer through a producer called at every flush, on the
// writer thread.
#pragma once

#include <capnp/message.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "gtap/format/hash.h"
#include "gtap/format/schema/capture.capnp.h"

namespace gtap::core {

class ChunkSink {
 public:
  virtual ~ChunkSink() = default;
  virtual bool write(schema::ChunkKind kind, capnp::MessageBuilder& message) = 0;
  // Stores bytes once per file; returns their hash.
  virtual format::Hash128 writeBlob(const void* data, size_t size) = 0;
  // The same when the caller has the hash of exactly these bytes (contentHash).
  virtual format::Hash128 writeBlob(const void* data, size_t size, const format::Hash128& hash) = 0;
  // Converts Clock::nowTicks() values to host ns (the file's clock domain).
  virtual int64_t toHostNs(uint64_t ticks) const = 0;
  // The file's CPU stacks, shared by every front end so ids are unique in the
  // file: the id of `frames` (0 for an empty stack). writeNewStacks() writes
  // the stacks interned since its last call, and the host modules they need,
  // before the records that refer to them.
  virtual uint32_t internStack(const std::vector<uint64_t>& frames) = 0;
  virtual void writeNewStacks() = 0;
};

// `final` is true on the last flush before the file closes.
using ChunkProducer = void (*)(ChunkSink& sink, bool final);

// From constructors only (before any session starts).
void registerChunkProducer(ChunkProducer producer);

// Work a front end wants done on a program thread just before the process
// exits (at the atexit flush), e.g. reading device times while the runtime is
// still up.
using ExitWork = void (*)();
void registerExitWork(ExitWork work);

// The calling thread's gtap id (as in ThreadDef), registering it if needed;
// ~0u when no session is recording.
uint32_t currentThreadId();

}  // namespace gtap::core
