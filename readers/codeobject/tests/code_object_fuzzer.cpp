// libFuzzer target: any byte string given to the code object parsers (the
// AMDGPU one, and the metadata reader that also takes other ELFs carrying the
// note) must end in a parse or a std::runtime_error, never a crash or an
// out-of-bounds read.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "gtap/readers/code_object.h"

namespace {

void exercise(const gtap::readers::CodeObjectInfo& info, const uint8_t* data, size_t size) {
  size_t hidden = 0;
  std::vector<std::string> problems;
  for (const auto& kernel : info.kernels) {
    hidden += kernel.hiddenArgCount();
    // The input's own bytes as a kernarg segment: hostile offsets and sizes.
    hidden += gtap::readers::kernargAddresses(kernel, data, size, problems).size();
  }
  (void)hidden;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gtap::readers::looksLikeAmdgpuCodeObject(data, size);
  try {
    exercise(gtap::readers::parseAmdgpuCodeObject(data, size), data, size);
  } catch (const std::runtime_error&) {
  }
  try {
    exercise(gtap::readers::parseCodeObjectMetadata(data, size), data, size);
  } catch (const std::runtime_error&) {
  }
  return 0;
}
