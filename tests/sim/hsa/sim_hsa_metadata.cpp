// sim_hsa_metadata CODE_OBJECT NOTE_FILE
//
// Writes the NT_AMDGPU_METADATA note a compiler would put in an AMDGPU code
// object, for a code object of the simulated HSA runtime: one ELF note record
// (owner "AMDGPU", type 32) whose descriptor is the MessagePack map of
// LLVM's AMDGPUUsage ("Code Object V3 Metadata"). gtap_add_sim_hsa_code_object
// runs it after linking and adds the note to the shared object with objcopy,
// so gtap reads simulated and real code objects through one path.
//
// The kernels and their argument lists come from the built object itself: it
// is host code, so it is dlopened and its two accessors
// (gtap_sim_hsa_code_object_kernels and _arguments) are called. A kernel
// without GTAP_SIM_HSA_ARGUMENTS, or an argument outside its kernarg segment,
// fails the build with a message naming the kernel and the file.
#include <dlfcn.h>

#include <msgpack.hpp>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#define GTAP_SIM_HSA_KERNEL_TYPES_ONLY
#include "gtap_sim_hsa_kernel.h"

namespace {

// The simulated GPU's ISA name, as the runtime reports it (src/agent.cpp).
#if defined(__x86_64__)
constexpr char kTarget[] = "gtap-sim-host-x86_64";
#elif defined(__aarch64__)
constexpr char kTarget[] = "gtap-sim-host-aarch64";
#else
#error "the simulated HSA runtime needs to name the host architecture"
#endif

// What every simulated kernel has, whatever its code: the runtime's
// wavefront size and largest work-group; registers are not modelled.
constexpr uint32_t kWavefrontSize = 64;
constexpr uint32_t kMaxFlatWorkgroupSize = 1024;
constexpr uint32_t kNtAmdgpuMetadata = 32;
constexpr char kNoteOwner[] = "AMDGPU";  // namesz 7, with the NUL

using KernelsFn = const gtap_sim_hsa_kernel_desc* const* (*)(uint32_t*);
using ArgumentsFn = const gtap_sim_hsa_kernel_args* const* (*)(uint32_t*);

struct Kernel {
  const gtap_sim_hsa_kernel_desc* desc = nullptr;
  std::vector<gtap_sim_hsa_arg_desc> args;
};

std::string quoted(const char* s) { return s != nullptr ? "'" + std::string(s) + "'" : "(unnamed)"; }

bool knownValueKind(std::string_view kind) {
  // The explicit kinds a host struct can model; hidden ones the runtime fills.
  return kind == "by_value" || kind == "global_buffer" || kind == "dynamic_shared_pointer" ||
         (kind.starts_with("hidden_") && kind.size() > 7);
}

// Every kernel with its argument list, checked.
std::vector<Kernel> readKernels(const std::string& path) {
  // RTLD_LOCAL: nothing of the code object is seen by anything else here.
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) throw std::runtime_error(std::string("cannot load it: ") + dlerror());
  auto kernelsFn = reinterpret_cast<KernelsFn>(dlsym(library, "gtap_sim_hsa_code_object_kernels"));
  if (kernelsFn == nullptr) {
    throw std::runtime_error("it has no gtap_sim_hsa_code_object_kernels (not built with gtap_sim_hsa_kernel.h)");
  }
  auto argumentsFn = reinterpret_cast<ArgumentsFn>(dlsym(library, "gtap_sim_hsa_code_object_arguments"));

  uint32_t kernelCount = 0;
  const gtap_sim_hsa_kernel_desc* const* descs = kernelsFn(&kernelCount);
  uint32_t layoutCount = 0;
  const gtap_sim_hsa_kernel_args* const* layouts = argumentsFn != nullptr ? argumentsFn(&layoutCount) : nullptr;

  std::map<const gtap_sim_hsa_kernel_desc*, const gtap_sim_hsa_kernel_args*> layoutOf;
  for (uint32_t i = 0; i < layoutCount; ++i) {
    const gtap_sim_hsa_kernel_args* layout = layouts[i];
    if (layout == nullptr || layout->version != GTAP_SIM_HSA_ARGUMENTS_VERSION) {
      throw std::runtime_error("argument list " + std::to_string(i) + " has version " +
                               (layout ? std::to_string(layout->version) : std::string("(none)")) +
                               ", this generator reads version " +
                               std::to_string(GTAP_SIM_HSA_ARGUMENTS_VERSION) + ": rebuild it");
    }
    layoutOf[layout->kernel] = layout;
  }

  std::vector<Kernel> kernels;
  for (uint32_t i = 0; i < kernelCount; ++i) {
    const gtap_sim_hsa_kernel_desc* desc = descs[i];
    if (desc == nullptr || desc->abi_version != GTAP_SIM_HSA_KERNEL_ABI_VERSION || desc->name == nullptr) {
      throw std::runtime_error("kernel descriptor " + std::to_string(i) + " is malformed or of another ABI version");
    }
    const std::string where = "kernel " + quoted(desc->name);
    auto found = layoutOf.find(desc);
    if (found == layoutOf.end()) {
      throw std::runtime_error(where + " has no argument layout: add GTAP_SIM_HSA_ARGUMENTS(" +
                               std::string(desc->name) + ", <args type>, ...) after its definition");
    }
    const std::string source = found->second->source_file ? found->second->source_file : "?";
    uint32_t argCount = 0;
    const gtap_sim_hsa_arg_desc* list = found->second->arguments(&argCount);
    Kernel kernel{desc, {list, list + argCount}};
    for (uint32_t a = 0; a < argCount; ++a) {
      const gtap_sim_hsa_arg_desc& arg = kernel.args[a];
      const std::string argWhere = where + " (" + source + "), argument " + std::to_string(a) + " " + quoted(arg.name);
      if (arg.name == nullptr || arg.value_kind == nullptr || !knownValueKind(arg.value_kind)) {
        throw std::runtime_error(argWhere + ": value kind " + quoted(arg.value_kind) +
                                 " is not by_value, global_buffer, dynamic_shared_pointer or hidden_*");
      }
      if (arg.size == 0 || arg.offset > desc->kernarg_segment_size ||
          arg.size > desc->kernarg_segment_size - arg.offset) {
        throw std::runtime_error(argWhere + ": bytes " + std::to_string(arg.offset) + ".." +
                                 std::to_string(uint64_t(arg.offset) + arg.size) +
                                 " are not inside the kernarg segment of " +
                                 std::to_string(desc->kernarg_segment_size) +
                                 " bytes (is the layout's type the kernel's?)");
      }
      for (uint32_t b = 0; b < a; ++b) {
        const gtap_sim_hsa_arg_desc& other = kernel.args[b];
        if (arg.offset < other.offset + other.size && other.offset < arg.offset + arg.size) {
          throw std::runtime_error(argWhere + " overlaps argument " + std::to_string(b) + " " + quoted(other.name));
        }
      }
    }
    kernels.push_back(std::move(kernel));
  }
  // The library stays loaded: the names point into it until the note is written.
  return kernels;
}

template <typename Packer>
void packString(Packer& p, std::string_view s) {
  p.pack_str(static_cast<uint32_t>(s.size()));
  p.pack_str_body(s.data(), static_cast<uint32_t>(s.size()));
}

msgpack::sbuffer packMetadata(const std::vector<Kernel>& kernels) {
  msgpack::sbuffer buffer;
  msgpack::packer<msgpack::sbuffer> p(buffer);
  p.pack_map(3);
  packString(p, "amdhsa.version");
  p.pack_array(2);
  p.pack_uint32(1);
  p.pack_uint32(2);
  packString(p, "amdhsa.target");
  packString(p, kTarget);
  packString(p, "amdhsa.kernels");
  p.pack_array(static_cast<uint32_t>(kernels.size()));
  for (const Kernel& k : kernels) {
    const auto field = [&](std::string_view key, uint32_t value) {
      packString(p, key);
      p.pack_uint32(value);
    };
    p.pack_map(11);
    packString(p, ".name");
    packString(p, k.desc->name);
    packString(p, ".symbol");
    packString(p, std::string(k.desc->name) + ".kd");
    field(".kernarg_segment_size", k.desc->kernarg_segment_size);
    field(".kernarg_segment_align", k.desc->kernarg_segment_alignment);
    field(".group_segment_fixed_size", k.desc->group_segment_size);
    field(".private_segment_fixed_size", k.desc->private_segment_size);
    field(".wavefront_size", kWavefrontSize);
    field(".sgpr_count", 0);
    field(".vgpr_count", 0);
    field(".max_flat_workgroup_size", kMaxFlatWorkgroupSize);
    packString(p, ".args");
    p.pack_array(static_cast<uint32_t>(k.args.size()));
    for (const gtap_sim_hsa_arg_desc& a : k.args) {
      p.pack_map(a.address_space != nullptr ? 5 : 4);
      packString(p, ".name");
      packString(p, a.name);
      field(".offset", a.offset);
      field(".size", a.size);
      packString(p, ".value_kind");
      packString(p, a.value_kind);
      if (a.address_space != nullptr) {
        packString(p, ".address_space");
        packString(p, a.address_space);
      }
    }
  }
  return buffer;
}

// One ELF note record: namesz, descsz, type, then name and descriptor, each
// padded to 4 bytes (the alignment of notes in 64-bit objects, as compilers
// write them for AMDGPU).
std::vector<char> noteRecord(const msgpack::sbuffer& desc) {
  const auto padded = [](size_t n) { return (n + 3) / 4 * 4; };
  const uint32_t header[3] = {sizeof kNoteOwner, static_cast<uint32_t>(desc.size()), kNtAmdgpuMetadata};
  std::vector<char> note(sizeof header + padded(sizeof kNoteOwner) + padded(desc.size()), '\0');
  std::memcpy(note.data(), header, sizeof header);  // host order: the host is little-endian
  std::memcpy(note.data() + sizeof header, kNoteOwner, sizeof kNoteOwner);
  std::memcpy(note.data() + sizeof header + padded(sizeof kNoteOwner), desc.data(), desc.size());
  return note;
}

}  // namespace

int main(int argc, char** argv) {
  static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "AMDGPU notes are little-endian");
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s CODE_OBJECT NOTE_FILE\n", argv[0]);
    return 2;
  }
  const std::string codeObject = argv[1];
  const std::string output = argv[2];
  try {
    const std::vector<char> note = noteRecord(packMetadata(readKernels(codeObject)));
    std::ofstream out(output, std::ios::binary | std::ios::trunc);
    if (!out.write(note.data(), static_cast<std::streamsize>(note.size())) || !out.flush()) {
      throw std::runtime_error("cannot write " + output);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sim_hsa_metadata: %s: %s\n", codeObject.c_str(), e.what());
    std::remove(output.c_str());
    return 1;
  }
  return 0;
}
