// Progress of long reads for a person at a terminal: a bar on stderr with the
// bytes of the capture files read so far, their total and an estimate of the
// time left, redrawn at most ten times a second and cleared when done.
// Nothing is drawn when stderr is not a terminal (unless asked), nor for a
// read shorter than half a second. A file read again (reports that pass over
// a capture twice) does not count twice: each file counts as far as reading
// has reached in it.
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <string>

#include "gtap/format/reader.h"

namespace gtap::readers {

enum class ProgressMode { automatic, always, never };
// "auto", "always" or "never"; false for anything else.
bool parseProgressMode(const std::string& name, ProgressMode& out);

class ReadProgress : public format::ReadObserver {
 public:
  // Installs itself as the capture readers' observer (one at a time).
  explicit ReadProgress(ProgressMode mode, int fd = 2);
  ~ReadProgress() override;
  ReadProgress(const ReadProgress&) = delete;
  ReadProgress& operator=(const ReadProgress&) = delete;

  void opened(const std::string& path, uint64_t fileSize) override;
  void reached(const std::string& path, uint64_t endOffset) override;
  void closed(const std::string& path) override;

  // Clears the bar, if one is drawn, before other text goes to stderr.
  static void clearLine();

 private:
  void drawLocked(bool force);
  struct File {
    uint64_t size = 0;
    uint64_t reached = 0;
  };
  ProgressMode mode_;
  int fd_;
  bool terminal_;
  std::mutex mutex_;
  std::map<std::string, File> files_;
  uint64_t total_ = 0, done_ = 0;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point lastDraw_{};
  bool drawn_ = false;      // a bar is on the terminal's line now
  bool everDrawn_ = false;
};

}  // namespace gtap::readers
