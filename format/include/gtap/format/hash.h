// Content hashes for blobs (XXH3-128).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace gtap::format {

struct Hash128 {
  uint64_t low = 0;
  uint64_t high = 0;
  bool operator==(const Hash128&) const = default;
  std::string hex() const;
};

struct Hash128Hasher {
  size_t operator()(const Hash128& h) const { return static_cast<size_t>(h.low ^ (h.high * 31)); }
};

Hash128 contentHash(const void* data, size_t size);

}  // namespace gtap::format
