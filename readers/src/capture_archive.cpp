#include "gtap/readers/capture_archive.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <ostream>

#include "gtap/format/container.h"
#include "gtap/format/reader.h"
#include "gtap/readers/parallel.h"

namespace gtap::readers {

namespace {

using format::FormatError;

uint64_t load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
uint32_t load32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
uint64_t padded(uint64_t n) { return (n + 7) & ~uint64_t{7}; }

std::string at(const std::string& path, uint64_t offset) {
  return path + ": merged file: at offset " + std::to_string(offset) + ": ";
}

void put64(std::ostream& out, uint64_t v) { out.write(reinterpret_cast<const char*>(&v), sizeof v); }
void put32(std::ostream& out, uint32_t v) { out.write(reinterpret_cast<const char*>(&v), sizeof v); }
void zeros(std::ostream& out, uint64_t n) {
  static const char pad[8] = {};
  out.write(pad, static_cast<std::streamsize>(n));
}

// Members longer than this are refused when merging (and when reading): no
// capture is; a length past it in an index is damage.
constexpr uint64_t kMaxNameLength = 4096;

}  // namespace

bool isCaptureArchive(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) return false;
  struct stat st {};
  char magic[8] = {};
  bool yes = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ::pread(fd, magic, 8, 0) == 8 &&
             std::memcmp(magic, kArchiveMagic, 8) == 0;
  ::close(fd);
  return yes;
}

CaptureArchive::CaptureArchive(const std::string& path) : path_(path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) throw FormatError(path + ": cannot read as a merged capture file: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw FormatError(path + ": not a regular file");
  }
  size_ = static_cast<size_t>(st.st_size);
  if (size_ < kArchiveHeaderSize + kArchiveFooterSize) {
    ::close(fd);
    throw FormatError(path + ": merged file of " + std::to_string(size_) + " bytes is too short for its header and "
                      "footer (cut short?)");
  }
  mapping_ = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (mapping_ == MAP_FAILED) {
    mapping_ = nullptr;
    throw FormatError(path + ": cannot map: " + std::strerror(errno));
  }
  data_ = static_cast<const uint8_t*>(mapping_);
  try {
    readIndex();
  } catch (...) {
    ::munmap(mapping_, size_);
    throw;
  }
}

CaptureArchive::CaptureArchive(std::span<const uint8_t> data, std::string name)
    : path_(std::move(name)), data_(data.data()), size_(data.size()) {
  if (size_ < kArchiveHeaderSize + kArchiveFooterSize)
    throw FormatError(path_ + ": merged file of " + std::to_string(size_) +
                      " bytes is too short for its header and footer (cut short?)");
  readIndex();
}

void CaptureArchive::readIndex() {
  if (std::memcmp(data_, kArchiveMagic, 8) != 0) throw FormatError(at(path_, 0) + "no merged-file magic");
  uint16_t major;
  std::memcpy(&major, data_ + 8, 2);
  if (major != 1)
    throw FormatError(at(path_, 8) + "version " + std::to_string(major) + " is not readable by this gtap (reads 1)");
  const uint8_t* footer = data_ + size_ - kArchiveFooterSize;
  if (std::memcmp(footer + 16, kArchiveEndMagic, 8) != 0)
    throw FormatError(at(path_, size_ - 8) + "no end magic: the file was cut short or is damaged");
  uint64_t indexOffset = load64(footer), count = load64(footer + 8);
  uint64_t indexEnd = size_ - kArchiveFooterSize;
  if (indexOffset < kArchiveHeaderSize || indexOffset > indexEnd)
    throw FormatError(at(path_, size_ - kArchiveFooterSize) + "index offset " + std::to_string(indexOffset) +
                      " is outside the file");
  // Each entry takes at least 24 bytes: a count beyond what fits is damage.
  if (count > (indexEnd - indexOffset) / 24)
    throw FormatError(at(path_, size_ - 16) + std::to_string(count) + " members do not fit in an index of " +
                      std::to_string(indexEnd - indexOffset) + " bytes");
  uint64_t pos = indexOffset, previousEnd = kArchiveHeaderSize;
  for (uint64_t i = 0; i < count; ++i) {
    if (indexEnd - pos < 20) throw FormatError(at(path_, pos) + "index entry " + std::to_string(i) + " is cut short");
    Member m;
    m.offset = load64(data_ + pos);
    m.size = load64(data_ + pos + 8);
    uint32_t nameLength = load32(data_ + pos + 16);
    if (nameLength > kMaxNameLength || nameLength > indexEnd - pos - 20)
      throw FormatError(at(path_, pos + 16) + "index entry " + std::to_string(i) + " has a name of " +
                        std::to_string(nameLength) + " bytes, past the index");
    m.name.assign(reinterpret_cast<const char*>(data_ + pos + 20), nameLength);
    if (m.offset < previousEnd || m.offset % 8 != 0 || m.size > indexOffset || m.offset > indexOffset - m.size)
      throw FormatError(at(path_, pos) + "member " + std::to_string(i) + " (" + m.name + ") at offset " +
                        std::to_string(m.offset) + ", " + std::to_string(m.size) +
                        " bytes, is not within the members' part of the file after the one before");
    previousEnd = m.offset + m.size;
    pos += padded(20 + uint64_t{nameLength});
    if (pos > indexEnd) throw FormatError(at(path_, pos) + "index entry " + std::to_string(i) + " runs past the index");
    members_.push_back(std::move(m));
  }
}

CaptureArchive::~CaptureArchive() {
  if (mapping_) ::munmap(mapping_, size_);
}

void CaptureArchive::releasePages(const Member& m) const {
  if (!mapping_ || m.size == 0) return;
  static const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  uint64_t from = m.offset / page * page, to = std::min<uint64_t>(size_, m.offset + m.size);
  ::madvise(static_cast<uint8_t*>(mapping_) + from, to - from, MADV_DONTNEED);
}

CaptureFile openCaptureFile(const std::string& path) {
  CaptureFile out;
  if (!isCaptureArchive(path)) {
    out.captures.push_back(std::make_unique<Capture>(path));
    return out;
  }
  out.archive = std::make_shared<const CaptureArchive>(path);
  for (const auto& m : out.archive->members())
    out.captures.push_back(std::make_unique<Capture>(out.archive->bytes(m), out.archive->memberPath(m)));
  return out;
}

size_t writeCaptureArchive(const std::vector<std::string>& inputs, std::ostream& out, bool checked) {
  struct Source {
    std::string name;
    std::shared_ptr<const CaptureArchive> archive;  // the member's archive, or none
    CaptureArchive::Member member;
    std::string path;  // a capture file's
  };
  // Every input checked before anything is written (several at once, gtap
  // -j): opening a capture throws naming the file when it is not one.
  if (!checked)
    forEachInParallel(inputs.size(), [&](size_t i) { openCaptureFile(inputs[i]); });
  std::vector<Source> sources;
  for (const auto& path : inputs) {
    std::string base = path.substr(path.find_last_of('/') + 1);
    if (isCaptureArchive(path)) {
      auto archive = std::make_shared<const CaptureArchive>(path);
      for (const auto& m : archive->members()) sources.push_back({m.name, archive, m, {}});
      continue;
    }
    if (base.size() > kMaxNameLength) base = base.substr(base.size() - kMaxNameLength);
    sources.push_back({base, nullptr, {}, path});
  }
  out.write(kArchiveMagic, 8);
  uint16_t version[2] = {1, 0};
  out.write(reinterpret_cast<const char*>(version), sizeof version);
  put32(out, 0);
  uint64_t pos = kArchiveHeaderSize;
  std::vector<CaptureArchive::Member> index;
  std::vector<char> buffer(1 << 20);
  for (const auto& s : sources) {
    CaptureArchive::Member m{s.name, pos, 0};
    if (s.archive) {
      auto bytes = s.archive->bytes(s.member);
      out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
      m.size = bytes.size();
    } else {
      std::ifstream in(s.path, std::ios::binary);
      if (!in) throw FormatError(s.path + ": cannot read: " + std::strerror(errno));
      while (in) {
        in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
        std::streamsize n = in.gcount();
        if (n <= 0) break;
        out.write(buffer.data(), n);
        m.size += static_cast<uint64_t>(n);
      }
      if (in.bad()) throw FormatError(s.path + ": reading failed");
    }
    zeros(out, padded(m.size) - m.size);
    pos += padded(m.size);
    index.push_back(std::move(m));
  }
  uint64_t indexOffset = pos;
  for (const auto& m : index) {
    put64(out, m.offset);
    put64(out, m.size);
    put32(out, static_cast<uint32_t>(m.name.size()));
    out.write(m.name.data(), static_cast<std::streamsize>(m.name.size()));
    zeros(out, padded(20 + m.name.size()) - (20 + m.name.size()));
  }
  put64(out, indexOffset);
  put64(out, index.size());
  out.write(kArchiveEndMagic, 8);
  return index.size();
}

}  // namespace gtap::readers
