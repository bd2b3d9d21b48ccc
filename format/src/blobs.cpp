#include "gtap/format/blobs.h"

#include <kj/exception.h>

#include <algorithm>
#include <cstring>

namespace gtap::format {

namespace {

std::string chunksOf(const std::vector<BlobPart>& parts) {
  std::string s = parts.size() == 1 ? "chunk at offset " : "chunks at offsets ";
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i == 8) return s + ", ...";
    s += (i ? ", " : "") + std::to_string(parts[i].chunk.offset);
  }
  return s;
}

// The parts in blob order, a part stored twice (same place, same length) kept once.
std::vector<const BlobPart*> ordered(const std::vector<BlobPart>& parts) {
  std::vector<const BlobPart*> out;
  out.reserve(parts.size());
  for (const auto& p : parts) out.push_back(&p);
  std::stable_sort(out.begin(), out.end(), [](const BlobPart* a, const BlobPart* b) {
    return a->blobOffset != b->blobOffset ? a->blobOffset < b->blobOffset : a->length < b->length;
  });
  out.erase(std::unique(out.begin(), out.end(),
                        [](const BlobPart* a, const BlobPart* b) {
                          return a->blobOffset == b->blobOffset && a->length == b->length;
                        }),
            out.end());
  return out;
}

}  // namespace

BlobIndex indexBlobs(const CaptureReader& reader, std::vector<std::string>& notes) {
  BlobIndex index;
  for (const auto& c : reader.chunks()) {
    if (c.kind != static_cast<uint16_t>(schema::ChunkKind::BLOB)) continue;
    try {
      auto decoded = reader.decode(c);
      auto b = decoded.root<schema::Blob>();
      index[{b.getHashLow(), b.getHashHigh()}].push_back({c, b.getOffset(), b.getData().size(), b.getTotalSize()});
    } catch (const FormatError& e) {
      notes.push_back(e.what());
    } catch (const kj::Exception& e) {
      notes.push_back(reader.path() + ": offset " + std::to_string(c.offset) + ": malformed blob chunk: " +
                      e.getDescription().cStr());
    }
  }
  return index;
}

std::string blobLayoutProblem(const Hash128& hash, const std::vector<BlobPart>& parts) {
  std::string blob = "blob " + hash.hex() + " (" + chunksOf(parts) + "): ";
  if (parts.empty()) return blob + "no part of it is in the file";
  uint64_t total = parts.front().totalSize;
  for (const auto& p : parts)
    if (p.totalSize != total)
      return blob + "its parts disagree on its size (" + std::to_string(total) + " and " +
             std::to_string(p.totalSize) + " bytes, chunk at offset " + std::to_string(p.chunk.offset) + ")";
  // The parts' lengths are bytes really in the file; covering `total`
  // without gap or overlap bounds it by the file before it is allocated.
  uint64_t covered = 0;
  for (const BlobPart* p : ordered(parts)) {
    if (p->blobOffset != covered)
      return blob + (p->blobOffset < covered ? "parts overlap" : "bytes are missing") + " at blob offset " +
             std::to_string(std::min(p->blobOffset, covered)) + " (chunk at offset " +
             std::to_string(p->chunk.offset) + " holds " + std::to_string(p->blobOffset) + "+" +
             std::to_string(p->length) + ")";
    if (p->length > total - covered)
      return blob + "chunk at offset " + std::to_string(p->chunk.offset) + " holds " +
             std::to_string(p->blobOffset) + "+" + std::to_string(p->length) + ", past the blob's declared " +
             std::to_string(total) + " bytes";
    covered += p->length;
  }
  if (covered != total)
    return blob + "declares " + std::to_string(total) + " bytes, its parts in the file hold " +
           std::to_string(covered);
  return {};
}

std::vector<uint8_t> assembleBlob(const CaptureReader& reader, const Hash128& hash,
                                  const std::vector<BlobPart>& parts, bool alreadyVerified) {
  std::string problem = blobLayoutProblem(hash, parts);
  if (!problem.empty()) throw FormatError(reader.path() + ": " + problem);
  std::vector<uint8_t> bytes(parts.front().totalSize);
  for (const BlobPart* p : ordered(parts)) {
    try {
      auto decoded = reader.decode(p->chunk);
      auto data = decoded.root<schema::Blob>().getData();
      // The index was made from this very chunk; a second decode agrees.
      if (data.size() != p->length) throw FormatError("part length changed");
      std::memcpy(bytes.data() + p->blobOffset, data.begin(), data.size());
    } catch (const kj::Exception& e) {
      throw FormatError(reader.path() + ": offset " + std::to_string(p->chunk.offset) + ": blob " + hash.hex() +
                        ": malformed blob chunk: " + e.getDescription().cStr());
    }
  }
  if (!alreadyVerified) {
    Hash128 actual = contentHash(bytes.data(), bytes.size());
    if (!(actual == hash))
      throw FormatError(reader.path() + ": blob " + hash.hex() + " (" + chunksOf(parts) +
                        ") is damaged: its bytes hash to " + actual.hex());
  }
  return bytes;
}

}  // namespace gtap::format
