// The replay stream shared by the front ends: one process-wide sequence, the
// records waiting for the writer, the bytes to store once per file, and scope
// markers (from the program, the launcher's dispatch ranges, or a signal).
// docs/replay.md says what the records mean.
#pragma once

#include <capnp/message.h>

#include <cstddef>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gtap/format/file_identity.h"
#include "gtap/format/hash.h"
#include "gtap/format/schema/capture.capnp.h"

namespace gtap::core::replay {

inline constexpr uint32_t kNoFunction = 0xffffffffu;

using FileIdentity = format::FileIdentity;

struct Payload {
  enum class Kind : uint8_t { none, inlined, blob, file };
  Kind kind = Kind::none;
  uint64_t size = 0;
  std::vector<uint8_t> bytes;  // inlined
  format::Hash128 hash;        // blob
  uint64_t blobOffset = 0;
  uint64_t blobSize = 0;       // blob: the whole blob's size when it holds more than these bytes
  FileIdentity file;           // file: the reference; blob: where the bytes were read from
};

// A record waiting for the writer. The operation and its fields are written
// straight into the schema's typed struct (ReplayRecord's union, the one
// definition of each operation); seq, thread, function, payload and time are
// set when the writer copies it into a chunk.
struct Record {
  uint64_t seq = 0;
  uint32_t thread = 0;
  uint32_t function = kNoFunction;
  Payload payload;
  uint64_t ticks = 0;  // Clock::nowTicks() when recorded
  std::unique_ptr<capnp::MallocMessageBuilder> message;

  // The record's schema struct, made on first use: set the operation with
  // fields().initMemAlloc() and the like.
  schema::ReplayRecord::Builder fields() {
    // A small first segment: most records are a few words.
    if (!message) message = std::make_unique<capnp::MallocMessageBuilder>(32);
    return message->getRoot<schema::ReplayRecord>();
  }
};

// A command appended to a command list (a launch, a barrier, an event
// signalled, reset or waited for): plain values, written as its schema struct
// by the writer. On a regular list it is kept in the thread's buffer of
// replay records (thread_records.h): no lock, no allocation, no Cap'n Proto
// on the program's thread. Event ids follow the struct.
struct ListCommand {
  enum class Kind : uint8_t { launch, barrier, waitOnEvents, signalEvent, eventReset };
  Kind kind = Kind::launch;
  bool cooperative = false;  // launch
  bool hasGroups = false;    // launch
  uint32_t thread = 0;
  uint32_t function = kNoFunction;
  uint32_t eventCount = 0;  // launch and barrier: the waits; waitOnEvents: the events
  uint32_t groups[3] = {};
  uint64_t seq = 0;
  uint64_t ticks = 0;
  uint64_t list = 0, kernel = 0;
  uint64_t event = 0;  // launch and barrier: the signal; signalEvent, eventReset: the event
  uint64_t dispatch = ~uint64_t{0};
  uint64_t* events() { return reinterpret_cast<uint64_t*>(this + 1); }
  const uint64_t* events() const { return reinterpret_cast<const uint64_t*>(this + 1); }
};
static_assert(sizeof(ListCommand) % 8 == 0);

// Room for a command with `eventCount` event ids in the calling thread's
// buffer; null when it must take the locked path (add(listCommandRecord(...)))
// instead: no buffer, or a scope marker a signal asked for is due.
ListCommand* beginListCommand(uint32_t eventCount);
void commitListCommand(ListCommand* command);
// The command as a Record, for the locked path.
Record listCommandRecord(const ListCommand& command);

// Whether GTAP_MODE has "replay".
bool enabled();

// The next position in the stream.
uint64_t nextSeq();

// A new replay id (ReplayRecord fields marked $replayRef), unique in the
// file whichever runtime's object it names.
uint64_t newId();

// Queues a record for the writer. Also writes the scope markers a signal asked
// for since the last record.
void add(Record record);

// Work on a runtime replay does not run (HSA, the IREE HAL): the first time
// any runtime says so, one unsupported record saying `reason` and one line on
// stderr (unless GTAP_QUIET), so the user learns it while capturing. `once`
// is the caller's: set, it spares the call.
void notReplayed(std::atomic<bool>& once, const char* reason);

// Removes a record not yet written (a call recorded before it was made, that
// then failed). False when it was written already.
bool retract(uint64_t seq);

// Keeps bytes to be written as a blob (once per file, whatever the number of
// calls with the same bytes) and returns their content hash.
format::Hash128 keepBlob(const void* data, size_t size);
inline Payload blobPayload(const void* data, size_t size) {
  Payload p;
  p.kind = Payload::Kind::blob;
  p.size = size;
  p.hash = keepBlob(data, size);
  return p;
}
inline Payload inlinePayload(const void* data, size_t size) {
  Payload p;
  p.kind = Payload::Kind::inlined;
  p.size = size;
  if (data && size) p.bytes.assign(static_cast<const uint8_t*>(data), static_cast<const uint8_t*>(data) + size);
  return p;
}

// A scope marker from the program (gtap_scope_begin / gtap_scope_end).
void scopeMarker(bool begin, const std::string& name, uint32_t thread);

// Launcher scopes (GTAP_SCOPES): called with the dispatch numbers of the
// kernel launches a submission hands the device (first, count), before its
// seq is taken (begin markers) and after its record (end markers).
void dispatchesStarting(uint64_t first, uint64_t count, uint32_t thread);
void dispatchesDone(uint64_t first, uint64_t count, uint32_t thread);

}  // namespace gtap::core::replay
