// libFuzzer target: `gtap dump`'s whole path on any byte string. Opening the
// capture and reading its replay stream may refuse the input with an
// exception, as dump reports them; writing the records and the summary must
// then never throw, crash or read out of bounds.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <ostream>
#include <span>
#include <streambuf>

#include "gtap/readers/capture.h"
#include "gtap/readers/replay_dump.h"
#include "gtap/readers/replay_stream.h"

namespace {

// The output is formatted whole and thrown away.
class Discard : public std::streambuf {
 protected:
  int overflow(int c) override { return c; }
  std::streamsize xsputn(const char*, std::streamsize n) override { return n; }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::unique_ptr<gtap::readers::Capture> capture;
  gtap::readers::ReplayStream stream;
  try {
    capture = std::make_unique<gtap::readers::Capture>(std::span<const uint8_t>(data, size), "fuzz-input");
    stream = gtap::readers::loadReplayStream(*capture);
  } catch (const std::exception&) {
    return 0;
  }
  Discard sink;
  std::ostream out(&sink);
  gtap::readers::writeReplayDumpText(out, *capture, stream);
  gtap::readers::writeReplayDumpJsonLines(out, *capture, stream);
  return 0;
}
