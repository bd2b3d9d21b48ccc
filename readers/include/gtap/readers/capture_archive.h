// A merged capture file (`gtap merge`): several whole capture files, one per
// process, in one file, ranks kept apart, for archiving and for tools that
// take one file. Every report reads it as the captures it holds.
//
// Layout (docs/format.md, "Merged captures"), little-endian:
//   0   "GTAPMRG\0", u16 major (1), u16 minor (0), u32 zero
//   16  the members: each a whole capture file, at an 8-byte aligned offset
//   ..  the index: per member u64 offset, u64 size, u32 name length, the
//       name (the file it came from), zeros to an 8-byte boundary
//   end u64 index offset, u64 member count, "GTAPMEND"
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "gtap/readers/capture.h"

namespace gtap::readers {

inline constexpr char kArchiveMagic[8] = {'G', 'T', 'A', 'P', 'M', 'R', 'G', '\0'};
inline constexpr char kArchiveEndMagic[8] = {'G', 'T', 'A', 'P', 'M', 'E', 'N', 'D'};
inline constexpr size_t kArchiveHeaderSize = 16;
inline constexpr size_t kArchiveFooterSize = 24;

// Whether the file at `path` begins as a merged capture file does (false
// when it cannot be read: opening it as a capture then says why).
bool isCaptureArchive(const std::string& path);

class CaptureArchive {
 public:
  struct Member {
    std::string name;  // the file it was merged from
    uint64_t offset = 0;
    uint64_t size = 0;
  };
  // Maps the file and checks its header, index and footer; throws
  // format::FormatError naming the file and the offset of what is wrong.
  explicit CaptureArchive(const std::string& path);
  // Reads a merged file held in memory (`data` must outlive this object).
  CaptureArchive(std::span<const uint8_t> data, std::string name);
  ~CaptureArchive();
  CaptureArchive(const CaptureArchive&) = delete;
  CaptureArchive& operator=(const CaptureArchive&) = delete;

  const std::string& path() const { return path_; }
  const std::vector<Member>& members() const { return members_; }
  std::span<const uint8_t> bytes(const Member& m) const { return {data_ + m.offset, m.size}; }
  // How a member is named in reports: "ALL.gtap(rank-3.gtap)".
  std::string memberPath(const Member& m) const { return path_ + "(" + m.name + ")"; }
  // Gives the pages of a member read so far back to the system (read again
  // from the file if touched again), as CaptureReader::releasePages does.
  void releasePages(const Member& m) const;

 private:
  void readIndex();

  std::string path_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  void* mapping_ = nullptr;
  std::vector<Member> members_;
};

// The captures of one file: one for a capture file, one per member for a
// merged file, whose `archive` must outlive them (declared first, so
// destroyed last).
struct CaptureFile {
  std::shared_ptr<const CaptureArchive> archive;
  std::vector<std::unique_ptr<Capture>> captures;
};
// Throws format::FormatError when the file cannot be used at all.
CaptureFile openCaptureFile(const std::string& path);

// Writes a merged file of `inputs` (capture files, or merged files whose
// members are taken one by one) to `out`, in the order given; each input is
// checked to be a capture first (several at once) unless the caller has
// `checked` them already (openCaptureFile on each). Returns the number of
// members written. Throws format::FormatError naming the input that is not a
// capture (the first in order).
size_t writeCaptureArchive(const std::vector<std::string>& inputs, std::ostream& out, bool checked = false);

}  // namespace gtap::readers
