// What a replay stream holds, in totals: records per op, objects made,
// device operations, unsupported calls, scopes, and the external files it
// needs (a stream that names none and holds nothing unsupported is hermetic:
// the capture file is enough).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "gtap/readers/replay_fields.h"
#include "gtap/readers/replay_stream.h"

namespace gtap::readers {

struct ReplaySummary {
  uint64_t records = 0;
  uint64_t firstSeq = 0, lastSeq = 0;
  std::map<std::string, uint64_t> byOp;        // op name -> records
  std::map<std::string, uint64_t> objects;     // creating op -> objects made
  std::map<std::string, uint64_t> operations;  // device operation op -> appends
  uint64_t executes = 0;
  struct Unsupported {
    uint64_t seq;
    std::string function;
    std::string reason;
  };
  std::vector<Unsupported> unsupported;
  struct Scope {
    uint64_t begins = 0, ends = 0;
  };
  std::map<std::string, Scope> scopes;
  uint64_t inlineBytes = 0, blobBytes = 0, fileBytes = 0;  // payload bytes by where they live
  std::vector<FileReference> externalFiles;  // one per distinct path and identity
  // The capture alone is enough to run the stream again: no external file
  // and nothing recorded that replay cannot run.
  bool hermetic() const { return externalFiles.empty() && unsupported.empty(); }
};

ReplaySummary summarizeReplay(const Capture& capture, const ReplayStream& stream);

// "path (size 123, device 2049, inode 77, mtime 1700000000.123456789 s, digest HEX)".
std::string describeFileIdentity(const FileReference& f);

}  // namespace gtap::readers
