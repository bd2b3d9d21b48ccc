// libFuzzer target: the capture reader as the reports use it
// (gtap::fuzz::captureReader). Built with clang -fsanitize=fuzzer,address,undefined.
#include "fuzz_inputs.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gtap::fuzz::captureReader({data, size});
  return 0;
}
