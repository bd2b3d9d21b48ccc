#include "gtap/format/hash.h"

#include <xxhash.h>

#include <cstdio>

namespace gtap::format {

Hash128 contentHash(const void* data, size_t size) {
  XXH128_hash_t h = XXH3_128bits(data, size);
  return {h.low64, h.high64};
}

std::string Hash128::hex() const {
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(high),
                static_cast<unsigned long long>(low));
  return buf;
}

}  // namespace gtap::format
