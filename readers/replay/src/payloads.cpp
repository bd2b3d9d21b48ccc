#include "payloads.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <unordered_map>

#include "gtap/format/regular_file.h"
#include "gtap/readers/replayer.h"

namespace gtap::replay {

namespace {

using readers::ReplayError;

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// An external file opened and checked once, however many records read it.
struct OpenedFile {
  std::string path;  // after remapping
  std::shared_ptr<Fd> fd;
  uint64_t size = 0;
};

std::string recordIn(const readers::Capture& c, const readers::ReplayRecord& r) {
  return c.path() + ": record " + readers::recordLabel(r);
}

format::Hash128 digestOf(int fd, const std::string& path, const std::string& where) {
  XXH3_state_t* state = XXH3_createState();
  XXH3_128bits_reset(state);
  std::vector<uint8_t> buf(1 << 20);
  off_t at = 0;
  for (;;) {
    ssize_t n = pread(fd, buf.data(), buf.size(), at);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      XXH3_freeState(state);
      throw ReplayError(where + ": cannot read external file " + path + ": " + std::strerror(err));
    }
    if (n == 0) break;
    XXH3_128bits_update(state, buf.data(), static_cast<size_t>(n));
    at += n;
  }
  XXH128_hash_t h = XXH3_128bits_digest(state);
  XXH3_freeState(state);
  return {h.low64, h.high64};
}

// Opens `f` (remapped) and compares it with the identity the capture saw.
OpenedFile openChecked(const readers::FileReference& f, const std::vector<std::pair<std::string, std::string>>& remaps,
                       const std::string& where) {
  bool remapped = false;
  std::string path = remapPath(f.path, remaps, remapped);
  std::string named = remapped ? path + " (captured as " + f.path + ")" : path;
  struct stat st {};
  std::string error;
  int raw = format::openRegularFile(path, st, error);
  if (raw < 0)
    throw ReplayError(where + ": external file " + named + " cannot be opened: " + error +
                      " (give --remap OLD=NEW if it moved)");
  auto fd = std::make_shared<Fd>(raw);
  int64_t mtimeNs = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  std::vector<std::string> differences;
  if (static_cast<uint64_t>(st.st_size) != f.fileSize)
    differences.push_back("size " + std::to_string(st.st_size) + ", captured " + std::to_string(f.fileSize));
  // A remapped file is a copy: its device and inode are its own. Its contents
  // are checked by digest when there is one, else by modification time.
  if (!remapped) {
    if (static_cast<uint64_t>(st.st_dev) != f.device)
      differences.push_back("device " + std::to_string(st.st_dev) + ", captured " + std::to_string(f.device));
    if (static_cast<uint64_t>(st.st_ino) != f.inode)
      differences.push_back("inode " + std::to_string(st.st_ino) + ", captured " + std::to_string(f.inode));
  }
  if ((!remapped || !f.hasDigest) && mtimeNs != f.mtimeNs)
    differences.push_back("mtime " + std::to_string(mtimeNs) + " ns, captured " + std::to_string(f.mtimeNs) + " ns");
  if (differences.empty() && f.hasDigest) {
    format::Hash128 d = digestOf(fd->get(), named, where);
    if (!(d == f.digest)) differences.push_back("digest " + d.hex() + ", captured " + f.digest.hex());
  }
  if (!differences.empty()) {
    std::string list;
    for (const auto& d : differences) list += (list.empty() ? "" : "; ") + d;
    throw ReplayError(where + ": external file " + named + " changed since the capture: " + list);
  }
  return {path, fd, static_cast<uint64_t>(st.st_size)};
}

std::shared_ptr<std::vector<uint8_t>> readRange(const OpenedFile& file, uint64_t offset, uint64_t size,
                                                const std::string& where) {
  if (offset > file.size || size > file.size - offset)
    throw ReplayError(where + ": bytes " + std::to_string(offset) + "+" + std::to_string(size) +
                      " lie past the end of external file " + file.path + " (" + std::to_string(file.size) +
                      " bytes)");
  auto bytes = std::make_shared<std::vector<uint8_t>>(size);
  uint64_t done = 0;
  while (done < size) {
    ssize_t n = pread(file.fd->get(), bytes->data() + done, size - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw ReplayError(where + ": cannot read external file " + file.path + ": " +
                        (n < 0 ? std::strerror(errno) : "unexpected end of file"));
    done += static_cast<uint64_t>(n);
  }
  return bytes;
}

std::string identityKey(const readers::FileReference& f) {
  return f.path + '\0' + std::to_string(f.fileSize) + ':' + std::to_string(f.device) + ':' +
         std::to_string(f.inode) + ':' + std::to_string(f.mtimeNs) + ':' + (f.hasDigest ? f.digest.hex() : "");
}

}  // namespace

std::string remapPath(const std::string& path, const std::vector<std::pair<std::string, std::string>>& remaps,
                      bool& remapped) {
  for (const auto& [from, to] : remaps) {
    if (!from.empty() && path.compare(0, from.size(), from) == 0) {
      remapped = true;
      return to + path.substr(from.size());
    }
  }
  remapped = false;
  return path;
}

void Payloads::resolve(const readers::Capture& capture, const readers::ReplayStream& stream,
                       const std::vector<std::pair<std::string, std::string>>& remaps, bool readBacks) {
  byRecord_.assign(stream.records.size(), {});
  std::unordered_map<format::Hash128, std::shared_ptr<const std::vector<uint8_t>>, format::Hash128Hasher> blobs;
  std::map<std::string, OpenedFile> files;
  for (size_t i = 0; i < stream.records.size(); ++i) {
    const readers::ReplayRecord& r = stream.records[i];
    const readers::ReplayPayload& p = r.payload;
    if (r.op == readers::ReplayOp::READ_BACK && !readBacks) continue;
    std::string where = recordIn(capture, r);
    Bytes& out = byRecord_[i];
    switch (p.kind) {
      case readers::ReplayPayload::Kind::none: break;
      case readers::ReplayPayload::Kind::inlineBytes: {
        auto bytes = std::make_shared<const std::vector<uint8_t>>(p.bytes);
        out = {bytes, bytes->data(), bytes->size()};
        break;
      }
      case readers::ReplayPayload::Kind::blob: {
        auto& cached = blobs[p.blob];
        if (!cached) {
          // Checked against its hash before any use: a module whose bytes
          // are not what was captured is never loaded.
          if (!stream.blobs.count(p.blob))
            throw ReplayError(where + ": blob " + p.blob.hex() + " is not in the file");
          try {
            cached = std::make_shared<const std::vector<uint8_t>>(capture.checkedBlob(p.blob));
          } catch (const format::FormatError& e) {
            throw ReplayError(where + ": " + e.what());
          }
        }
        if (p.blobOffset > cached->size() || p.size > cached->size() - p.blobOffset)
          throw ReplayError(where + ": payload bytes " + std::to_string(p.blobOffset) + "+" + std::to_string(p.size) +
                            " lie outside blob " + p.blob.hex() + " (" + std::to_string(cached->size()) + " bytes)");
        out = {cached, cached->data() + p.blobOffset, p.size};
        break;
      }
      case readers::ReplayPayload::Kind::file: {
        std::string key = identityKey(p.file);
        auto it = files.find(key);
        if (it == files.end()) it = files.emplace(key, openChecked(p.file, remaps, where)).first;
        auto bytes = readRange(it->second, p.file.offset, p.size, where);
        out = {bytes, bytes->data(), bytes->size()};
        break;
      }
    }
  }
}

}  // namespace gtap::replay
