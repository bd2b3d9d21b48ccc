// The .gtap container: a preamble, then self-delimiting chunks, then (when the
// file was closed cleanly) a trailer chunk and a fixed footer pointing at it.
//
//   preamble  16 bytes  magic[8] "GTAP\r\n\x1a\n", u16 major, u16 minor, u32 flags
//   chunk     24 bytes  u32 magic "GTCK", u16 kind, u8 codec, u8 reserved,
//                       u32 storedSize, u32 rawSize, u64 checksum (XXH3-64 of the
//                       first 16 header bytes followed by the stored payload)
//             storedSize bytes of payload: a Cap'n Proto message (flat array),
//             zstd-compressed when codec == 1
//   footer    16 bytes  u64 offset of the trailer chunk, magic[8] "GTAPEND\0"
//
// All integers are little-endian. A file cut anywhere still yields every whole
// chunk before the cut.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace gtap::format {

inline constexpr char kPreambleMagic[8] = {'G', 'T', 'A', 'P', '\r', '\n', '\x1a', '\n'};
inline constexpr char kFooterMagic[8] = {'G', 'T', 'A', 'P', 'E', 'N', 'D', '\0'};
inline constexpr uint32_t kChunkMagic = 0x4b435447;  // "GTCK"
inline constexpr uint16_t kFormatMajor = 1;
inline constexpr uint16_t kFormatMinor = 9;
inline constexpr size_t kPreambleSize = 16;
inline constexpr size_t kChunkHeaderSize = 24;
inline constexpr size_t kFooterSize = 16;
// Limits that keep a hostile file from making a reader allocate without bound
// (docs/format.md, "What readers check").
inline constexpr uint32_t kMaxStoredSize = 256u << 20;
inline constexpr uint32_t kMaxRawSize = 1024u << 20;  // the writer refuses larger chunks
// zstd's frame format: the densest block is an RLE block, 4 bytes standing
// for at most 128 KiB, so no zstd payload decodes to more than 32768 times
// its size. A header declaring more is damaged.
inline constexpr uint64_t kZstdMaxExpansion = 32768;
// The writer splits blobs into parts of at most this many bytes; a blob chunk
// (the part and a few words of message) decodes to no more than this plus
// kBlobMessageOverhead.
inline constexpr uint32_t kMaxBlobPartSize = 32u << 20;
inline constexpr uint32_t kBlobMessageOverhead = 4096;
// Record chunks (every kind but blob) hold records that differ in times,
// sequence numbers and addresses, and compress tens of times at most; a
// decoded size beyond this many times the stored one is refused, so the
// records a reader builds stay proportional to the file. Blob chunks hold
// program bytes (a buffer of zeros compresses thousands of times) and are
// bounded by kZstdMaxExpansion only.
inline constexpr uint64_t kMaxRecordExpansion = 1024;

enum class Codec : uint8_t { none = 0, zstd = 1 };

struct ChunkHeader {
  uint16_t kind = 0;
  Codec codec = Codec::none;
  uint32_t storedSize = 0;
  uint32_t rawSize = 0;
  uint64_t checksum = 0;
};

// "blob", "replay", ...: the chunk kind as the schema names it ("kind 42"
// for one it does not know).
std::string chunkKindName(uint16_t kind);

void encodeChunkHeader(const ChunkHeader& header, uint8_t out[kChunkHeaderSize]);
// Checksum over the header's first 16 bytes and the payload.
uint64_t chunkChecksum(const uint8_t header[kChunkHeaderSize], const void* payload, size_t size);

// A problem with a file's contents. The message names the file, the offset and
// what was expected.
class FormatError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace gtap::format
