// libFuzzer target: any byte string given to the reader must end in a clean
// answer (chunks read, a FormatError, or notes), never a crash or an
// out-of-bounds read. Builds with clang -fsanitize=fuzzer,address,undefined.
#include <cstddef>
#include <cstdint>
#include <span>

#include "gtap/format/reader.h"
#include "gtap/readers/api_stats.h"
#include "gtap/readers/capture.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const uint8_t> bytes(data, size);
  try {
    gtap::readers::Capture capture(bytes, "fuzz-input");
    gtap::readers::summarizeApi({&capture});
    for (const auto& chunk : capture.reader().chunks()) {
      try {
        auto decoded = capture.reader().decode(chunk);
        if (chunk.kind == static_cast<uint16_t>(gtap::schema::ChunkKind::BLOB)) {
          auto blob = decoded.root<gtap::schema::Blob>();
          volatile size_t n = blob.getData().size();
          (void)n;
        }
      } catch (const gtap::format::FormatError&) {
      } catch (const kj::Exception&) {
      }
    }
  } catch (const gtap::format::FormatError&) {
  }
  return 0;
}
