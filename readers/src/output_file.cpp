#include "gtap/readers/output_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <streambuf>
#include <vector>

#include "gtap/format/regular_file.h"

namespace gtap::readers {

namespace {

using Kind = OutputError::Kind;

// The temporary files that exist now, for the signal handler to remove. A
// fixed table: the handler may only read memory and call unlinkat.
struct PendingFile {
  std::atomic<bool> taken{false};
  std::atomic<int> dirFd{-1};  // set last: the handler reads name only after it
  char name[NAME_MAX + 1] = {};
};
constexpr int kPendingFiles = 16;
PendingFile g_pending[kPendingFiles];

// SIGXFSZ too: a write past the file size limit raises it.
constexpr int kCleanupSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGXFSZ};

void removePendingAndDie(int sig) {
  int saved = errno;
  for (auto& p : g_pending) {
    int dir = p.dirFd.load(std::memory_order_acquire);
    if (dir >= 0) unlinkat(dir, p.name, 0);
  }
  errno = saved;
  // The signal is blocked while its handler runs: it is delivered again, with
  // the default action, as soon as this returns.
  signal(sig, SIG_DFL);
  raise(sig);
}

// Only where the signal would have ended the process anyway: a handler or
// SIG_IGN the program set stays as it is.
void installCleanupHandlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int sig : kCleanupSignals) {
      struct sigaction old {};
      if (sigaction(sig, nullptr, &old) != 0 || old.sa_handler != SIG_DFL || (old.sa_flags & SA_SIGINFO)) continue;
      struct sigaction action {};
      action.sa_handler = removePendingAndDie;
      sigemptyset(&action.sa_mask);
      for (int other : kCleanupSignals) sigaddset(&action.sa_mask, other);
      sigaction(sig, &action, nullptr);
    }
  });
}

int registerPending(int dirFd, const std::string& name) {
  installCleanupHandlers();
  for (int i = 0; i < kPendingFiles; ++i) {
    bool expected = false;
    if (!g_pending[i].taken.compare_exchange_strong(expected, true)) continue;
    std::memcpy(g_pending[i].name, name.c_str(), name.size() + 1);
    g_pending[i].dirFd.store(dirFd, std::memory_order_release);
    return i;
  }
  return -1;  // more at once than the table holds: removed on errors, not on signals
}

void unregisterPending(int slot) {
  if (slot < 0) return;
  g_pending[slot].dirFd.store(-1, std::memory_order_release);
  g_pending[slot].taken.store(false, std::memory_order_release);
}

// What may be written at `name` in `dirFd`: nothing there, or a regular file
// when replacing is allowed. Returns 0, or the errno of a failed look.
int checkEntry(int dirFd, const std::string& name, const std::string& target, bool replace) {
  struct stat st {};
  if (fstatat(dirFd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return errno == ENOENT ? 0 : errno;
  if (S_ISLNK(st.st_mode))
    throw OutputError(Kind::symlink, target + " is a symbolic link; gtap does not write through links (name the file "
                                              "it points to, or a new name)");
  if (!S_ISREG(st.st_mode))
    throw OutputError(Kind::notRegular,
                      target + " is " + format::fileTypeName(st.st_mode) + "; gtap replaces only regular files");
  if (!replace) throw OutputError(Kind::exists, target + " exists");
  return 0;
}

struct SplitPath {
  std::string dir;   // as given, "." when there is none
  std::string base;
};

SplitPath splitTarget(const std::string& target) {
  if (target.empty()) throw OutputError(Kind::io, "an empty output file name");
  size_t slash = target.rfind('/');
  SplitPath p;
  p.dir = slash == std::string::npos ? "." : slash == 0 ? "/" : target.substr(0, slash);
  p.base = slash == std::string::npos ? target : target.substr(slash + 1);
  if (p.base.empty() || p.base == "." || p.base == "..")
    throw OutputError(Kind::notRegular, target + " names a directory; gtap writes only regular files");
  return p;
}

int openDirectory(const std::string& dir, const std::string& target) {
  int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    throw OutputError(Kind::io, "cannot write " + target + ": its directory " + dir + ": " + std::strerror(errno));
  return fd;
}

std::string randomSuffix() {
  static const char kAlphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  unsigned char bytes[12];
  size_t got = 0;
  while (got < sizeof bytes) {
    ssize_t n = getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw OutputError(Kind::io, std::string("getrandom failed: ") + std::strerror(errno));
    got += static_cast<size_t>(n);
  }
  std::string s;
  for (unsigned char b : bytes) s += kAlphabet[b % (sizeof kAlphabet - 1)];
  return s;
}

// The permissions a newly created file gets (0666 less the umask), read
// without changing the umask, which other threads may rely on.
mode_t newFileMode() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("Umask:", 0) == 0) return 0666 & ~static_cast<mode_t>(std::strtoul(line.c_str() + 6, nullptr, 8));
  }
  return 0644;
}

}  // namespace

// A stream buffer on a descriptor that remembers the first error.
class OutputFile::FdBuffer : public std::streambuf {
 public:
  explicit FdBuffer(int fd) : fd_(fd), buffer_(1 << 16) { setp(buffer_.data(), buffer_.data() + buffer_.size()); }
  int error() const { return error_; }

 protected:
  int_type overflow(int_type c) override {
    if (!drain()) return traits_type::eof();
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }
  int sync() override { return drain() ? 0 : -1; }

 private:
  bool drain() {
    const char* at = pbase();
    while (at < pptr() && error_ == 0) {
      ssize_t n = write(fd_, at, static_cast<size_t>(pptr() - at));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) error_ = n < 0 ? errno : EIO;
      else at += n;
    }
    setp(buffer_.data(), buffer_.data() + buffer_.size());
    return error_ == 0;
  }

  int fd_;
  std::vector<char> buffer_;
  int error_ = 0;
};

void OutputFile::checkTarget(const std::string& target, bool replace) {
  SplitPath p = splitTarget(target);
  int dir = openDirectory(p.dir, target);
  try {
    if (int err = checkEntry(dir, p.base, target, replace))
      throw OutputError(Kind::io, "cannot look at " + target + ": " + std::strerror(err));
  } catch (...) {
    close(dir);
    throw;
  }
  close(dir);
}

OutputFile::OutputFile(std::string target, bool replace) : target_(std::move(target)), replace_(replace) {
  SplitPath p = splitTarget(target_);
  dirPath_ = p.dir;
  baseName_ = p.base;
  dirFd_ = openDirectory(dirPath_, target_);
  try {
    if (int err = checkEntry(dirFd_, baseName_, target_, replace_))
      throw OutputError(Kind::io, "cannot look at " + target_ + ": " + std::strerror(err));
    // Hidden, beside the target, and short enough for any name length.
    std::string stem = "." + baseName_.substr(0, NAME_MAX - 32) + ".gtap-tmp-";
    for (int attempt = 0; attempt < 100 && fd_ < 0; ++attempt) {
      tempName_ = stem + randomSuffix();
      fd_ = openat(dirFd_, tempName_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
      if (fd_ < 0 && errno != EEXIST)
        throw OutputError(Kind::io, "cannot create a file in " + dirPath_ + " (for " + target_ + "): " +
                                        std::strerror(errno));
    }
    if (fd_ < 0) throw OutputError(Kind::io, "cannot create a file in " + dirPath_ + ": every name tried exists");
  } catch (...) {
    close(dirFd_);
    dirFd_ = -1;
    throw;
  }
  tempPath_ = (dirPath_ == "/" ? "" : dirPath_) + "/" + tempName_;
  signalSlot_ = registerPending(dirFd_, tempName_);
}

OutputFile::~OutputFile() {
  if (!committed_) discard();
}

std::ostream& OutputFile::stream() {
  if (!stream_) {
    buffer_ = std::make_unique<FdBuffer>(fd_);
    stream_ = std::make_unique<std::ostream>(buffer_.get());
  }
  return *stream_;
}

void OutputFile::checkOpenedElsewhere() const {
  struct stat mine {};
  if (fstat(fd_, &mine) != 0) throw OutputError(Kind::io, tempPath_ + ": " + std::strerror(errno));
  if (DIR* fds = opendir("/proc/self/fd")) {
    bool found = false;
    while (dirent* e = readdir(fds)) {
      char* end = nullptr;
      long n = std::strtol(e->d_name, &end, 10);
      if (end == e->d_name || *end || n == fd_ || n == dirFd_ || n == dirfd(fds)) continue;
      struct stat st {};
      if (fstat(static_cast<int>(n), &st) == 0 && st.st_dev == mine.st_dev && st.st_ino == mine.st_ino) found = true;
    }
    closedir(fds);
    if (found) return;
  } else {
    // Without /proc, the name at least still leads to the file.
    struct stat named {};
    if (fstatat(dirFd_, tempName_.c_str(), &named, AT_SYMLINK_NOFOLLOW) == 0 && named.st_dev == mine.st_dev &&
        named.st_ino == mine.st_ino)
      return;
  }
  throw OutputError(Kind::io, tempPath_ + " was replaced by another file before it was opened; nothing was written");
}

void OutputFile::commit() {
  if (committed_) return;
  if (stream_) {
    stream_->flush();
    if (buffer_->error()) fail("writing", buffer_->error());
    if (!*stream_) fail("writing", EIO);
  }
  if (fchmod(fd_, newFileMode()) != 0) fail("setting the permissions of", errno);
  if (fsync(fd_) != 0) fail("syncing", errno);
  try {
    if (int err = checkEntry(dirFd_, baseName_, target_, replace_)) fail("looking at", err);
  } catch (const OutputError&) {
    discard();
    throw;
  }
  if (replace_) {
    if (renameat(dirFd_, tempName_.c_str(), dirFd_, baseName_.c_str()) != 0) fail("renaming the new file onto", errno);
  } else if (renameat2(dirFd_, tempName_.c_str(), dirFd_, baseName_.c_str(), RENAME_NOREPLACE) != 0) {
    int err = errno;
    if (err == EEXIST) {
      discard();
      throw OutputError(Kind::exists, target_ + " exists");
    }
    if (err != EINVAL && err != ENOSYS) fail("renaming the new file onto", err);
    // A file system without RENAME_NOREPLACE: a hard link is never made over
    // an existing name either.
    if (linkat(dirFd_, tempName_.c_str(), dirFd_, baseName_.c_str(), 0) != 0) {
      err = errno;
      if (err == EEXIST) {
        discard();
        throw OutputError(Kind::exists, target_ + " exists");
      }
      fail("linking the new file onto", err);
    }
    unlinkat(dirFd_, tempName_.c_str(), 0);
  }
  unregisterPending(signalSlot_);
  signalSlot_ = -1;
  committed_ = true;
  close(fd_);
  fd_ = -1;
  // The new name lasts only once the directory is on disk too.
  int err = fsync(dirFd_) != 0 ? errno : 0;
  close(dirFd_);
  dirFd_ = -1;
  if (err != 0 && err != EINVAL)
    throw OutputError(Kind::io, "syncing the directory " + dirPath_ + " of " + target_ + ": " + std::strerror(err));
}

void OutputFile::discard() noexcept {
  if (dirFd_ >= 0 && fd_ >= 0) unlinkat(dirFd_, tempName_.c_str(), 0);
  unregisterPending(signalSlot_);
  signalSlot_ = -1;
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
  if (dirFd_ >= 0) close(dirFd_);
  dirFd_ = -1;
}

void OutputFile::fail(const std::string& what, int err) {
  discard();
  throw OutputError(Kind::io, what + " " + target_ + ": " + std::strerror(err));
}

}  // namespace gtap::readers
