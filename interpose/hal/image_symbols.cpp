#include "image_symbols.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace gtap::hal {

namespace {

constexpr const char kPrefix[] = "iree_hal_";
constexpr const char kVtableSuffix[] = "_vtable";
constexpr const char kMultiWait[] = "iree_async_semaphore_multi_wait";

bool startsWith(const char* s, const char* prefix) { return std::strncmp(s, prefix, std::strlen(prefix)) == 0; }

bool endsWith(const char* s, const char* suffix) {
  size_t n = std::strlen(s), m = std::strlen(suffix);
  return n >= m && std::memcmp(s + n - m, suffix, m) == 0;
}

// An open ELF file; closed with the object.
class ElfFile {
 public:
  explicit ElfFile(const std::string& path) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) return;
    elf_ = elf_begin(fd_, ELF_C_READ_MMAP, nullptr);
    if (elf_ && elf_kind(elf_) != ELF_K_ELF) {
      elf_end(elf_);
      elf_ = nullptr;
    }
  }
  ~ElfFile() {
    if (elf_) elf_end(elf_);
    if (fd_ >= 0) ::close(fd_);
  }
  ElfFile(const ElfFile&) = delete;
  ElfFile& operator=(const ElfFile&) = delete;
  Elf* get() const { return elf_; }
  bool opened() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
  Elf* elf_ = nullptr;
};

std::string hex(const uint8_t* p, size_t n) {
  static const char digits[] = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    s += digits[p[i] >> 4];
    s += digits[p[i] & 15];
  }
  return s;
}

std::string buildIdOf(Elf* elf) {
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(elf, scn)) != nullptr) {
    GElf_Shdr shdr;
    if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_NOTE) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (!data) continue;
    size_t offset = 0, nameAt = 0, descAt = 0;
    GElf_Nhdr note;
    while ((offset = gelf_getnote(data, offset, &note, &nameAt, &descAt)) > 0) {
      if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 &&
          std::memcmp(static_cast<const char*>(data->d_buf) + nameAt, "GNU", 4) == 0)
        return hex(static_cast<const uint8_t*>(data->d_buf) + descAt, note.n_descsz);
    }
  }
  return {};
}

// The symbols of `elf`'s .symtab; false when it has none.
bool readSymtab(Elf* elf, ImageSymbols& out) {
  bool found = false;
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(elf, scn)) != nullptr) {
    GElf_Shdr shdr;
    if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_SYMTAB || shdr.sh_entsize == 0) continue;
    found = true;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (!data) continue;
    size_t count = shdr.sh_size / shdr.sh_entsize;
    for (size_t i = 0; i < count; ++i) {
      GElf_Sym sym;
      if (!gelf_getsym(data, static_cast<int>(i), &sym) || sym.st_shndx == SHN_UNDEF || sym.st_value == 0) continue;
      const char* name = elf_strptr(elf, shdr.sh_link, sym.st_name);
      if (!name) continue;
      int type = GELF_ST_TYPE(sym.st_info);
      if (type == STT_FUNC && std::strcmp(name, kMultiWait) == 0) out.multiWait = sym.st_value;
      if (!startsWith(name, kPrefix)) continue;
      if (type == STT_OBJECT && endsWith(name, kVtableSuffix) && sym.st_size >= 8)
        out.vtables.push_back({name, sym.st_value, sym.st_size});
      else if (type == STT_FUNC)
        out.functions.emplace(sym.st_value, name);
    }
  }
  return found;
}

// Whether a stripped image still says it is IREE's HAL: its read-only data
// names HAL things ("iree_hal_" in messages and identifiers).
bool mentionsHal(Elf* elf) {
  size_t strndx = 0;
  if (elf_getshdrstrndx(elf, &strndx) != 0) return false;
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(elf, scn)) != nullptr) {
    GElf_Shdr shdr;
    if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_PROGBITS) continue;
    const char* name = elf_strptr(elf, strndx, shdr.sh_name);
    if (!name || std::strcmp(name, ".rodata") != 0) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (data && data->d_buf && memmem(data->d_buf, data->d_size, kPrefix, sizeof kPrefix - 1)) return true;
  }
  return false;
}

}  // namespace

std::vector<std::string> debugDirectories() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("GTAP_DEBUG_PATH")) {
    std::string all = env;
    size_t start = 0;
    while (start <= all.size()) {
      size_t end = all.find(':', start);
      if (end == std::string::npos) end = all.size();
      if (end > start) dirs.push_back(all.substr(start, end - start));
      start = end + 1;
    }
  }
  dirs.push_back("/usr/lib/debug");
  return dirs;
}

bool readImageSymbols(const std::string& path, bool systemImage, ImageSymbols& out, std::string& why) {
  static const bool versionOk = elf_version(EV_CURRENT) != EV_NONE;
  if (!versionOk) {
    why = "libelf refused its version";
    return false;
  }
  ElfFile image(path);
  if (!image.get()) {
    why = image.opened() ? "not an ELF file" : std::string("cannot open: ") + std::strerror(errno);
    return false;
  }
  out.buildId = buildIdOf(image.get());
  if (readSymtab(image.get(), out)) {
    out.symbolFile = path;
    return true;
  }
  // Stripped: the debug file with the same build-id, if there is one.
  if (out.buildId.size() > 2) {
    std::vector<std::string> dirs = debugDirectories();
    if (systemImage) dirs.pop_back();  // /usr/lib/debug only for the program's own images
    for (const std::string& dir : dirs) {
      std::string candidate = dir + "/.build-id/" + out.buildId.substr(0, 2) + "/" + out.buildId.substr(2) + ".debug";
      ElfFile debug(candidate);
      if (!debug.get() || buildIdOf(debug.get()) != out.buildId) continue;
      if (readSymtab(debug.get(), out)) {
        out.symbolFile = candidate;
        return true;
      }
    }
  }
  out.strippedWithIree = mentionsHal(image.get());
  return true;
}

}  // namespace gtap::hal
