// Writing an output file without ever touching what was not meant to be
// written: the bytes go to a new file created exclusively (O_EXCL, never
// through a link, mode 0600) under an unpredictable name in the target's
// directory, which is synced and renamed onto the target only when complete.
// A target that is a symbolic link, a device, a directory or anything else but
// a regular file is refused, even when replacing is allowed; an existing
// regular file is replaced only when asked. Until commit() the temporary file
// is removed whatever happens: an exception, an error, or SIGINT, SIGTERM or
// SIGHUP (or SIGQUIT, or SIGXFSZ from a write past the file size limit)
// arriving while it exists: the process still dies of the signal.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <memory>
#include <ostream>
#include <stdexcept>
#include <string>

namespace gtap::readers {

class OutputError : public std::runtime_error {
 public:
  enum class Kind {
    exists,       // a regular file is there and replacing was not allowed
    symlink,      // the target is a symbolic link (never written through)
    notRegular,   // a directory, device, FIFO or socket (never replaced)
    io,           // the system refused: no directory, no permission, no space...
  };
  OutputError(Kind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  Kind kind() const { return kind_; }
  // The target as given was not one gtap may write (as opposed to a failure
  // writing it): the command line has to change.
  bool refusedTarget() const { return kind_ != Kind::io; }

 private:
  Kind kind_;
};

class OutputFile {
 public:
  // Checks the target and creates the temporary file. Throws OutputError; its
  // message names the target and, for Kind::exists, leaves how to allow
  // replacing to the caller (each command says it in its own options).
  OutputFile(std::string target, bool replace);
  // Removes the temporary file unless commit() succeeded.
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  const std::string& target() const { return target_; }
  // The temporary file's path, for a writer that opens by name (SQLite). It
  // exists, is empty and is this object's own until commit(); open it without
  // creating and without following links, then call checkOpenedElsewhere().
  const std::string& temporaryPath() const { return tempPath_; }
  int fd() const { return fd_; }
  // A stream writing to the temporary file; its errors are reported by commit().
  std::ostream& stream();
  // Throws OutputError unless some other descriptor of this process (one a
  // library opened by temporaryPath()) refers to the very file this object
  // created: a name can be swapped, the file cannot.
  void checkOpenedElsewhere() const;

  // Flushes the stream, syncs the file, checks the target again and renames
  // the file onto it (without replacing anything unless allowed), then syncs
  // the directory. Throws OutputError, having removed the temporary file.
  void commit();

  // Checks a target without creating anything: throws what the constructor
  // would for it.
  static void checkTarget(const std::string& target, bool replace);

 private:
  void discard() noexcept;
  [[noreturn]] void fail(const std::string& what, int err);

  std::string target_;
  bool replace_;
  int dirFd_ = -1;
  int fd_ = -1;
  std::string dirPath_;
  std::string baseName_;
  std::string tempName_;  // inside the directory
  std::string tempPath_;
  int signalSlot_ = -1;
  class FdBuffer;
  std::unique_ptr<FdBuffer> buffer_;
  std::unique_ptr<std::ostream> stream_;
  bool committed_ = false;
};

}  // namespace gtap::readers
