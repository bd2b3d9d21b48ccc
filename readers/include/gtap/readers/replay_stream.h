// A capture's replay stream (docs/replay.md): every `replay` record in seq
// order, and where the file keeps each blob, so that dump can name byte
// ranges and replay can assemble payloads without rescanning the file.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "gtap/format/file_identity.h"
#include "gtap/format/hash.h"
#include "gtap/readers/capture.h"

namespace gtap::readers {

using FileReference = format::FileIdentity;

struct ReplayPayload {
  enum class Kind { none, inlineBytes, blob, file };
  Kind kind = Kind::none;
  uint64_t size = 0;                 // bytes the payload stands for
  std::vector<uint8_t> bytes;        // inlineBytes
  format::Hash128 blob;              // blob
  uint64_t blobSize = 0;             // blob: BlobRef.size as recorded
  uint64_t blobOffset = 0;           // blob: where the payload starts in it
  FileReference file;                // file
  std::optional<FileReference> origin;  // blob: the file the bytes were read from
};

// Which operation a record is: the active member of the schema's union
// (format/schema/capture.capnp, ReplayRecord), whose struct is the one
// definition of the operation's fields.
using ReplayOp = schema::ReplayRecord::Which;

struct ReplayRecord {
  uint64_t seq = 0;
  uint32_t thread = 0;
  ReplayOp op = ReplayOp::UNSUPPORTED;
  uint32_t function = ~0u;
  ReplayPayload payload;
  int64_t hostNs = 0;
  // The record as stored (its operation's struct: fields.getMemAlloc() and the
  // like); valid while the ReplayStream that holds it lives. Records of
  // formats 1.0-1.1 are converted to this form on load.
  schema::ReplayRecord::Reader fields;
};

using BlobPart = format::BlobPart;

struct ReplayStream {
  std::vector<ReplayRecord> records;  // by seq
  std::vector<std::shared_ptr<const void>> storage;  // what the records' `fields` point into
  format::BlobIndex blobs;
  bool complete = true;       // the file was closed cleanly: nothing after the last record was lost
  std::string cutDescription; // when not complete: where the file stops and why
  std::vector<std::string> notes;  // replay chunks that failed to decode

  // The index of the record with this seq, or nullopt.
  std::optional<size_t> find(uint64_t seq) const;
  // The blob's bytes assembled from its parts (only those chunks are decoded)
  // and checked against its hash, or nullopt when the file does not hold all
  // of it or it is damaged (Capture::checkedBlob says why).
  std::optional<std::vector<uint8_t>> blob(const Capture& capture, const format::Hash128& hash) const;
};

class ReplayStreamError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Reads every replay record of `capture`. Throws ReplayStreamError naming the
// file when it holds none.
ReplayStream loadReplayStream(const Capture& capture);

// The operation's name as the schema spells it ("launchKernel"), or "opN" for
// one this build does not know.
std::string replayOpName(ReplayOp op);
// "seq 12 (launchKernel)": how errors name a record.
std::string recordLabel(const ReplayRecord& r);

}  // namespace gtap::readers
