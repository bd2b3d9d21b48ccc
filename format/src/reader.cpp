#include "gtap/format/reader.h"

#include <atomic>

#include "gtap/format/regular_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <cerrno>
#include <cstring>
#include <memory>

namespace gtap::format {

namespace {

template <typename T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

std::string at(const std::string& name, uint64_t offset) {
  return name + ": offset " + std::to_string(offset) + ": ";
}

capnp::ReaderOptions optionsFor(size_t words) {
  capnp::ReaderOptions options;
  // Bounded by the chunk's own size, so a hostile message cannot make traversal
  // (repeated far pointers to the same data, lists of empty structs) explode;
  // the factor leaves room for readers that get a field twice.
  options.traversalLimitInWords = words * 4 + 64;
  options.nestingLimit = 16;
  return options;
}

// What is impossible about a chunk header, or "": sizes past the format's
// limits or past what the codec can expand to, an unknown codec.
std::string headerProblem(const ChunkInfo& c) {
  auto sizes = [&] { return " (stored " + std::to_string(c.storedSize) + ", decoded " + std::to_string(c.rawSize) + ")"; };
  if (c.codec != Codec::none && c.codec != Codec::zstd)
    return "unknown codec " + std::to_string(static_cast<int>(c.codec));
  if (c.storedSize > kMaxStoredSize)
    return "stored size " + std::to_string(c.storedSize) + " exceeds the format's " + std::to_string(kMaxStoredSize);
  if (c.rawSize > kMaxRawSize)
    return "decoded size " + std::to_string(c.rawSize) + " exceeds the format's " + std::to_string(kMaxRawSize);
  if (c.rawSize == 0 || c.rawSize % sizeof(capnp::word) != 0)
    return "decoded size " + std::to_string(c.rawSize) + " is not a positive multiple of 8";
  if (c.codec == Codec::none && c.storedSize != c.rawSize) return "an uncompressed chunk's sizes differ" + sizes();
  if (c.codec == Codec::zstd && c.rawSize > uint64_t{c.storedSize} * kZstdMaxExpansion)
    return "more than zstd can expand its stored bytes to" + sizes();
  if (c.kind == static_cast<uint16_t>(schema::ChunkKind::BLOB) && c.rawSize > kMaxBlobPartSize + kBlobMessageOverhead)
    return "a blob chunk larger than any blob part (" + std::to_string(kMaxBlobPartSize) + " bytes)" + sizes();
  return {};
}

struct FreeDCtx {
  void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
};

}  // namespace

DecodedChunk::DecodedChunk(kj::Array<capnp::word> words, const ChunkInfo& info)
    : words_(kj::mv(words)), info_(info) {
  reader_ = std::make_unique<capnp::FlatArrayMessageReader>(words_.asPtr(),
                                                            optionsFor(words_.size()));
}

namespace {
std::atomic<ReadObserver*> readObserver{nullptr};
}  // namespace

void setReadObserver(ReadObserver* observer) { readObserver.store(observer, std::memory_order_release); }

CaptureReader::CaptureReader(const std::string& path) : name_(path) {
  struct stat st {};
  std::string error;
  int fd = openRegularFile(path, st, error);
  if (fd < 0) throw FormatError(path + ": cannot read as a capture: " + error);
  size_ = static_cast<size_t>(st.st_size);
  if (size_ > 0) {
    mapping_ = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (mapping_ == MAP_FAILED) {
      int err = errno;
      ::close(fd);
      mapping_ = nullptr;
      throw FormatError(path + ": cannot map: " + std::strerror(err));
    }
    data_ = static_cast<const uint8_t*>(mapping_);
  }
  ::close(fd);
  try {
    scan();
  } catch (...) {
    if (mapping_) ::munmap(mapping_, size_);
    throw;
  }
  if (ReadObserver* o = readObserver.load(std::memory_order_acquire)) {
    observed_ = true;
    o->opened(name_, size_);
  }
  // The walk checked every chunk's checksum, so touched every page: they are
  // given back, so that files opened together do not all stay resident.
  releasePages();
}

CaptureReader::CaptureReader(std::span<const uint8_t> data, std::string name)
    : name_(std::move(name)), data_(data.data()), size_(data.size()) {
  scan();
}

void CaptureReader::releasePages() const {
  // A private read-only mapping of a file: dropped pages come back from the
  // file unchanged.
  if (mapping_) ::madvise(mapping_, size_, MADV_DONTNEED);
  residentFrom_.store(0, std::memory_order_relaxed);
}

void CaptureReader::releaseBehind(uint64_t offset) const {
  if (!mapping_) return;
  static const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  uint64_t from = residentFrom_.load(std::memory_order_relaxed);
  if (offset < from) {
    // A new pass from an earlier chunk: its window starts here.
    residentFrom_.store(offset / page * page, std::memory_order_relaxed);
    return;
  }
  if (offset - from < kResidentWindow) return;
  uint64_t to = offset / page * page;
  ::madvise(static_cast<uint8_t*>(mapping_) + from, to - from, MADV_DONTNEED);
  residentFrom_.store(to, std::memory_order_relaxed);
}

CaptureReader::~CaptureReader() {
  if (observed_)
    if (ReadObserver* o = readObserver.load(std::memory_order_acquire)) o->closed(name_);
  if (mapping_) ::munmap(mapping_, size_);
}

void CaptureReader::scan() {
  recovery_.fileSize = size_;
  if (size_ >= 8 && std::memcmp(data_, "GTAPMRG", 8) == 0)
    throw FormatError(name_ + ": a merged file of several captures (gtap merge): the reports read it whole; replay, "
                      "dump and bench take one capture file");
  if (size_ < kPreambleSize || std::memcmp(data_, kPreambleMagic, 8) != 0)
    throw FormatError(name_ + ": not a gtap capture (no gtap magic at offset 0)");
  major_ = load<uint16_t>(data_ + 8);
  minor_ = load<uint16_t>(data_ + 10);
  if (major_ != kFormatMajor)
    throw FormatError(name_ + ": format version " + std::to_string(major_) + "." +
                      std::to_string(minor_) + " is not readable by this gtap (reads " +
                      std::to_string(kFormatMajor) + ".x)");

  uint64_t off = kPreambleSize;
  std::optional<uint64_t> footerTrailer;
  while (off < size_) {
    uint64_t left = size_ - off;
    if (left == kFooterSize && std::memcmp(data_ + off + 8, kFooterMagic, 8) == 0) {
      footerTrailer = load<uint64_t>(data_ + off);
      off += kFooterSize;
      break;
    }
    if (left < kChunkHeaderSize) {
      recovery_.stopReason = at(name_, off) + "truncated: " + std::to_string(left) +
                             " bytes where a 24-byte chunk header was expected";
      break;
    }
    const uint8_t* h = data_ + off;
    if (load<uint32_t>(h) != kChunkMagic) {
      recovery_.stopReason = at(name_, off) + "no chunk magic (damaged or not written)";
      break;
    }
    ChunkInfo c;
    c.offset = off;
    c.kind = load<uint16_t>(h + 4);
    c.codec = static_cast<Codec>(h[6]);
    c.storedSize = load<uint32_t>(h + 8);
    c.rawSize = load<uint32_t>(h + 12);
    uint64_t checksum = load<uint64_t>(h + 16);
    std::string bad = headerProblem(c);
    if (!bad.empty()) {
      recovery_.stopReason = at(name_, off) + chunkKindName(c.kind) + " chunk header out of range: " + bad;
      break;
    }
    if (c.storedSize > left - kChunkHeaderSize) {
      recovery_.stopReason = at(name_, off) + "truncated: " + chunkKindName(c.kind) + " chunk declares " +
                             std::to_string(c.storedSize) + " payload bytes, " +
                             std::to_string(left - kChunkHeaderSize) + " present";
      break;
    }
#ifndef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
    // (A fuzzing build skips this so the fuzzer reaches the decoders.)
    if (chunkChecksum(h, h + kChunkHeaderSize, c.storedSize) != checksum) {
      recovery_.stopReason = at(name_, off) + "checksum mismatch in " + chunkKindName(c.kind) +
                             " chunk (header or payload damaged)";
      break;
    }
#else
    (void)checksum;
#endif
    chunks_.push_back(c);
    off += kChunkHeaderSize + c.storedSize;
    releaseBehind(off);
  }
  recovery_.validBytes = off;
  if (recovery_.stopReason.empty()) {
    bool trailerLast = !chunks_.empty() &&
                       chunks_.back().kind == static_cast<uint16_t>(schema::ChunkKind::TRAILER);
    if (footerTrailer && trailerLast && chunks_.back().offset == *footerTrailer) {
      recovery_.closedCleanly = true;
    } else if (footerTrailer) {
      recovery_.stopReason = at(name_, size_ - kFooterSize) +
                             "footer does not point at a trailer chunk";
    } else {
      recovery_.stopReason =
          name_ + ": no trailer: the process did not close the file (killed or crashed)";
    }
  }
}

std::span<const uint8_t> CaptureReader::storedBytes(const ChunkInfo& c) const {
  return {data_ + c.offset + kChunkHeaderSize, c.storedSize};
}

DecodedChunk CaptureReader::decode(const ChunkInfo& c) const {
  releaseBehind(c.offset);
  if (observed_)
    if (ReadObserver* o = readObserver.load(std::memory_order_acquire))
      o->reached(name_, c.offset + kChunkHeaderSize + c.storedSize);
  auto stored = storedBytes(c);
  std::string where = at(name_, c.offset) + chunkKindName(c.kind) + " chunk: ";
  // Chunks in the index passed headerProblem(); these hold for any ChunkInfo.
  if (c.rawSize % sizeof(capnp::word) != 0 || c.rawSize == 0 || c.rawSize > kMaxRawSize)
    throw FormatError(where + "decoded size " + std::to_string(c.rawSize) + " is not a positive multiple of 8 within " +
                      std::to_string(kMaxRawSize));
  if (c.codec == Codec::zstd && c.kind != static_cast<uint16_t>(schema::ChunkKind::BLOB) &&
      c.rawSize > uint64_t{c.storedSize} * kMaxRecordExpansion)
    throw FormatError(where + "declares " + std::to_string(c.rawSize) + " decoded bytes from " +
                      std::to_string(c.storedSize) + " stored, more than " + std::to_string(kMaxRecordExpansion) +
                      " times: no record chunk compresses that well");
  size_t words = c.rawSize / sizeof(capnp::word);
  if (c.codec != Codec::zstd) {
    if (stored.size() != c.rawSize) throw FormatError(where + "uncompressed chunk sizes disagree");
    auto out = kj::heapArray<capnp::word>(words);
    std::memcpy(out.begin(), stored.data(), c.rawSize);
    return open(kj::mv(out), c, where);
  }
  unsigned long long declared = ZSTD_getFrameContentSize(stored.data(), stored.size());
  if (declared != c.rawSize)
    throw FormatError(where + "compressed frame declares " +
                      (declared == ZSTD_CONTENTSIZE_UNKNOWN || declared == ZSTD_CONTENTSIZE_ERROR
                           ? std::string("no size")
                           : std::to_string(declared) + " bytes") +
                      ", chunk header says " + std::to_string(c.rawSize));
  // The declared size is allocated up front, in one piece: it is bounded by
  // the stored size (headerProblem, and the record expansion above), and a
  // payload that does not really decode to it fails before the untouched
  // pages cost anything.
  auto buffer = kj::heapArray<capnp::word>(words);
  // One decompression context per thread, reused: a context costs more to
  // set up than a small chunk costs to decompress.
  thread_local std::unique_ptr<ZSTD_DCtx, FreeDCtx> dctx(ZSTD_createDCtx());
  size_t produced = dctx ? ZSTD_decompressDCtx(dctx.get(), buffer.begin(), c.rawSize, stored.data(), stored.size())
                         : ZSTD_decompress(buffer.begin(), c.rawSize, stored.data(), stored.size());
  if (ZSTD_isError(produced)) throw FormatError(where + "cannot decompress: " + ZSTD_getErrorName(produced));
  if (produced != c.rawSize)
    throw FormatError(where + "decodes to " + std::to_string(produced) + " bytes, the header says " +
                      std::to_string(c.rawSize));
  return open(kj::mv(buffer), c, where);
}

DecodedChunk CaptureReader::open(kj::Array<capnp::word> words, const ChunkInfo& c, const std::string& where) const {
  try {
    return DecodedChunk(kj::mv(words), c);
  } catch (const kj::Exception& e) {
    throw FormatError(where + "malformed message: " + e.getDescription().cStr());
  }
}

}  // namespace gtap::format
