// libFuzzer target: `gtap replay` on any byte string, up to the first call
// into a runtime: the capture opened, its replay stream read, and the replay
// validated (cut streams, unsupported records, scopes) with every payload
// resolved: blobs assembled and external files checked, read-backs included.
// Anything refused must be a std::exception, as replay reports them.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <span>

#include "gtap/readers/capture.h"
#include "gtap/readers/replay_stream.h"
#include "gtap/readers/replayer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    gtap::readers::Capture capture(std::span<const uint8_t>(data, size), "fuzz-input");
    gtap::readers::ReplayStream stream = gtap::readers::loadReplayStream(capture);
    gtap::readers::ReplayOptions options;
    options.verify = true;
    gtap::readers::Replayer replayer(capture, stream, options);
    replayer.validate();
  } catch (const std::exception&) {
  }
  return 0;
}
