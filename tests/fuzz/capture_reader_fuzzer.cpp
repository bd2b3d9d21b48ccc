// libFuzzer target: any byte string given to the reader must end in a clean
// answer (chunks read, a FormatError, or notes), never a crash or an
// out-of-bounds read. Builds with clang -fsanitize=fuzzer,address,undefined.
#include <cstddef>
#include <cstdint>
#include <span>

#include "gtap/format/reader.h"
#include "gtap/readers/api_stats.h"
#include "gtap/readers/capture.h"
#include "gtap/readers/executables.h"
#include "gtap/readers/memory_stats.h"
#include "gtap/readers/overview.h"
#include "gtap/readers/timeline_builder.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const uint8_t> bytes(data, size);
  try {
    gtap::readers::Capture capture(bytes, "fuzz-input");
    gtap::readers::summarizeApi({&capture});
    // Device work, with hostile device clocks and object references.
    std::vector<gtap::readers::LoadedCapture> loaded{{&capture, gtap::readers::loadDeviceWork(capture)}};
    gtap::readers::overviewOf(loaded[0], 3);
    gtap::readers::kernelRows(loaded, gtap::readers::KernelGrouping::shape, true);
    gtap::readers::allocationRows(loaded, false);
    gtap::readers::transferRows(loaded, false);
    gtap::readers::buildTimeline(loaded);
    std::vector<std::string> notes;
    gtap::readers::executableRows(loaded, notes);  // blob reassembly and code-object parsing
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
