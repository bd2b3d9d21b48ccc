#include "gtap/format/writer.h"

#include <capnp/serialize.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace gtap::format {

namespace {
constexpr int kZstdLevel = 1;
// API events are mostly time deltas, close to noise in their low bits: zstd's
// faster negative levels lose little on them and spend far fewer
// instructions per call (the writer's largest cost at high call rates).
constexpr int kApiEventsZstdLevel = -3;
constexpr uint16_t kApiEventsKind = 3;  // ChunkKind::API_EVENTS
}  // namespace

std::unique_ptr<CaptureWriter> CaptureWriter::create(const std::string& path, std::string& error) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    error = path + ": " + std::strerror(errno);
    return nullptr;
  }
  auto writer = std::make_unique<CaptureWriter>(fd, path);
  if (!writer->writePreamble()) {
    error = writer->error();
    return nullptr;
  }
  return writer;
}

CaptureWriter::CaptureWriter(int fd, std::string path) : fd_(fd), path_(std::move(path)) {
  zstd_ = ZSTD_createCCtx();
}

CaptureWriter::~CaptureWriter() {
  if (fd_ >= 0) ::close(fd_);
  ZSTD_freeCCtx(zstd_);
}

void CaptureWriter::abandon() {
  fd_ = -1;
  error_ = "abandoned";
}

bool CaptureWriter::writeAll(const void* data, size_t size) {
  if (!ok()) return false;
  auto* p = static_cast<const uint8_t*>(data);
  while (size > 0) {
    ssize_t n = ::write(fd_, p, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      error_ = path_ + ": write failed at offset " + std::to_string(offset_) + ": " +
               std::strerror(errno);
      return false;
    }
    p += n;
    size -= static_cast<size_t>(n);
    offset_ += static_cast<uint64_t>(n);
  }
  return true;
}

bool CaptureWriter::writePreamble() {
  uint8_t pre[kPreambleSize] = {};
  std::memcpy(pre, kPreambleMagic, 8);
  uint16_t major = kFormatMajor, minor = kFormatMinor;
  std::memcpy(pre + 8, &major, 2);
  std::memcpy(pre + 10, &minor, 2);
  return writeAll(pre, sizeof pre);
}

bool CaptureWriter::writeChunk(uint16_t kind, const void* raw, size_t rawSize, TimeRange times) {
  if (!ok()) return false;
  if (rawSize > kMaxRawSize) {
    error_ = path_ + ": chunk of " + std::to_string(rawSize) + " bytes exceeds the format limit";
    return false;
  }
  size_t bound = ZSTD_compressBound(rawSize);
  staging_.resize(kChunkHeaderSize + bound);
  uint8_t* payload = staging_.data() + kChunkHeaderSize;
  size_t stored = ZSTD_compressCCtx(zstd_, payload, bound, raw, rawSize,
                                    kind == kApiEventsKind ? kApiEventsZstdLevel : kZstdLevel);
  Codec codec = Codec::zstd;
  if (ZSTD_isError(stored) || stored >= rawSize) {
    // Incompressible (or a compressor failure): store as is.
    std::memcpy(payload, raw, rawSize);
    stored = rawSize;
    codec = Codec::none;
  }
  ChunkHeader header{kind, codec, static_cast<uint32_t>(stored), static_cast<uint32_t>(rawSize), 0};
  encodeChunkHeader(header, staging_.data());
  header.checksum = chunkChecksum(staging_.data(), payload, stored);
  encodeChunkHeader(header, staging_.data());
  uint64_t at = offset_;
  if (!writeAll(staging_.data(), kChunkHeaderSize + stored)) return false;
  index_.push_back({at, kind, static_cast<uint32_t>(stored), times});
  rawBytes_ += rawSize;
  // Keep a large one-off staging buffer from pinning memory for the whole run.
  if (staging_.capacity() > (8u << 20)) std::vector<uint8_t>().swap(staging_);
  return true;
}

bool CaptureWriter::writeMessage(schema::ChunkKind kind, capnp::MessageBuilder& message,
                                 TimeRange times) {
  kj::Array<capnp::word> words = capnp::messageToFlatArray(message);
  auto bytes = words.asBytes();
  return writeChunk(static_cast<uint16_t>(kind), bytes.begin(), bytes.size(), times);
}

Hash128 CaptureWriter::writeBlob(const void* data, size_t size) {
  return writeBlob(data, size, contentHash(data, size));
}

Hash128 CaptureWriter::writeBlob(const void* data, size_t size, const Hash128& hash) {
  if (!ok() || blobs_.count(hash)) return hash;
  auto* bytes = static_cast<const uint8_t*>(data);
  size_t offset = 0;
  do {
    size_t part = std::min<size_t>(kMaxBlobPartSize, size - offset);
    capnp::MallocMessageBuilder message;
    auto blob = message.initRoot<schema::Blob>();
    blob.setHashLow(hash.low);
    blob.setHashHigh(hash.high);
    blob.setTotalSize(size);
    blob.setOffset(offset);
    blob.setData(capnp::Data::Reader(bytes + offset, part));
    if (!writeMessage(schema::ChunkKind::BLOB, message)) return hash;
    offset += part;
  } while (offset < size);
  blobs_.insert(hash);
  return hash;
}

bool CaptureWriter::writeTrailer(uint64_t eventsWritten, uint64_t eventsDropped, int64_t endHostNs,
                                 const std::string& closeReason) {
  if (!ok()) return false;
  trailerOffset_ = offset_;
  chunksBeforeTrailer_ = index_.size();
  rawBytesBeforeTrailer_ = rawBytes_;
  capnp::MallocMessageBuilder message;
  auto trailer = message.initRoot<schema::Trailer>();
  auto chunks = trailer.initChunks(static_cast<unsigned>(index_.size()));
  for (size_t i = 0; i < index_.size(); ++i) {
    auto c = chunks[static_cast<unsigned>(i)];
    c.setOffset(index_[i].offset);
    c.setKind(index_[i].kind);
    c.setStoredSize(index_[i].storedSize);
    c.setFirstHostNs(index_[i].times.first);
    c.setLastHostNs(index_[i].times.last);
  }
  trailer.setEventsWritten(eventsWritten);
  trailer.setEventsDropped(eventsDropped);
  trailer.setEndHostNs(endHostNs);
  trailer.setCloseReason(closeReason);
  if (!writeMessage(schema::ChunkKind::TRAILER, message)) return false;
  uint8_t footer[kFooterSize];
  std::memcpy(footer, &trailerOffset_, 8);
  std::memcpy(footer + 8, kFooterMagic, 8);
  return writeAll(footer, sizeof footer);
}

bool CaptureWriter::removeTrailer() {
  if (fd_ < 0 || !ok()) return false;
  // The file is cut back to the end of the last chunk and writing goes on
  // from there, as if the trailer had never been written.
  if (::ftruncate(fd_, static_cast<off_t>(trailerOffset_)) != 0 ||
      ::lseek(fd_, static_cast<off_t>(trailerOffset_), SEEK_SET) < 0) {
    error_ = path_ + ": cannot take back the trailer at offset " + std::to_string(trailerOffset_) + ": " +
             std::strerror(errno);
    return false;
  }
  offset_ = trailerOffset_;
  index_.resize(chunksBeforeTrailer_);
  rawBytes_ = rawBytesBeforeTrailer_;
  return true;
}

bool CaptureWriter::close(uint64_t eventsWritten, uint64_t eventsDropped, int64_t endHostNs,
                          const std::string& closeReason) {
  if (fd_ < 0) return false;
  bool good = writeTrailer(eventsWritten, eventsDropped, endHostNs, closeReason);
  if (::close(fd_) != 0 && good) {
    error_ = path_ + ": close failed: " + std::strerror(errno);
    good = false;
  }
  fd_ = -1;
  return good;
}

}  // namespace gtap::format
