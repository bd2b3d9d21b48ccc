// uncompress_capture IN OUT: writes IN's whole chunks again with codec none
// (checksums recomputed, the footer pointed at the moved trailer), so that a
// fuzzer's mutations land in the Cap'n Proto messages instead of breaking
// zstd frames. Whatever follows the last whole chunk of a cut file is left out.
#include <zstd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <vector>

#include "gtap/format/container.h"
#include "gtap/format/reader.h"

namespace {

void put64(std::vector<uint8_t>& out, uint64_t v) {
  uint8_t b[8];
  std::memcpy(b, &v, 8);
  out.insert(out.end(), b, b + 8);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: uncompress_capture IN OUT\n";
    return 2;
  }
  using namespace gtap::format;
  try {
    CaptureReader reader(argv[1]);
    std::ifstream in(argv[1], std::ios::binary);
    std::vector<uint8_t> out(kPreambleSize);
    if (!in.read(reinterpret_cast<char*>(out.data()), kPreambleSize)) throw FormatError(std::string(argv[1]) + ": short");
    uint64_t trailerAt = 0;
    for (const ChunkInfo& c : reader.chunks()) {
      auto stored = reader.storedBytes(c);
      std::vector<uint8_t> raw(stored.begin(), stored.end());
      if (c.codec == Codec::zstd) {
        raw.assign(c.rawSize, 0);
        size_t n = ZSTD_decompress(raw.data(), raw.size(), stored.data(), stored.size());
        if (ZSTD_isError(n) || n != c.rawSize)
          throw FormatError(std::string(argv[1]) + ": chunk at offset " + std::to_string(c.offset) +
                            " does not decompress");
      }
      if (c.kind == static_cast<uint16_t>(gtap::schema::ChunkKind::TRAILER)) trailerAt = out.size();
      uint8_t header[kChunkHeaderSize];
      ChunkHeader h{c.kind, Codec::none, static_cast<uint32_t>(raw.size()), static_cast<uint32_t>(raw.size()), 0};
      encodeChunkHeader(h, header);
      h.checksum = chunkChecksum(header, raw.data(), raw.size());
      encodeChunkHeader(h, header);
      out.insert(out.end(), header, header + kChunkHeaderSize);
      out.insert(out.end(), raw.begin(), raw.end());
    }
    if (reader.recovery().closedCleanly) {
      put64(out, trailerAt);
      out.insert(out.end(), kFooterMagic, kFooterMagic + 8);
    }
    std::ofstream file(argv[2], std::ios::binary | std::ios::trunc);
    if (!file.write(reinterpret_cast<const char*>(out.data()), static_cast<std::streamsize>(out.size())) ||
        !file.flush()) {
      std::cerr << "uncompress_capture: cannot write " << argv[2] << "\n";
      return 1;
    }
  } catch (const FormatError& e) {
    std::cerr << "uncompress_capture: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
