// The ELF side of a code object: header checks, finding the metadata note,
// and locating each kernel's descriptor symbol. libelf checks every offset
// and size against the image it was given, so hostile headers yield errors.
#include "gtap/readers/code_object.h"

#include <elf.h>
#include <gelf.h>
#include <libelf.h>

#include <cstddef>
#include <cstring>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "metadata_decoder.h"
#include "target_id.h"

namespace gtap::readers {

namespace {

using codeobject::codeObjectVersion;
using codeobject::decodeMetadata;
using codeobject::targetIdFromElfHeader;

// AMDGPUUsage, "Note Records": code object V3 and later.
constexpr uint32_t kNtAmdgpuMetadata = 32;
constexpr char kNoteOwner[] = "AMDGPU";  // n_namesz counts the NUL
constexpr size_t kKernelDescriptorSize = 64;
constexpr std::string_view kDescriptorSuffix = ".kd";

struct ElfCloser {
  void operator()(Elf* elf) const { elf_end(elf); }
};
using ElfHandle = std::unique_ptr<Elf, ElfCloser>;

std::string libelfError() { return elf_errmsg(-1); }

uint16_t readLe16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }

uint32_t readLe32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}

// Checked on the raw bytes so the common refusals ("not ELF", "another
// machine") need no libelf and say exactly what was found.
void checkElf64LittleEndian(const uint8_t* bytes, size_t size) {
  if (bytes == nullptr || size < SELFMAG || std::memcmp(bytes, ELFMAG, SELFMAG) != 0) {
    throw std::runtime_error("not an ELF file: the first bytes are not \\x7fELF");
  }
  if (size < sizeof(Elf64_Ehdr)) {
    throw std::runtime_error("truncated ELF header: " + std::to_string(size) +
                             " bytes, a 64-bit header needs " + std::to_string(sizeof(Elf64_Ehdr)));
  }
  if (bytes[EI_CLASS] != ELFCLASS64) {
    throw std::runtime_error("ELF class " + std::to_string(bytes[EI_CLASS]) +
                             " is not ELFCLASS64 (2): AMDGPU code objects are 64-bit");
  }
  if (bytes[EI_DATA] != ELFDATA2LSB) {
    throw std::runtime_error("ELF data encoding " + std::to_string(bytes[EI_DATA]) +
                             " is not ELFDATA2LSB (1): AMDGPU code objects are little-endian");
  }
}

uint16_t elfMachine(const uint8_t* bytes) { return readLe16(bytes + offsetof(Elf64_Ehdr, e_machine)); }

void checkElfHeader(const uint8_t* bytes, size_t size) {
  checkElf64LittleEndian(bytes, size);
  const uint16_t machine = elfMachine(bytes);
  if (machine != EM_AMDGPU) {
    throw std::runtime_error("e_machine " + std::to_string(machine) + " is not EM_AMDGPU (" +
                             std::to_string(EM_AMDGPU) + ")");
  }
}

struct MetadataNote {
  const uint8_t* desc = nullptr;
  size_t size = 0;
  std::string where;  // "section .note" or "PT_NOTE segment 7"
};

// gelf_getnote bounds the note by the data it was given; the extra checks
// keep this code correct even if a libelf version were laxer.
std::optional<MetadataNote> findInNotes(Elf_Data* data) {
  if (data == nullptr || data->d_buf == nullptr) return std::nullopt;
  const auto* base = static_cast<const uint8_t*>(data->d_buf);
  const size_t total = data->d_size;
  size_t offset = 0;
  while (offset < total) {
    GElf_Nhdr header;
    size_t nameOffset = 0;
    size_t descOffset = 0;
    const size_t next = gelf_getnote(data, offset, &header, &nameOffset, &descOffset);
    if (next <= offset) break;
    const bool inside = nameOffset <= total && header.n_namesz <= total - nameOffset &&
                        descOffset <= total && header.n_descsz <= total - descOffset;
    if (inside && header.n_type == kNtAmdgpuMetadata && header.n_namesz == sizeof kNoteOwner &&
        std::memcmp(base + nameOffset, kNoteOwner, sizeof kNoteOwner) == 0) {
      return MetadataNote{base + descOffset, header.n_descsz, {}};
    }
    offset = next;
  }
  return std::nullopt;
}

std::string sectionName(Elf* elf, size_t index, const GElf_Shdr& header) {
  size_t namesIndex = 0;
  if (elf_getshdrstrndx(elf, &namesIndex) == 0) {
    if (const char* name = elf_strptr(elf, namesIndex, header.sh_name)) return name;
  }
  return "[" + std::to_string(index) + "]";
}

// Sections first (they name where the note was); segments cover objects whose
// section headers were stripped or cut off.
std::optional<MetadataNote> findMetadataNote(Elf* elf) {
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr header;
    if (gelf_getshdr(scn, &header) == nullptr || header.sh_type != SHT_NOTE) continue;
    if (auto note = findInNotes(elf_getdata(scn, nullptr))) {
      note->where = "section " + sectionName(elf, elf_ndxscn(scn), header);
      return note;
    }
  }
  size_t segments = 0;
  if (elf_getphdrnum(elf, &segments) != 0) return std::nullopt;
  for (size_t i = 0; i < segments; ++i) {
    GElf_Phdr header;
    if (gelf_getphdr(elf, static_cast<int>(i), &header) == nullptr || header.p_type != PT_NOTE) {
      continue;
    }
    const Elf_Type type = header.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR;
    if (auto note = findInNotes(elf_getdata_rawchunk(elf, static_cast<int64_t>(header.p_offset),
                                                     header.p_filesz, type))) {
      note->where = "PT_NOTE segment " + std::to_string(i);
      return note;
    }
  }
  return std::nullopt;
}

struct DescriptorSymbol {
  uint64_t value = 0;
  size_t section = 0;
};

// NAME.kd symbols from .symtab and .dynsym (either may be stripped).
std::unordered_map<std::string, DescriptorSymbol> descriptorSymbols(Elf* elf) {
  std::unordered_map<std::string, DescriptorSymbol> symbols;
  const size_t entrySize = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
  if (entrySize == 0) return symbols;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr header;
    if (gelf_getshdr(scn, &header) == nullptr ||
        (header.sh_type != SHT_SYMTAB && header.sh_type != SHT_DYNSYM)) {
      continue;
    }
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (data == nullptr) continue;
    const size_t count = data->d_size / entrySize;
    for (size_t i = 0; i < count; ++i) {
      GElf_Sym symbol;
      if (gelf_getsym(data, static_cast<int>(i), &symbol) == nullptr) break;
      if (symbol.st_shndx == SHN_UNDEF || symbol.st_shndx >= SHN_LORESERVE) continue;
      const char* name = elf_strptr(elf, header.sh_link, symbol.st_name);
      if (name == nullptr) continue;
      const std::string_view view(name);
      if (!view.ends_with(kDescriptorSuffix)) continue;
      symbols.try_emplace(std::string(view), DescriptorSymbol{symbol.st_value, symbol.st_shndx});
    }
  }
  return symbols;
}

// Where the descriptor's bytes are in the file: the symbol's place in its
// section (st_value is an address in loadable objects and a section offset in
// relocatable ones, where sh_addr is 0) plus the section's file offset.
std::optional<uint64_t> descriptorFileOffset(Elf* elf, const DescriptorSymbol& symbol,
                                             size_t fileSize) {
  Elf_Scn* scn = elf_getscn(elf, symbol.section);
  GElf_Shdr header;
  if (scn == nullptr || gelf_getshdr(scn, &header) == nullptr || header.sh_type == SHT_NOBITS) {
    return std::nullopt;
  }
  if (symbol.value < header.sh_addr) return std::nullopt;
  const uint64_t within = symbol.value - header.sh_addr;
  if (within > header.sh_size || header.sh_size - within < kKernelDescriptorSize) {
    return std::nullopt;
  }
  if (header.sh_offset > fileSize || within > fileSize - header.sh_offset) return std::nullopt;
  const uint64_t offset = header.sh_offset + within;
  if (fileSize - offset < kKernelDescriptorSize) return std::nullopt;
  return offset;
}

void initLibelf() {
  static const bool ready = elf_version(EV_CURRENT) != EV_NONE;
  if (!ready) throw std::runtime_error("libelf: " + libelfError());
}

}  // namespace

bool looksLikeAmdgpuCodeObject(const void* data, size_t size) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  return bytes != nullptr && size >= sizeof(Elf64_Ehdr) &&
         std::memcmp(bytes, ELFMAG, SELFMAG) == 0 && bytes[EI_CLASS] == ELFCLASS64 &&
         bytes[EI_DATA] == ELFDATA2LSB &&
         readLe16(bytes + offsetof(Elf64_Ehdr, e_machine)) == EM_AMDGPU;
}

namespace {

// The metadata note and descriptor symbols of an ELF whose header has been
// checked. `amdgpu`: an EM_AMDGPU object, whose header also says the target
// and code object version; any other ELF has only what its note says.
CodeObjectInfo parseCheckedElf(const uint8_t* bytes, size_t size, bool amdgpu) {
  initLibelf();

  // libelf takes a writable image and may convert it in place; a private,
  // suitably aligned copy keeps the caller's bytes untouched.
  std::unique_ptr<char[]> image(new char[size]);
  std::memcpy(image.get(), bytes, size);
  ElfHandle elf(elf_memory(image.get(), size));
  if (!elf || elf_kind(elf.get()) != ELF_K_ELF) {
    throw std::runtime_error("libelf cannot read the ELF image: " + libelfError());
  }

  const uint8_t osAbi = bytes[EI_OSABI];
  const uint8_t abiVersion = bytes[EI_ABIVERSION];
  const uint32_t flags = readLe32(bytes + offsetof(Elf64_Ehdr, e_flags));

  const std::optional<MetadataNote> note = findMetadataNote(elf.get());
  if (!note) {
    std::string message =
        "no NT_AMDGPU_METADATA note (owner \"AMDGPU\", type 32) in any readable SHT_NOTE section "
        "or PT_NOTE segment";
    if (!amdgpu) {
      message += " of this ELF for e_machine " + std::to_string(elfMachine(bytes)) +
                 ": neither an AMDGPU code object nor one carrying AMDGPU metadata";
    } else if (osAbi == codeobject::kOsAbiAmdgpuHsa && abiVersion == 0) {
      message += "; this is a code object V2, whose YAML metadata this reader does not decode";
    }
    throw std::runtime_error(message);
  }

  codeobject::DecodedMetadata metadata;
  try {
    metadata = decodeMetadata(note->desc, note->size);
  } catch (const std::exception& e) {
    throw std::runtime_error("NT_AMDGPU_METADATA note in " + note->where + ": " + e.what());
  }

  CodeObjectInfo info;
  if (amdgpu) {
    info.target = metadata.target.empty() ? targetIdFromElfHeader(osAbi, abiVersion, flags)
                                          : std::move(metadata.target);
    info.abiVersion = codeObjectVersion(osAbi, abiVersion);
    info.elfFlags = flags;
  } else {
    // The header describes the host object, not the device the note targets.
    info.target = std::move(metadata.target);
  }
  info.metadataVersion = std::move(metadata.version);
  info.kernels = std::move(metadata.kernels);

  const auto symbols = descriptorSymbols(elf.get());
  for (KernelInfo& kernel : info.kernels) {
    const auto found = symbols.find(kernel.symbol);
    if (found == symbols.end()) continue;
    if (const auto offset = descriptorFileOffset(elf.get(), found->second, size)) {
      kernel.hasDescriptor = true;
      kernel.descriptorAddress = found->second.value;
      kernel.descriptorOffset = *offset;
    }
  }
  return info;
}

}  // namespace

CodeObjectInfo parseAmdgpuCodeObject(const void* data, size_t size) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  checkElfHeader(bytes, size);
  return parseCheckedElf(bytes, size, true);
}

CodeObjectInfo parseCodeObjectMetadata(const void* data, size_t size) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  checkElf64LittleEndian(bytes, size);
  return parseCheckedElf(bytes, size, elfMachine(bytes) == EM_AMDGPU);
}

}  // namespace gtap::readers
