#include "metadata_decoder.h"

#include <msgpack.hpp>

#include <array>
#include <limits>
#include <stdexcept>
#include <string_view>

namespace gtap::readers::codeobject {

namespace {

[[noreturn]] void fail(const std::string& where, const std::string& what) {
  throw std::runtime_error(where + ": " + what);
}

const char* describe(const msgpack::object& o) {
  switch (o.type) {
    case msgpack::type::NIL: return "nil";
    case msgpack::type::BOOLEAN: return "a boolean";
    case msgpack::type::POSITIVE_INTEGER: return "an unsigned integer";
    case msgpack::type::NEGATIVE_INTEGER: return "a negative integer";
    case msgpack::type::FLOAT32:
    case msgpack::type::FLOAT64: return "a float";
    case msgpack::type::STR: return "a string";
    case msgpack::type::BIN: return "binary data";
    case msgpack::type::ARRAY: return "an array";
    case msgpack::type::MAP: return "a map";
    case msgpack::type::EXT: return "an extension value";
  }
  return "an unknown type";
}

void expectType(const msgpack::object& o, msgpack::type::object_type type, const char* expected,
                const std::string& where) {
  if (o.type != type) fail(where, std::string("expected ") + expected + ", found " + describe(o));
}

std::string_view stringOf(const msgpack::object& o) {
  return {o.via.str.ptr, o.via.str.size};
}

// Keys that are not strings cannot be ones we look for; they are skipped, not refused.
const msgpack::object* lookup(const msgpack::object& map, std::string_view key) {
  for (uint32_t i = 0; i < map.via.map.size; ++i) {
    const msgpack::object_kv& entry = map.via.map.ptr[i];
    if (entry.key.type == msgpack::type::STR && stringOf(entry.key) == key) return &entry.val;
  }
  return nullptr;
}

uint32_t toU32(const msgpack::object& o, const std::string& where) {
  expectType(o, msgpack::type::POSITIVE_INTEGER, "an unsigned integer", where);
  if (o.via.u64 > std::numeric_limits<uint32_t>::max()) {
    fail(where, std::to_string(o.via.u64) + " does not fit in 32 bits");
  }
  return static_cast<uint32_t>(o.via.u64);
}

std::string toString(const msgpack::object& o, const std::string& where) {
  expectType(o, msgpack::type::STR, "a string", where);
  return std::string(stringOf(o));
}

// Reads `key` into `out` when present; absent keys leave the default.
void readU32(const msgpack::object& map, std::string_view key, const std::string& where,
             uint32_t& out) {
  if (const msgpack::object* value = lookup(map, key)) {
    out = toU32(*value, where + ": " + std::string(key));
  }
}

void readString(const msgpack::object& map, std::string_view key, const std::string& where,
                std::string& out) {
  if (const msgpack::object* value = lookup(map, key)) {
    out = toString(*value, where + ": " + std::string(key));
  }
}

const msgpack::object& require(const msgpack::object& map, std::string_view key,
                               const std::string& where) {
  const msgpack::object* value = lookup(map, key);
  if (value == nullptr) fail(where, "missing " + std::string(key));
  return *value;
}

// Arrays of unsigned integers with a fixed length: versions, work-group sizes.
template <size_t N>
std::array<uint32_t, N> toU32Array(const msgpack::object& o, const std::string& where) {
  expectType(o, msgpack::type::ARRAY, "an array", where);
  if (o.via.array.size != N) {
    fail(where, "expected " + std::to_string(N) + " elements, found " +
                    std::to_string(o.via.array.size));
  }
  std::array<uint32_t, N> values{};
  for (size_t i = 0; i < N; ++i) {
    values[i] = toU32(o.via.array.ptr[i], where + "[" + std::to_string(i) + "]");
  }
  return values;
}

bool holdsAddress(ArgValueKind kind) {
  switch (kind) {
    case ArgValueKind::globalBuffer:
    case ArgValueKind::dynamicSharedPointer:
    case ArgValueKind::sampler:
    case ArgValueKind::image:
    case ArgValueKind::pipe:
    case ArgValueKind::queue:
    case ArgValueKind::hiddenPrintfBuffer:
    case ArgValueKind::hiddenHostcallBuffer:
    case ArgValueKind::hiddenDefaultQueue:
    case ArgValueKind::hiddenCompletionAction:
    case ArgValueKind::hiddenMultigridSyncArg:
    case ArgValueKind::hiddenHeapV1:
    case ArgValueKind::hiddenQueuePtr:
      return true;
    default:
      return false;
  }
}

KernelArg decodeArg(const msgpack::object& o, const std::string& where) {
  expectType(o, msgpack::type::MAP, "a map", where);
  KernelArg arg;
  arg.offset = toU32(require(o, ".offset", where), where + ": .offset");
  arg.size = toU32(require(o, ".size", where), where + ": .size");
  arg.valueKind = toString(require(o, ".value_kind", where), where + ": .value_kind");
  readString(o, ".name", where, arg.name);
  readString(o, ".type_name", where, arg.typeName);
  readString(o, ".address_space", where, arg.addressSpace);
  arg.kind = argValueKindFromString(arg.valueKind);
  arg.hidden = arg.valueKind.starts_with("hidden_");
  // Unused hidden slots (hidden_none) carry an address space too; only the
  // kind says whether the runtime puts an address there.
  arg.isPointer = holdsAddress(arg.kind) || (!arg.hidden && !arg.addressSpace.empty());
  return arg;
}

KernelInfo decodeKernel(const msgpack::object& o, const std::string& position) {
  expectType(o, msgpack::type::MAP, "a map", position);
  KernelInfo kernel;
  kernel.name = toString(require(o, ".name", position), position + ": .name");
  // Error context is built for every field, so a forged megabyte-long name
  // must not be copied into each of them.
  constexpr size_t kNameInContext = 80;
  const std::string shownName = kernel.name.size() <= kNameInContext
                                    ? kernel.name
                                    : kernel.name.substr(0, kNameInContext) + "...";
  const std::string where = position + " (" + shownName + ")";

  readString(o, ".symbol", where, kernel.symbol);
  if (kernel.symbol.empty()) kernel.symbol = kernel.name + ".kd";

  readString(o, ".language", where, kernel.language);
  if (const msgpack::object* version = lookup(o, ".language_version")) {
    const auto v = toU32Array<2>(*version, where + ": .language_version");
    if (!kernel.language.empty()) kernel.language += ' ';
    kernel.language += std::to_string(v[0]) + "." + std::to_string(v[1]);
  }

  readU32(o, ".kernarg_segment_size", where, kernel.kernargSegmentSize);
  readU32(o, ".kernarg_segment_align", where, kernel.kernargSegmentAlign);
  readU32(o, ".group_segment_fixed_size", where, kernel.groupSegmentFixedSize);
  readU32(o, ".private_segment_fixed_size", where, kernel.privateSegmentFixedSize);
  readU32(o, ".sgpr_count", where, kernel.sgprCount);
  readU32(o, ".vgpr_count", where, kernel.vgprCount);
  readU32(o, ".agpr_count", where, kernel.agprCount);
  readU32(o, ".sgpr_spill_count", where, kernel.sgprSpillCount);
  readU32(o, ".vgpr_spill_count", where, kernel.vgprSpillCount);
  readU32(o, ".wavefront_size", where, kernel.wavefrontSize);
  readU32(o, ".max_flat_workgroup_size", where, kernel.maxFlatWorkgroupSize);
  if (const msgpack::object* size = lookup(o, ".reqd_workgroup_size")) {
    kernel.requiredWorkgroupSize = toU32Array<3>(*size, where + ": .reqd_workgroup_size");
  }

  if (const msgpack::object* args = lookup(o, ".args")) {
    expectType(*args, msgpack::type::ARRAY, "an array", where + ": .args");
    for (uint32_t i = 0; i < args->via.array.size; ++i) {
      kernel.args.push_back(
          decodeArg(args->via.array.ptr[i], where + ": .args[" + std::to_string(i) + "]"));
    }
  }
  return kernel;
}

}  // namespace

DecodedMetadata decodeMetadata(const uint8_t* bytes, size_t size) {
  // No container can hold more elements than there are bytes, and the
  // documented map is six levels deep: these limits keep a forged length
  // from allocating gigabytes and forged nesting from exhausting the stack.
  const size_t most = size;
  const msgpack::unpack_limit limits(most, most, most, most, most, 32);
  msgpack::object_handle handle;
  try {
    size_t offset = 0;
    handle = msgpack::unpack(reinterpret_cast<const char*>(bytes), size, offset, nullptr, nullptr,
                             limits);
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("msgpack: ") + e.what());
  }
  const msgpack::object& root = handle.get();
  expectType(root, msgpack::type::MAP, "a map", "metadata root");

  DecodedMetadata result;
  readString(root, "amdhsa.target", "metadata", result.target);
  if (const msgpack::object* version = lookup(root, "amdhsa.version")) {
    const auto v = toU32Array<2>(*version, "amdhsa.version");
    result.version = std::to_string(v[0]) + "." + std::to_string(v[1]);
  }
  if (const msgpack::object* kernels = lookup(root, "amdhsa.kernels")) {
    expectType(*kernels, msgpack::type::ARRAY, "an array", "amdhsa.kernels");
    for (uint32_t i = 0; i < kernels->via.array.size; ++i) {
      result.kernels.push_back(
          decodeKernel(kernels->via.array.ptr[i], "amdhsa.kernels[" + std::to_string(i) + "]"));
    }
  }
  return result;
}

}  // namespace gtap::readers::codeobject
