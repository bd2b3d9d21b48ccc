#include "elf_needs.h"

#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <sstream>

namespace gtap::cli {

namespace {

struct ElfCloser {
  void operator()(Elf* e) const { elf_end(e); }
};

// The version needs of one SHT_GNU_verneed section, by library.
void readVersionNeeds(Elf* elf, const GElf_Shdr& shdr, Elf_Data* data, ElfNeeds& out) {
  size_t offset = 0;
  for (size_t n = 0; n < shdr.sh_info; ++n) {
    GElf_Verneed need;
    if (!gelf_getverneed(data, static_cast<int>(offset), &need)) break;
    const char* file = elf_strptr(elf, shdr.sh_link, need.vn_file);
    size_t auxOffset = offset + need.vn_aux;
    for (size_t a = 0; a < need.vn_cnt; ++a) {
      GElf_Vernaux aux;
      if (!gelf_getvernaux(data, static_cast<int>(auxOffset), &aux)) break;
      const char* name = elf_strptr(elf, shdr.sh_link, aux.vna_name);
      if (file && name) out.versions[file].insert(name);
      if (!aux.vna_next) break;
      auxOffset += aux.vna_next;
    }
    if (!need.vn_next) break;
    offset += need.vn_next;
  }
}

// The versions one SHT_GNU_verdef section defines (the library's own name
// entry, VER_FLG_BASE, left out).
void readVersionDefinitions(Elf* elf, const GElf_Shdr& shdr, Elf_Data* data, ElfNeeds& out) {
  size_t offset = 0;
  for (size_t n = 0; n < shdr.sh_info; ++n) {
    GElf_Verdef def;
    if (!gelf_getverdef(data, static_cast<int>(offset), &def)) break;
    GElf_Verdaux aux;
    if (!(def.vd_flags & VER_FLG_BASE) && def.vd_cnt > 0 &&
        gelf_getverdaux(data, static_cast<int>(offset + def.vd_aux), &aux))
      if (const char* name = elf_strptr(elf, shdr.sh_link, aux.vda_name)) out.defines.insert(name);
    if (!def.vd_next) break;
    offset += def.vd_next;
  }
}

}  // namespace

bool readElfNeeds(const std::filesystem::path& file, ElfNeeds& out, std::string& error) {
  elf_version(EV_CURRENT);
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    error = file.string() + ": " + std::strerror(errno);
    return false;
  }
  std::unique_ptr<Elf, ElfCloser> elf(elf_begin(fd, ELF_C_READ, nullptr));
  auto fail = [&](const std::string& why) {
    error = file.string() + ": " + why;
    elf.reset();
    ::close(fd);
    return false;
  };
  GElf_Ehdr ehdr;
  if (!elf || elf_kind(elf.get()) != ELF_K_ELF || !gelf_getehdr(elf.get(), &ehdr)) return fail("not an ELF object");
  if (ehdr.e_ident[EI_CLASS] != ELFCLASS64 || ehdr.e_machine != EM_X86_64) return fail("not a 64-bit x86-64 object");
  std::string origin = file.parent_path().string();
  for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf.get(), scn));) {
    GElf_Shdr shdr;
    if (!gelf_getshdr(scn, &shdr)) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (!data) continue;
    if (shdr.sh_type == SHT_GNU_verneed) {
      readVersionNeeds(elf.get(), shdr, data, out);
      continue;
    }
    if (shdr.sh_type == SHT_GNU_verdef) {
      readVersionDefinitions(elf.get(), shdr, data, out);
      continue;
    }
    if (shdr.sh_type != SHT_DYNAMIC) continue;
    size_t count = shdr.sh_entsize ? shdr.sh_size / shdr.sh_entsize : 0;
    for (size_t i = 0; i < count; ++i) {
      GElf_Dyn dyn;
      if (!gelf_getdyn(data, static_cast<int>(i), &dyn)) break;
      if (dyn.d_tag != DT_NEEDED && dyn.d_tag != DT_RUNPATH && dyn.d_tag != DT_RPATH) continue;
      const char* s = elf_strptr(elf.get(), shdr.sh_link, dyn.d_un.d_val);
      if (!s) continue;
      if (dyn.d_tag == DT_NEEDED) {
        out.needed.emplace_back(s);
        continue;
      }
      std::stringstream dirs(s);
      for (std::string d; std::getline(dirs, d, ':');) {
        for (size_t at; (at = d.find("$ORIGIN")) != std::string::npos;) d.replace(at, 7, origin);
        for (size_t at; (at = d.find("${ORIGIN}")) != std::string::npos;) d.replace(at, 9, origin);
        if (!d.empty()) out.searchPath.push_back(d);
      }
    }
  }
  elf.reset();
  ::close(fd);
  return true;
}

}  // namespace gtap::cli
