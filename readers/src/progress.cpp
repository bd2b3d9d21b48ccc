#include "gtap/readers/progress.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>

#include "gtap/readers/table.h"

namespace gtap::readers {

namespace {
std::atomic<ReadProgress*> current{nullptr};

void writeAll(int fd, const std::string& s) {
  size_t at = 0;
  while (at < s.size()) {
    ssize_t n = ::write(fd, s.data() + at, s.size() - at);
    if (n <= 0) return;  // stderr gone: progress is not worth failing for
    at += static_cast<size_t>(n);
  }
}
}  // namespace

bool parseProgressMode(const std::string& name, ProgressMode& out) {
  if (name == "auto") out = ProgressMode::automatic;
  else if (name == "always") out = ProgressMode::always;
  else if (name == "never") out = ProgressMode::never;
  else return false;
  return true;
}

ReadProgress::ReadProgress(ProgressMode mode, int fd) : mode_(mode), fd_(fd), terminal_(::isatty(fd) == 1) {
  if (mode_ == ProgressMode::never || (mode_ == ProgressMode::automatic && !terminal_)) return;
  current.store(this);
  format::setReadObserver(this);
}

ReadProgress::~ReadProgress() {
  if (current.load() != this) return;
  format::setReadObserver(nullptr);
  {
    std::lock_guard lock(mutex_);
    // Not a terminal (--progress=always): the last line says it all was read.
    if (everDrawn_ && !terminal_) drawLocked(true);
  }
  clearLine();
  current.store(nullptr);
}

void ReadProgress::opened(const std::string& path, uint64_t fileSize) {
  std::lock_guard lock(mutex_);
  File& f = files_[path];
  // The same path opened again (a second report pass) keeps what was read.
  if (f.size == 0) {
    f.size = fileSize;
    total_ += fileSize;
  }
}

void ReadProgress::reached(const std::string& path, uint64_t endOffset) {
  std::unique_lock lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock()) return;  // another thread is drawing; the next chunk counts
  auto it = files_.find(path);
  if (it == files_.end()) return;
  File& f = it->second;
  endOffset = std::min(endOffset, f.size);
  if (endOffset > f.reached) {
    done_ += endOffset - f.reached;
    f.reached = endOffset;
  }
  drawLocked(false);
}

void ReadProgress::closed(const std::string& path) {
  std::lock_guard lock(mutex_);
  auto it = files_.find(path);
  if (it == files_.end()) return;
  // What was not read of it never will be in this pass: it counts as done.
  done_ += it->second.size - it->second.reached;
  it->second.reached = it->second.size;
}

void ReadProgress::drawLocked(bool force) {
  auto now = std::chrono::steady_clock::now();
  double elapsed = std::chrono::duration<double>(now - start_).count();
  if (!force) {
    if (mode_ == ProgressMode::automatic && elapsed < 0.5) return;
    if (everDrawn_ && now - lastDraw_ < std::chrono::milliseconds(100)) return;
  }
  lastDraw_ = now;
  everDrawn_ = true;
  double fraction = total_ ? static_cast<double>(done_) / static_cast<double>(total_) : 0.0;
  constexpr int kWidth = 24;
  int filled = static_cast<int>(fraction * kWidth);
  std::string line = "\r[" + std::string(static_cast<size_t>(filled), '#') +
                     std::string(static_cast<size_t>(kWidth - filled), '-') + "] ";
  char buf[96];
  std::snprintf(buf, sizeof buf, "%3.0f%% ", fraction * 100);
  line += buf;
  line += formatBytes(done_) + " of " + formatBytes(total_) + " read";
  if (fraction > 0.01 && fraction < 1.0) {
    std::snprintf(buf, sizeof buf, ", about %.0f s left", elapsed * (1.0 - fraction) / fraction);
    line += buf;
  }
  // Clears what a longer line before left.
  line += terminal_ ? "\x1b[K" : "";
  if (!terminal_) line += "\n";
  writeAll(fd_, line);
  drawn_ = terminal_;
}

void ReadProgress::clearLine() {
  ReadProgress* p = current.load();
  if (!p) return;
  std::lock_guard lock(p->mutex_);
  if (!p->drawn_) return;
  writeAll(p->fd_, "\r\x1b[K");
  p->drawn_ = false;
}

}  // namespace gtap::readers
