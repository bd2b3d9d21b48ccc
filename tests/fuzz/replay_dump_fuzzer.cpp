// libFuzzer target: `gtap dump`'s whole path (gtap::fuzz::replayDump).
#include "fuzz_inputs.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gtap::fuzz::replayDump({data, size});
  return 0;
}
