// Opens a .gtap file read-only (memory-mapped), validates every chunk header and
// checksum, and decodes chunks on demand. A file cut short or damaged opens
// with every whole chunk before the first bad one; recovery() says what was lost.
#pragma once

#include <capnp/serialize.h>
#include <kj/array.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gtap/format/container.h"
#include "gtap/format/schema/capture.capnp.h"

namespace gtap::format {

struct ChunkInfo {
  uint64_t offset = 0;  // of the chunk header
  uint16_t kind = 0;
  Codec codec = Codec::none;
  uint32_t storedSize = 0;
  uint32_t rawSize = 0;
};

struct Recovery {
  bool closedCleanly = false;   // trailer and footer present and consistent
  uint64_t fileSize = 0;
  uint64_t validBytes = 0;      // preamble + whole good chunks (+ footer)
  std::string stopReason;       // why the walk stopped early; empty when clean
};

// A decoded chunk: owns the decompressed words and the message reader.
class DecodedChunk {
 public:
  DecodedChunk(kj::Array<capnp::word> words, const ChunkInfo& info);
  template <typename Root>
  typename Root::Reader root() {
    return reader_->getRoot<Root>();
  }
  const ChunkInfo& info() const { return info_; }

 private:
  kj::Array<capnp::word> words_;
  std::unique_ptr<capnp::FlatArrayMessageReader> reader_;
  ChunkInfo info_;
};

// Told how far reading has come through each capture file, for progress
// shown to a person: set once, before files are opened. Called from any
// thread that decodes.
class ReadObserver {
 public:
  virtual ~ReadObserver() = default;
  virtual void opened(const std::string& path, uint64_t fileSize) = 0;
  // A chunk ending at `endOffset` was decoded.
  virtual void reached(const std::string& path, uint64_t endOffset) = 0;
  virtual void closed(const std::string& path) = 0;
};
// nullptr: none (the default).
void setReadObserver(ReadObserver* observer);

class CaptureReader {
 public:
  // Throws FormatError when the file cannot be opened or is not a capture at all.
  explicit CaptureReader(const std::string& path);
  // Reads from memory (tests, fuzzing); `data` must outlive the reader.
  CaptureReader(std::span<const uint8_t> data, std::string name);
  ~CaptureReader();
  CaptureReader(const CaptureReader&) = delete;
  CaptureReader& operator=(const CaptureReader&) = delete;

  const std::string& path() const { return name_; }
  uint16_t formatMajor() const { return major_; }
  uint16_t formatMinor() const { return minor_; }
  const std::vector<ChunkInfo>& chunks() const { return chunks_; }
  const Recovery& recovery() const { return recovery_; }

  // Decompresses and opens one chunk. Throws FormatError naming the file and
  // the chunk's offset when its contents are malformed.
  DecodedChunk decode(const ChunkInfo& chunk) const;
  std::span<const uint8_t> storedBytes(const ChunkInfo& chunk) const;
  // Gives the pages of the file read so far back to the system (they are
  // read again from the file if touched again): for readers that go through
  // many files, so that memory does not grow with the files read.
  void releasePages() const;

 private:
  void scan();
  // A mapped file read front to back (the open's checksum walk, and each pass
  // of a reader over the chunks) holds at most this much of it resident: the
  // pages behind the chunk being read are given back as it advances.
  static constexpr uint64_t kResidentWindow = 64ull << 20;
  void releaseBehind(uint64_t offset) const;
  DecodedChunk open(kj::Array<capnp::word> words, const ChunkInfo& chunk, const std::string& where) const;

  std::string name_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  void* mapping_ = nullptr;
  uint16_t major_ = 0;
  uint16_t minor_ = 0;
  std::vector<ChunkInfo> chunks_;
  Recovery recovery_;
  bool observed_ = false;  // opened() was said to the read observer
  // Where the pages not yet given back begin (releaseBehind); threads
  // reading one file at once may race on it harmlessly (a page given back
  // early is read from the file again).
  mutable std::atomic<uint64_t> residentFrom_{0};
};

}  // namespace gtap::format
