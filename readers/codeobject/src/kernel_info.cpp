#include <algorithm>
#include <utility>

#include "gtap/readers/code_object.h"

namespace gtap::readers {

namespace {

// The .value_kind strings of AMDGPUUsage's kernel argument tables (V3 to V6).
constexpr std::pair<std::string_view, ArgValueKind> kValueKinds[] = {
    {"by_value", ArgValueKind::byValue},
    {"global_buffer", ArgValueKind::globalBuffer},
    {"dynamic_shared_pointer", ArgValueKind::dynamicSharedPointer},
    {"sampler", ArgValueKind::sampler},
    {"image", ArgValueKind::image},
    {"pipe", ArgValueKind::pipe},
    {"queue", ArgValueKind::queue},
    {"hidden_global_offset_x", ArgValueKind::hiddenGlobalOffsetX},
    {"hidden_global_offset_y", ArgValueKind::hiddenGlobalOffsetY},
    {"hidden_global_offset_z", ArgValueKind::hiddenGlobalOffsetZ},
    {"hidden_none", ArgValueKind::hiddenNone},
    {"hidden_printf_buffer", ArgValueKind::hiddenPrintfBuffer},
    {"hidden_hostcall_buffer", ArgValueKind::hiddenHostcallBuffer},
    {"hidden_default_queue", ArgValueKind::hiddenDefaultQueue},
    {"hidden_completion_action", ArgValueKind::hiddenCompletionAction},
    {"hidden_multigrid_sync_arg", ArgValueKind::hiddenMultigridSyncArg},
    {"hidden_block_count_x", ArgValueKind::hiddenBlockCountX},
    {"hidden_block_count_y", ArgValueKind::hiddenBlockCountY},
    {"hidden_block_count_z", ArgValueKind::hiddenBlockCountZ},
    {"hidden_group_size_x", ArgValueKind::hiddenGroupSizeX},
    {"hidden_group_size_y", ArgValueKind::hiddenGroupSizeY},
    {"hidden_group_size_z", ArgValueKind::hiddenGroupSizeZ},
    {"hidden_remainder_x", ArgValueKind::hiddenRemainderX},
    {"hidden_remainder_y", ArgValueKind::hiddenRemainderY},
    {"hidden_remainder_z", ArgValueKind::hiddenRemainderZ},
    {"hidden_grid_dims", ArgValueKind::hiddenGridDims},
    {"hidden_heap_v1", ArgValueKind::hiddenHeapV1},
    {"hidden_dynamic_lds_size", ArgValueKind::hiddenDynamicLdsSize},
    {"hidden_private_base", ArgValueKind::hiddenPrivateBase},
    {"hidden_shared_base", ArgValueKind::hiddenSharedBase},
    {"hidden_queue_ptr", ArgValueKind::hiddenQueuePtr},
};

}  // namespace

ArgValueKind argValueKindFromString(std::string_view valueKind) {
  for (const auto& [text, kind] : kValueKinds) {
    if (text == valueKind) return kind;
  }
  return ArgValueKind::other;
}

size_t KernelInfo::hiddenArgCount() const {
  return static_cast<size_t>(
      std::count_if(args.begin(), args.end(), [](const KernelArg& a) { return a.hidden; }));
}

size_t KernelInfo::explicitArgCount() const { return args.size() - hiddenArgCount(); }

namespace {

// Of an argument that isPointer (metadata_decoder.cpp says which do): every
// hidden one is filled by the runtime.
KernargAddressKind addressKindOf(const KernelArg& arg) {
  if (arg.kind == ArgValueKind::dynamicSharedPointer) return KernargAddressKind::groupSegment;
  if (arg.hidden) return KernargAddressKind::runtimeOwned;
  if (arg.addressSpace == "local" || arg.addressSpace == "region") return KernargAddressKind::groupSegment;
  if (arg.addressSpace == "private") return KernargAddressKind::privateSegment;
  return KernargAddressKind::programMemory;
}

}  // namespace

std::vector<KernargAddress> kernargAddresses(const KernelInfo& kernel, const uint8_t* segment, size_t size,
                                             std::vector<std::string>& problems) {
  std::vector<KernargAddress> out;
  for (size_t i = 0; i < kernel.args.size(); ++i) {
    const KernelArg& arg = kernel.args[i];
    if (!arg.isPointer) continue;
    const std::string what = kernel.name + " argument " + std::to_string(i) +
                             (arg.name.empty() ? std::string() : " (" + arg.name + ")");
    if (arg.size != 4 && arg.size != 8) {
      problems.push_back(what + ": an address of " + std::to_string(arg.size) + " bytes");
      continue;
    }
    if (segment == nullptr || arg.offset > size || size - arg.offset < arg.size) {
      problems.push_back(what + ": bytes " + std::to_string(arg.offset) + ".." +
                         std::to_string(uint64_t(arg.offset) + arg.size) + " lie outside the " +
                         std::to_string(size) + "-byte kernarg segment");
      continue;
    }
    uint64_t value = 0;
    for (uint32_t b = 0; b < arg.size; ++b) value |= uint64_t(segment[arg.offset + b]) << (8 * b);
    out.push_back({i, arg.offset, arg.size, value, addressKindOf(arg)});
  }
  return out;
}

}  // namespace gtap::readers
