// Writes a .gtap file: chunks are encoded, compressed, checksummed and written
// whole with one write each, so a process that dies leaves every earlier chunk
// readable.
#pragma once

#include <capnp/message.h>
#include <sys/uio.h>
#include <zstd.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "gtap/format/container.h"
#include "gtap/format/hash.h"
#include "gtap/format/schema/capture.capnp.h"

namespace gtap::format {

struct TimeRange {
  int64_t first = 0;
  int64_t last = 0;
};

class CaptureWriter {
 public:
  // Creates `path` exclusively (never follows a symbolic link, never replaces
  // an existing file) with mode 0600. Returns nullopt and sets `error` on failure.
  static std::unique_ptr<CaptureWriter> create(const std::string& path, std::string& error);
  // Adopts an already opened, empty file descriptor.
  explicit CaptureWriter(int fd, std::string path);
  ~CaptureWriter();
  CaptureWriter(const CaptureWriter&) = delete;
  CaptureWriter& operator=(const CaptureWriter&) = delete;

  // Each returns false after the first failed write; the file then keeps every
  // chunk written before the failure.
  bool writePreamble();
  bool writeMessage(schema::ChunkKind kind, capnp::MessageBuilder& message,
                    TimeRange times = {});
  // Stores `data` once per file under its XXH3-128 hash; repeated contents
  // cost nothing. Returns the hash.
  Hash128 writeBlob(const void* data, size_t size);
  // The same when the caller has the hash of exactly these bytes already.
  Hash128 writeBlob(const void* data, size_t size, const Hash128& hash);
  // Writes the trailer (chunk index and totals) and the footer, then closes.
  bool close(uint64_t eventsWritten, uint64_t eventsDropped, int64_t endHostNs,
             const std::string& closeReason);
  // Writes the trailer and footer as close() does but keeps the file open: a
  // process about to exec leaves a complete file. removeTrailer() takes them
  // back (the exec failed) and later chunks follow the last one before it.
  bool writeTrailer(uint64_t eventsWritten, uint64_t eventsDropped, int64_t endHostNs,
                    const std::string& closeReason);
  bool removeTrailer();
  // Forgets the file without writing or closing anything: the fd belongs to
  // another process's session (used in a forked child).
  void abandon();

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  const std::string& path() const { return path_; }
  uint64_t bytesWritten() const { return offset_; }
  uint64_t rawBytes() const { return rawBytes_; }

 private:
  bool writeChunk(uint16_t kind, const void* raw, size_t rawSize, TimeRange times);
  bool writeAll(const void* data, size_t size);
  bool writeAllv(struct iovec* pieces, size_t count);
  bool writeLargeBlobPart(capnp::MessageBuilder& message, const uint8_t* data, size_t size);
  bool compresses(const uint8_t* data, size_t size);

  struct IndexEntry {
    uint64_t offset;
    uint16_t kind;
    uint32_t storedSize;
    TimeRange times;
  };

  int fd_ = -1;
  std::string path_;
  std::string error_;
  uint64_t offset_ = 0;
  uint64_t rawBytes_ = 0;
  uint64_t trailerOffset_ = 0;
  size_t chunksBeforeTrailer_ = 0;
  uint64_t rawBytesBeforeTrailer_ = 0;
  ZSTD_CCtx* zstd_ = nullptr;
  std::vector<uint8_t> staging_;
  std::vector<uint8_t> flat_;   // a large compressible blob part put together
  std::vector<uint8_t> probe_;  // compressed samples, thrown away
  std::vector<IndexEntry> index_;
  std::unordered_set<Hash128, Hash128Hasher> blobs_;
};

}  // namespace gtap::format
