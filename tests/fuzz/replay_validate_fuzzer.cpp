// libFuzzer target: `gtap replay` up to the first call into a runtime
// (gtap::fuzz::replayValidate); no runtime is loaded.
#include "fuzz_inputs.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gtap::fuzz::replayValidate({data, size});
  return 0;
}
