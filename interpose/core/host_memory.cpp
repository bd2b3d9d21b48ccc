#include "host_memory.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "clock.h"
#include "config.h"
#include "log.h"

namespace gtap::core::replay {

uint64_t zeroPageHash(size_t n) {
  static const std::vector<uint8_t> zeros(kPage, 0);
  static const uint64_t full = XXH3_64bits(zeros.data(), kPage);
  return n == kPage ? full : XXH3_64bits(zeros.data(), n);
}

uint64_t pageHash(const void* p, size_t n) { return XXH3_64bits(p, n); }

void PageHashes::ensure(uint64_t size) {
  size_t pages = static_cast<size_t>((size + kPage - 1) / kPage);
  if (hashes.size() == pages) return;
  hashes.resize(pages);
  for (size_t i = 0; i < pages; ++i)
    hashes[i] = zeroPageHash(static_cast<size_t>(std::min<uint64_t>(kPage, size - i * kPage)));
}

void PageHashes::refresh(const uint8_t* base, uint64_t size, uint64_t offset, uint64_t length) {
  if (hashes.empty()) return;
  for (size_t i = static_cast<size_t>((offset + kPage - 1) / kPage); i < hashes.size(); ++i) {
    uint64_t first = i * kPage, len = std::min<uint64_t>(kPage, size - first);
    if (first + len > offset + length) break;
    hashes[i] = pageHash(base + first, static_cast<size_t>(len));
  }
}

void addAllocationData(uint32_t thread, uint64_t id, uint64_t address, uint64_t offset, uint64_t length) {
  Record r;
  r.seq = nextSeq();
  r.thread = thread;
  auto h = r.fields().initHostData();
  h.setAllocation(id);
  h.setOffset(offset);
  h.setAddress(address + offset);
  r.payload = blobPayload(reinterpret_cast<const uint8_t*>(address) + offset, length);
  r.ticks = nowTicks();
  add(std::move(r));
}

std::vector<HostBytes::FileMapping> HostBytes::readFileMappings() {
  std::vector<FileMapping> out;
  int fd = ::open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return out;
  std::string text;
  char buf[16384];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
  ::close(fd);
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string::npos) eol = text.size();
    std::string line = text.substr(pos, eol - pos);
    pos = eol + 1;
    unsigned long long start, end, offset, inode;
    char perms[8], dev[16];
    int consumed = 0;
    if (sscanf(line.c_str(), "%llx-%llx %7s %llx %15s %llu %n", &start, &end, perms, &offset, dev, &inode,
               &consumed) < 6)
      continue;
    if (!inode || consumed <= 0 || static_cast<size_t>(consumed) >= line.size()) continue;
    std::string path = line.substr(static_cast<size_t>(consumed));
    if (path.empty() || path[0] != '/') continue;
    out.push_back({start, end, offset, inode, path});
  }
  return out;
}

format::Hash128 HostBytes::wholeFileHash(const std::string& path, const struct stat& st, bool store) {
  auto key = std::make_tuple(static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino),
                             static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec,
                             static_cast<uint64_t>(st.st_size));
  auto& cache = store ? wholeFiles_ : digests_;
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  format::Hash128 h{};
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    size_t size = static_cast<size_t>(st.st_size);
    void* map = size ? ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0) : nullptr;
    if (map != MAP_FAILED) {
      h = store ? keepBlob(map, size) : format::contentHash(map, size);
      if (map) ::munmap(map, size);
    }
    ::close(fd);
  }
  cache[key] = h;
  return h;
}

Payload HostBytes::read(const void* p, uint64_t n, std::string& refusal) {
  if (!mappingsRead_) {
    mappings_ = readFileMappings();
    mappingsRead_ = true;
  }
  uint64_t a = reinterpret_cast<uint64_t>(p);
  const FileMapping* m = nullptr;
  for (const auto& fm : mappings_)
    if (a >= fm.start && a + n <= fm.end) m = &fm;
  struct stat st {};
  if (!m || ::stat(m->path.c_str(), &st) != 0 || static_cast<uint64_t>(st.st_ino) != m->inode ||
      m->offset + (a - m->start) + n > static_cast<uint64_t>(st.st_size))
    return blobPayload(p, n);  // not a file's bytes (or the file changed since it was mapped)
  const std::string& policy = config().filePolicy;
  FileIdentity f;
  f.path = m->path;
  f.offset = m->offset + (a - m->start);
  f.fileSize = static_cast<uint64_t>(st.st_size);
  f.device = static_cast<uint64_t>(st.st_dev);
  f.inode = static_cast<uint64_t>(st.st_ino);
  f.mtimeNs = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  if (config().fileDigest) {
    f.hasDigest = true;
    f.digest = wholeFileHash(m->path, st, false);
  }
  if (policy == "fail") {
    refusal = "a copy reads " + std::to_string(n) + " bytes of the file " + m->path + " and the file policy is fail";
    if (!warnedFilePolicy_) logLine("replay: %s", refusal.c_str());
    warnedFilePolicy_ = true;
    return blobPayload(p, n);
  }
  Payload out;
  if (policy == "reference") {
    out.kind = Payload::Kind::file;
    out.size = n;
  } else if (policy == "capture-all") {
    out.kind = Payload::Kind::blob;
    out.size = n;
    out.hash = wholeFileHash(m->path, st, true);
    out.blobOffset = f.offset;
    out.blobSize = f.fileSize;
  } else {  // capture-ranges
    out = blobPayload(p, n);
  }
  out.file = std::move(f);
  return out;
}

void HostBytes::addCopySource(uint32_t thread, uint64_t copySeq, const void* src, uint64_t offset, uint64_t extent) {
  Record r;
  r.seq = nextSeq();
  r.thread = thread;
  std::string refusal;
  r.payload = read(static_cast<const uint8_t*>(src) + offset, extent, refusal);
  r.ticks = nowTicks();
  if (!refusal.empty()) {
    r.payload = {};
    r.fields().initUnsupported().setReason(refusal);
  } else {
    auto h = r.fields().initHostData();
    h.setCopy(copySeq);
    h.setOffset(offset);
    h.setAddress(reinterpret_cast<uint64_t>(src) + offset);
  }
  add(std::move(r));
}

}  // namespace gtap::core::replay
