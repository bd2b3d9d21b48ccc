// What an AMDGPU code object (the ELF that HSA loads) says about its kernels:
// argument layout, register and memory needs, target. Read offline from the
// blobs a capture stores, so reports can name arguments and resources without
// a GPU or ROCm installed.
//
// Source of the layout: LLVM's AMDGPUUsage ("Code Object V3 Metadata" and
// later sections): an ELF note owned by "AMDGPU" of type NT_AMDGPU_METADATA
// (32) holding a MessagePack map, and one NAME.kd symbol per kernel descriptor.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gtap::readers {

// The documented .value_kind strings (code object V3 to V6). Unknown strings
// map to `other`; KernelArg::valueKind always keeps the original text.
enum class ArgValueKind {
  byValue,
  globalBuffer,
  dynamicSharedPointer,
  sampler,
  image,
  pipe,
  queue,
  hiddenGlobalOffsetX,
  hiddenGlobalOffsetY,
  hiddenGlobalOffsetZ,
  hiddenNone,
  hiddenPrintfBuffer,
  hiddenHostcallBuffer,
  hiddenDefaultQueue,
  hiddenCompletionAction,
  hiddenMultigridSyncArg,
  hiddenBlockCountX,
  hiddenBlockCountY,
  hiddenBlockCountZ,
  hiddenGroupSizeX,
  hiddenGroupSizeY,
  hiddenGroupSizeZ,
  hiddenRemainderX,
  hiddenRemainderY,
  hiddenRemainderZ,
  hiddenGridDims,
  hiddenHeapV1,
  hiddenDynamicLdsSize,
  hiddenPrivateBase,
  hiddenSharedBase,
  hiddenQueuePtr,
  other,
};

ArgValueKind argValueKindFromString(std::string_view valueKind);

struct KernelArg {
  std::string name;          // .name; empty when the compiler left it out
  std::string typeName;      // .type_name, e.g. "float*"; may be empty
  uint32_t offset = 0;       // in the kernarg segment
  uint32_t size = 0;
  std::string valueKind;     // .value_kind as written, e.g. "global_buffer"
  ArgValueKind kind = ArgValueKind::other;
  std::string addressSpace;  // .address_space ("global", "local", ...); empty for values
  // The kernarg bytes hold an address: buffers, dynamic LDS, images, samplers,
  // pipes, queues, explicit arguments with an .address_space, and the hidden
  // pointers the runtime fills (printf/hostcall buffers, queues, heap, ...),
  // but not unused hidden slots (hidden_none).
  bool isPointer = false;
  bool hidden = false;       // .value_kind starts with "hidden_": filled by the runtime
};

struct KernelInfo {
  std::string name;    // .name
  std::string symbol;  // .symbol, NAME.kd
  std::string language;  // .language and .language_version, e.g. "OpenCL C 1.2"; may be empty
  std::vector<KernelArg> args;  // in metadata order (explicit first, then hidden)
  uint32_t kernargSegmentSize = 0;
  uint32_t kernargSegmentAlign = 0;
  uint32_t groupSegmentFixedSize = 0;    // static LDS bytes per work-group
  uint32_t privateSegmentFixedSize = 0;  // scratch bytes per work-item
  uint32_t sgprCount = 0;
  uint32_t vgprCount = 0;
  uint32_t agprCount = 0;  // 0 when absent (targets without AGPRs, older compilers)
  uint32_t sgprSpillCount = 0;
  uint32_t vgprSpillCount = 0;
  uint32_t wavefrontSize = 0;
  uint32_t maxFlatWorkgroupSize = 0;
  std::array<uint32_t, 3> requiredWorkgroupSize{};  // 0s when absent

  // The NAME.kd symbol, when a symbol table holds it and its 64 bytes lie in a
  // section of the file. descriptorAddress is the symbol's value: what HSA
  // reports as the kernel object minus the load base (a section offset in
  // relocatable objects). descriptorOffset is where the bytes start in the
  // code object itself.
  bool hasDescriptor = false;
  uint64_t descriptorAddress = 0;
  uint64_t descriptorOffset = 0;

  size_t explicitArgCount() const;
  size_t hiddenArgCount() const;
};

struct CodeObjectInfo {
  // Target ID, e.g. "amdgcn-amd-amdhsa--gfx90a" or "...--gfx90a:xnack-":
  // amdhsa.target when present (V4 on), otherwise built from e_flags.
  std::string target;
  // Code object version from EI_ABIVERSION, as a number: "3", "4", "5"; empty
  // when the OS ABI is not AMDGPU_HSA.
  std::string abiVersion;
  std::string metadataVersion;  // amdhsa.version, e.g. "1.1"
  uint32_t elfFlags = 0;        // e_flags, for the processor and feature bits
  std::vector<KernelInfo> kernels;  // in metadata order
};

// What an address held in a kernarg segment points at, as a replay of the
// dispatch must treat it.
enum class KernargAddressKind {
  programMemory,  // memory the program allocated (global buffers, images, pipes, explicit global,
                  // constant or generic pointers): replay translates it to its own allocation
  runtimeOwned,   // a hidden pointer the runtime fills (printf and hostcall buffers, queues,
                  // completion action, multigrid sync, heap): replay's runtime fills its own
  groupSegment,   // an offset into the work-group's LDS (dynamic shared pointer, local or
                  // region address space): the same in any replay, never translated
  privateSegment, // a private (scratch) address: never translated
};

struct KernargAddress {
  size_t arg = 0;        // index in KernelInfo::args
  uint32_t offset = 0;   // in the segment
  uint32_t size = 0;     // 4 or 8 bytes
  uint64_t value = 0;    // as the segment holds it
  KernargAddressKind kind = KernargAddressKind::programMemory;
};

// The addresses a dispatch's kernarg segment holds, by the kernel's metadata
// (each argument that isPointer), in argument order. An argument whose bytes
// do not lie inside `segment`, or whose size is not 4 or 8, is named in
// `problems` and left out: a capture then cannot say what it points at.
std::vector<KernargAddress> kernargAddresses(const KernelInfo& kernel, const uint8_t* segment, size_t size,
                                             std::vector<std::string>& problems);

// Parses an AMDGPU ELF code object held in memory. Throws std::runtime_error
// naming what was wrong and where ("not an ELF file", "e_machine 62 is not
// EM_AMDGPU (224)", "NT_AMDGPU_METADATA note in section .note: msgpack: ...").
// Hostile input is refused, never read out of bounds. The bytes are copied
// first, so `data` needs no alignment and is never written.
CodeObjectInfo parseAmdgpuCodeObject(const void* data, size_t size);

// Reads the kernel metadata of any 64-bit little-endian ELF that carries an
// NT_AMDGPU_METADATA note: AMDGPU code objects exactly as
// parseAmdgpuCodeObject does, and others such as the simulated HSA runtime's
// (host shared objects with the note a compiler would emit), for which the
// target is amdhsa.target (empty when absent), abiVersion is empty, elfFlags
// 0, and hasDescriptor false unless the file has a NAME.kd symbol. Throws
// std::runtime_error as parseAmdgpuCodeObject does, and saying so for an ELF
// without the note.
CodeObjectInfo parseCodeObjectMetadata(const void* data, size_t size);

// Cheap check used to pick the parser: a 64-bit little-endian ELF for EM_AMDGPU.
bool looksLikeAmdgpuCodeObject(const void* data, size_t size);

}  // namespace gtap::readers
