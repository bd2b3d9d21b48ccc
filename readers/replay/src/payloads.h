// Every payload a replay needs, made ready before any device work: inline
// bytes as they are, blobs assembled and decompressed once each, external
// files opened (after --remap), checked against the identity (and digest) the
// capture recorded, and read.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gtap/readers/capture.h"
#include "gtap/readers/replay_stream.h"

namespace gtap::replay {

struct Bytes {
  std::shared_ptr<const std::vector<uint8_t>> owner;
  const uint8_t* data = nullptr;
  size_t size = 0;
};

class Payloads {
 public:
  // Resolves the payload of every record (read-backs only when `readBacks`).
  // Throws ReplayError naming the record and the file on any problem.
  void resolve(const readers::Capture& capture, const readers::ReplayStream& stream,
               const std::vector<std::pair<std::string, std::string>>& remaps, bool readBacks);
  // The bytes of record `index` (by position in the stream); empty when it has none.
  const Bytes& of(size_t index) const { return byRecord_[index]; }

 private:
  std::vector<Bytes> byRecord_;
};

// The path after the first matching --remap prefix rewrite; `remapped` says
// whether one applied.
std::string remapPath(const std::string& path, const std::vector<std::pair<std::string, std::string>>& remaps,
                      bool& remapped);

}  // namespace gtap::replay
