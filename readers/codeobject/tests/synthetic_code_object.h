// Smallest ELF the parser accepts: header, one PT_NOTE program header, and
// the NT_AMDGPU_METADATA note with the given MessagePack bytes. No sections
// and no symbols, so the metadata can be anything a test needs, including
// shapes no compiler writes.
#pragma once

#include <elf.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace gtap::readers::testing {

inline std::vector<uint8_t> synthesizeCodeObject(const std::vector<uint8_t>& metadata,
                                                 uint32_t elfFlags = 0x03f /* gfx90a */) {
  const size_t padded = (metadata.size() + 3) / 4 * 4;
  const size_t noteOffset = sizeof(Elf64_Ehdr) + sizeof(Elf64_Phdr);
  const size_t noteSize = 12 + 8 + padded;  // header, "AMDGPU\0" padded to 8, desc
  std::vector<uint8_t> out(noteOffset + noteSize, 0);

  Elf64_Ehdr header{};
  std::memcpy(header.e_ident, ELFMAG, SELFMAG);
  header.e_ident[EI_CLASS] = ELFCLASS64;
  header.e_ident[EI_DATA] = ELFDATA2LSB;
  header.e_ident[EI_VERSION] = EV_CURRENT;
  header.e_ident[EI_OSABI] = 64;       // AMDGPU_HSA
  header.e_ident[EI_ABIVERSION] = 2;   // code object V4
  header.e_type = ET_DYN;
  header.e_machine = EM_AMDGPU;
  header.e_version = EV_CURRENT;
  header.e_phoff = sizeof(Elf64_Ehdr);
  header.e_flags = elfFlags;
  header.e_ehsize = sizeof(Elf64_Ehdr);
  header.e_phentsize = sizeof(Elf64_Phdr);
  header.e_phnum = 1;
  std::memcpy(out.data(), &header, sizeof header);

  Elf64_Phdr note{};
  note.p_type = PT_NOTE;
  note.p_offset = noteOffset;
  note.p_filesz = noteSize;
  note.p_align = 4;
  std::memcpy(out.data() + sizeof header, &note, sizeof note);

  const uint32_t fields[3] = {7, static_cast<uint32_t>(metadata.size()), 32};
  std::memcpy(out.data() + noteOffset, fields, sizeof fields);
  std::memcpy(out.data() + noteOffset + 12, "AMDGPU", 7);
  if (!metadata.empty()) std::memcpy(out.data() + noteOffset + 20, metadata.data(), metadata.size());
  return out;
}

}  // namespace gtap::readers::testing
