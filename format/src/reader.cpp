#include "gtap/format/reader.h"

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
  // (e.g. repeated far pointers to the same data) explode.
  options.traversalLimitInWords = words * 4 + 1024;
  options.nestingLimit = 16;
  return options;
}

}  // namespace

DecodedChunk::DecodedChunk(kj::Array<capnp::word> words, const ChunkInfo& info)
    : words_(kj::mv(words)), info_(info) {
  reader_ = std::make_unique<capnp::FlatArrayMessageReader>(words_.asPtr(),
                                                            optionsFor(words_.size()));
}

CaptureReader::CaptureReader(const std::string& path) : name_(path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw FormatError(path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw FormatError(path + ": not a regular file");
  }
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
}

CaptureReader::CaptureReader(std::span<const uint8_t> data, std::string name)
    : name_(std::move(name)), data_(data.data()), size_(data.size()) {
  scan();
}

CaptureReader::~CaptureReader() {
  if (mapping_) ::munmap(mapping_, size_);
}

void CaptureReader::scan() {
  recovery_.fileSize = size_;
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
    if (c.storedSize > kMaxStoredSize || c.rawSize > kMaxRawSize ||
        (c.codec != Codec::none && c.codec != Codec::zstd)) {
      recovery_.stopReason = at(name_, off) + "chunk header out of range (stored " +
                             std::to_string(c.storedSize) + ", raw " +
                             std::to_string(c.rawSize) + ", codec " +
                             std::to_string(static_cast<int>(c.codec)) + ")";
      break;
    }
    if (c.storedSize > left - kChunkHeaderSize) {
      recovery_.stopReason = at(name_, off) + "truncated: chunk declares " +
                             std::to_string(c.storedSize) + " payload bytes, " +
                             std::to_string(left - kChunkHeaderSize) + " present";
      break;
    }
#ifndef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
    // (A fuzzing build skips this so the fuzzer reaches the decoders.)
    if (chunkChecksum(h, h + kChunkHeaderSize, c.storedSize) != checksum) {
      recovery_.stopReason = at(name_, off) + "checksum mismatch in chunk of kind " +
                             std::to_string(c.kind);
      break;
    }
#else
    (void)checksum;
#endif
    chunks_.push_back(c);
    off += kChunkHeaderSize + c.storedSize;
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
  auto stored = storedBytes(c);
  if (c.rawSize % sizeof(capnp::word) != 0 || c.rawSize == 0)
    throw FormatError(at(name_, c.offset) + "chunk message size " + std::to_string(c.rawSize) +
                      " is not a positive multiple of 8");
  // The sizes are checked against the stored bytes before the message is
  // allocated: a damaged header alone must not cost rawSize bytes.
  if (c.codec == Codec::zstd) {
    unsigned long long declared = ZSTD_getFrameContentSize(stored.data(), stored.size());
    if (declared != c.rawSize)
      throw FormatError(at(name_, c.offset) + "compressed frame declares " +
                        std::to_string(declared) + " bytes, chunk header says " +
                        std::to_string(c.rawSize));
  } else if (stored.size() != c.rawSize) {
    throw FormatError(at(name_, c.offset) + "uncompressed chunk sizes disagree");
  }
  auto words = kj::heapArray<capnp::word>(c.rawSize / sizeof(capnp::word));
  auto* out = reinterpret_cast<uint8_t*>(words.begin());
  if (c.codec == Codec::zstd) {
    // One decompression context per thread, reused: a context costs more to
    // set up than a small chunk costs to decompress.
    struct FreeDCtx {
      void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
    };
    thread_local std::unique_ptr<ZSTD_DCtx, FreeDCtx> dctx(ZSTD_createDCtx());
    size_t n = dctx ? ZSTD_decompressDCtx(dctx.get(), out, c.rawSize, stored.data(), stored.size())
                    : ZSTD_decompress(out, c.rawSize, stored.data(), stored.size());
    if (ZSTD_isError(n) || n != c.rawSize)
      throw FormatError(at(name_, c.offset) + "cannot decompress chunk: " +
                        (ZSTD_isError(n) ? ZSTD_getErrorName(n) : "short output"));
  } else {
    std::memcpy(out, stored.data(), c.rawSize);
  }
  try {
    return DecodedChunk(kj::mv(words), c);
  } catch (const kj::Exception& e) {
    throw FormatError(at(name_, c.offset) + "malformed message: " + e.getDescription().cStr());
  }
}

}  // namespace gtap::format
