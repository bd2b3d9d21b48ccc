#include "gtap/format/writer.h"

#include <capnp/serialize.h>
#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>
#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

namespace gtap::format {

namespace {
constexpr int kZstdLevel = 1;
// Blob parts at least this large are written from where they lie (no copy into
// the message) and compressed only when samples of them compress.
constexpr size_t kLargeBlobPart = 256u << 10;
constexpr size_t kProbeSample = 16u << 10;
constexpr unsigned kProbeSamples = 4;

size_t wordsFor(size_t bytes) { return (bytes + 7) / 8; }
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
    bool written;
    if (part >= kLargeBlobPart && reinterpret_cast<uintptr_t>(bytes + offset) % 8 == 0) {
      // The bytes become a segment of their own, read where they lie.
      blob.adoptData(message.getOrphanage().referenceExternalData(capnp::Data::Reader(bytes + offset, part)));
      written = writeLargeBlobPart(message, bytes + offset, part);
    } else {
      blob.setData(capnp::Data::Reader(bytes + offset, part));
      written = writeMessage(schema::ChunkKind::BLOB, message);
    }
    if (!written) return hash;
    offset += part;
  } while (offset < size);
  blobs_.insert(hash);
  return hash;
}

bool CaptureWriter::compresses(const uint8_t* data, size_t size) {
  // Samples spread over the bytes: large uploads are mostly all of a kind
  // (zeros, text, floats, or bytes already compressed).
  size_t sampled = 0, stored = 0;
  probe_.resize(ZSTD_compressBound(kProbeSample));
  for (unsigned i = 0; i < kProbeSamples; ++i) {
    size_t at = (size - kProbeSample) / (kProbeSamples - 1) * i;
    size_t n = ZSTD_compressCCtx(zstd_, probe_.data(), probe_.size(), data + at, kProbeSample, kZstdLevel);
    if (ZSTD_isError(n)) return true;
    sampled += kProbeSample;
    stored += n;
  }
  return stored < sampled - sampled / 8;
}

bool CaptureWriter::writeLargeBlobPart(capnp::MessageBuilder& message, const uint8_t* data, size_t size) {
  auto segments = message.getSegmentsForOutput();
  // Cap'n Proto's flat array: the segment count less one and each segment's
  // size in words (u32s, padded to a word), then the segments.
  std::vector<uint32_t> table((segments.size() + 2) & ~size_t{1}, 0);
  table[0] = static_cast<uint32_t>(segments.size() - 1);
  size_t rawSize = table.size() * 4;
  for (size_t i = 0; i < segments.size(); ++i) {
    table[i + 1] = static_cast<uint32_t>(segments[i].size());
    rawSize += segments[i].size() * 8;
  }
  // The data segment's last word, when the bytes end inside it: from a padded
  // copy, so nothing past the bytes is read and the padding is zeros.
  uint64_t lastWord = 0;
  size_t whole = size & ~size_t{7};
  std::memcpy(&lastWord, data + whole, size - whole);
  std::vector<iovec> pieces;
  pieces.reserve(segments.size() + 4);
  pieces.push_back({nullptr, kChunkHeaderSize});
  pieces.push_back({table.data(), table.size() * 4});
  for (auto segment : segments) {
    if (reinterpret_cast<const uint8_t*>(segment.begin()) == data && segment.size() == wordsFor(size)) {
      pieces.push_back({const_cast<uint8_t*>(data), whole});
      if (whole != size) pieces.push_back({&lastWord, 8});
    } else {
      pieces.push_back({const_cast<capnp::word*>(segment.begin()), segment.size() * 8});
    }
  }
  if (rawSize > kMaxRawSize) {
    error_ = path_ + ": chunk of " + std::to_string(rawSize) + " bytes exceeds the format limit";
    return false;
  }
  if (compresses(data, size)) {
    // Compressible: put together and compressed as any chunk.
    flat_.resize(rawSize);
    size_t at = 0;
    for (size_t i = 1; i < pieces.size(); ++i) {
      std::memcpy(flat_.data() + at, pieces[i].iov_base, pieces[i].iov_len);
      at += pieces[i].iov_len;
    }
    bool good = writeChunk(static_cast<uint16_t>(schema::ChunkKind::BLOB), flat_.data(), rawSize, {});
    if (flat_.capacity() > (8u << 20)) std::vector<uint8_t>().swap(flat_);
    return good;
  }
  // Stored as is, written from the pieces: no copy of the bytes in gtap.
  uint8_t header[kChunkHeaderSize];
  ChunkHeader h{static_cast<uint16_t>(schema::ChunkKind::BLOB), Codec::none, static_cast<uint32_t>(rawSize),
                static_cast<uint32_t>(rawSize), 0};
  encodeChunkHeader(h, header);
  XXH3_state_t state;
  XXH3_64bits_reset(&state);
  XXH3_64bits_update(&state, header, 16);
  for (size_t i = 1; i < pieces.size(); ++i) XXH3_64bits_update(&state, pieces[i].iov_base, pieces[i].iov_len);
  h.checksum = XXH3_64bits_digest(&state);
  encodeChunkHeader(h, header);
  pieces[0].iov_base = header;
  uint64_t at = offset_;
  if (!writeAllv(pieces.data(), pieces.size())) return false;
  index_.push_back({at, h.kind, h.storedSize, {}});
  rawBytes_ += rawSize;
  return true;
}

bool CaptureWriter::writeAllv(iovec* pieces, size_t count) {
  if (!ok()) return false;
  while (count > 0) {
    ssize_t n = ::writev(fd_, pieces, static_cast<int>(std::min<size_t>(count, IOV_MAX)));
    if (n < 0) {
      if (errno == EINTR) continue;
      error_ = path_ + ": write failed at offset " + std::to_string(offset_) + ": " + std::strerror(errno);
      return false;
    }
    offset_ += static_cast<uint64_t>(n);
    auto left = static_cast<size_t>(n);
    while (count > 0 && left >= pieces->iov_len) {
      left -= pieces->iov_len;
      ++pieces;
      --count;
    }
    if (count > 0) {
      pieces->iov_base = static_cast<uint8_t*>(pieces->iov_base) + left;
      pieces->iov_len -= left;
    }
  }
  return true;
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
