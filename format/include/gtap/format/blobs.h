// A capture's blobs: where each part is stored, and a blob put together from
// its parts and checked against its name (the XXH3-128 of its content).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "gtap/format/hash.h"
#include "gtap/format/reader.h"

namespace gtap::format {

// One stored part of a blob: the chunk holding it and which bytes of the blob
// it carries, as the part declares them.
struct BlobPart {
  ChunkInfo chunk;
  uint64_t blobOffset = 0;
  uint64_t length = 0;
  uint64_t totalSize = 0;  // of the whole blob
  // The bytes of the file holding the part: its whole chunk, header included
  // (compressed when chunk.codec says so).
  uint64_t fileOffset() const { return chunk.offset; }
  uint64_t fileLength() const { return kChunkHeaderSize + chunk.storedSize; }
};

using BlobIndex = std::unordered_map<Hash128, std::vector<BlobPart>, Hash128Hasher>;

// Indexes every blob chunk of `reader`; chunks that fail to decode are
// described in `notes` and left out.
BlobIndex indexBlobs(const CaptureReader& reader, std::vector<std::string>& notes);

// Checks that `parts` describe one whole blob before anything is allocated:
// they agree on its total size, which their lengths (bounded by the file)
// cover exactly once, without gap or overlap (a part stored twice counts
// once). Returns "" or what is wrong.
std::string blobLayoutProblem(const Hash128& hash, const std::vector<BlobPart>& parts);

// Puts the blob together and, unless `alreadyVerified`, checks that its bytes
// hash to `hash`. Throws FormatError naming the file, the blob and the
// chunk(s) on any mismatch.
std::vector<uint8_t> assembleBlob(const CaptureReader& reader, const Hash128& hash,
                                  const std::vector<BlobPart>& parts, bool alreadyVerified);

}  // namespace gtap::format
