// Decodes the MessagePack map of an NT_AMDGPU_METADATA note (code object V3
// and later) into kernel descriptions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "gtap/readers/code_object.h"

namespace gtap::readers::codeobject {

struct DecodedMetadata {
  std::string target;   // amdhsa.target; empty before V4
  std::string version;  // amdhsa.version as "major.minor"
  std::vector<KernelInfo> kernels;  // without descriptor locations
};

// Throws std::runtime_error naming the key path, e.g.
// "amdhsa.kernels[1] (tile_sum): .args[2]: .offset: expected an unsigned integer, found a string",
// or "msgpack: ..." when the bytes are not MessagePack.
DecodedMetadata decodeMetadata(const uint8_t* bytes, size_t size);

}  // namespace gtap::readers::codeobject
