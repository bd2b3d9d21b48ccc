#include "gtap/format/container.h"

#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include <bit>
#include <cstring>

namespace gtap::format {

namespace {
void put16(uint8_t* p, uint16_t v) { std::memcpy(p, &v, 2); }
void put32(uint8_t* p, uint32_t v) { std::memcpy(p, &v, 4); }
void put64(uint8_t* p, uint64_t v) { std::memcpy(p, &v, 8); }
}  // namespace

static_assert(std::endian::native == std::endian::little, "gtap files are little-endian");

std::string chunkKindName(uint16_t kind) {
  // As ChunkKind in capture.capnp names them.
  static constexpr const char* kNames[] = {"invalid", "fileInfo", "definitions", "apiEvents", "blob",     "trailer",
                                           "devices", "objects",  "deviceOps",   "memoryOps", "stacks", "replay",
                                           "instructionSamples", "counters", "deviceMetrics", "phases", "ranges"};
  if (kind < sizeof kNames / sizeof kNames[0]) return kNames[kind];
  return "kind " + std::to_string(kind);
}

void encodeChunkHeader(const ChunkHeader& h, uint8_t out[kChunkHeaderSize]) {
  put32(out, kChunkMagic);
  put16(out + 4, h.kind);
  out[6] = static_cast<uint8_t>(h.codec);
  out[7] = 0;
  put32(out + 8, h.storedSize);
  put32(out + 12, h.rawSize);
  put64(out + 16, h.checksum);
}

uint64_t chunkChecksum(const uint8_t header[kChunkHeaderSize], const void* payload, size_t size) {
  XXH3_state_t state;
  XXH3_64bits_reset(&state);
  XXH3_64bits_update(&state, header, 16);
  XXH3_64bits_update(&state, payload, size);
  return XXH3_64bits_digest(&state);
}

}  // namespace gtap::format
