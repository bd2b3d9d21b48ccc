// Host memory the device reads, as the replay recorders of every front end
// record it (docs/replay.md): pages of host-visible allocations compared by
// hash with what was last recorded, and bytes read from ordinary host memory,
// which the file policy (GTAP_FILE_POLICY) may store as a reference to the
// file they were mapped from. Not locked itself: its owner calls it under the
// lock that guards its records.
#pragma once

#include <sys/stat.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "replay_stream.h"

namespace gtap::core::replay {

inline constexpr size_t kPage = 4096;

// Hash of `n` zero bytes (n <= kPage): replay zero-fills host memory it
// allocates, so pages still equal to zeros need no record.
uint64_t zeroPageHash(size_t n);
uint64_t pageHash(const void* p, size_t n);

// The page hashes of one range of host memory, as last recorded.
struct PageHashes {
  std::vector<uint64_t> hashes;

  // Starts every page of a range of `size` bytes as zeros, once.
  void ensure(uint64_t size);
  // The runs of pages of [base, base + size) that differ from their last
  // recorded hash: each takes its new hash and `emit(offset, length)` is
  // called once per run, in order. `skip(page)` true leaves a page alone
  // (bytes a device copy in flight may be writing).
  template <typename Skip, typename Emit>
  void changedRuns(const uint8_t* base, uint64_t size, Skip&& skip, Emit&& emit) {
    ensure(size);
    size_t pages = hashes.size(), runStart = pages;
    auto flush = [&](size_t end) {
      if (runStart == pages) return;
      uint64_t offset = runStart * kPage;
      emit(offset, std::min<uint64_t>(end * kPage, size) - offset);
      runStart = pages;
    };
    for (size_t i = 0; i < pages; ++i) {
      size_t len = static_cast<size_t>(std::min<uint64_t>(kPage, size - i * kPage));
      uint64_t h = pageHash(base + i * kPage, len);
      if (h != hashes[i] && !skip(i)) {
        hashes[i] = h;
        if (runStart == pages) runStart = i;
      } else {
        flush(i);
      }
    }
    flush(pages);
  }
  // Pages lying wholly inside [offset, offset + length) of the range take
  // the hash of what they hold now: bytes the device wrote, which are not the
  // program's to record.
  void refresh(const uint8_t* base, uint64_t size, uint64_t offset, uint64_t length);
};

// A hostData record of `length` bytes at `offset` of the allocation `id`
// (whose first byte was at `address`).
void addAllocationData(uint32_t thread, uint64_t id, uint64_t address, uint64_t offset, uint64_t length);

// Bytes the device reads from ordinary host memory (outside every allocation).
class HostBytes {
 public:
  // A new submission: file mappings are read again when next needed.
  void newSubmission() { mappingsRead_ = false; }
  // The bytes at [p, p + n), as the file policy says when they lie in a file
  // mapping. Sets `refusal` when the policy is "fail".
  Payload read(const void* p, uint64_t n, std::string& refusal);
  // A hostData record for the source of the copy with seq `copySeq` (an
  // unsupported record when the file policy refuses it).
  void addCopySource(uint32_t thread, uint64_t copySeq, const void* src, uint64_t offset, uint64_t extent);

 private:
  struct FileMapping {
    uint64_t start = 0, end = 0, offset = 0, inode = 0;
    std::string path;
  };
  static std::vector<FileMapping> readFileMappings();
  format::Hash128 wholeFileHash(const std::string& path, const struct stat& st, bool store);

  bool mappingsRead_ = false;
  std::vector<FileMapping> mappings_;
  // Whole files stored once (capture-all) and digests, by identity.
  std::map<std::tuple<uint64_t, uint64_t, int64_t, uint64_t>, format::Hash128> wholeFiles_, digests_;
  bool warnedFilePolicy_ = false;
};

}  // namespace gtap::core::replay
