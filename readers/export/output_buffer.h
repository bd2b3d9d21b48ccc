// Output collected in one block and handed to the stream a block at a time:
// one stream call per block rather than per field, and never the whole trace
// in memory.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>

namespace gtap::readers::timeline_export {

class OutputBuffer {
 public:
  static constexpr size_t kBlockSize = 1 << 16;

  explicit OutputBuffer(std::ostream& out) : out_(out) { text_.reserve(kBlockSize + 4096); }
  OutputBuffer(const OutputBuffer&) = delete;
  OutputBuffer& operator=(const OutputBuffer&) = delete;

  // Where callers append; call maybeFlush() after each complete record.
  std::string& text() { return text_; }

  void maybeFlush() {
    if (text_.size() >= kBlockSize) flush();
  }

  void flush() {
    if (!text_.empty()) out_.write(text_.data(), static_cast<std::streamsize>(text_.size()));
    text_.clear();
  }

 private:
  std::ostream& out_;
  std::string text_;
};

}  // namespace gtap::readers::timeline_export
