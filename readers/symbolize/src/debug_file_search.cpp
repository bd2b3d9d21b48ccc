#include "debug_file_search.h"

#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

#include <utility>

namespace gtap::readers::symbolize {

namespace {

constexpr const char* kSystemBuildIdDirectory = "/usr/lib/debug/.build-id";

bool isLowerHex(const std::string& s) {
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

}  // namespace

std::string hexBuildId(const void* bits, size_t length) {
  static constexpr char kDigits[] = "0123456789abcdef";
  const auto* bytes = static_cast<const unsigned char*>(bits);
  std::string hex;
  hex.reserve(length * 2);
  for (size_t i = 0; i < length; ++i) {
    hex.push_back(kDigits[bytes[i] >> 4]);
    hex.push_back(kDigits[bytes[i] & 0xf]);
  }
  return hex;
}

std::optional<std::string> readBuildId(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  elf_version(EV_CURRENT);
  Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
  std::optional<std::string> result;
  if (elf != nullptr && elf_kind(elf) == ELF_K_ELF) {
    const void* bits = nullptr;
    ssize_t length = dwelf_elf_gnu_build_id(elf, &bits);
    result = length > 0 ? hexBuildId(bits, static_cast<size_t>(length)) : std::string();
  }
  if (elf != nullptr) elf_end(elf);
  ::close(fd);
  return result;
}

DebugFileSearch::DebugFileSearch(std::vector<std::string> extraDirectories) {
  for (std::string& dir : extraDirectories) {
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    if (!dir.empty()) directories_.push_back(std::move(dir));
  }
}

std::string DebugFileSearch::find(const std::string& buildId) const {
  // Shorter ids cannot be split into the xx/yyyy layout; non-hex ones are not ours.
  if (buildId.size() < 4 || !isLowerHex(buildId)) return {};
  const std::string relative = buildId.substr(0, 2) + "/" + buildId.substr(2) + ".debug";
  std::vector<std::string> candidates;
  for (const std::string& dir : directories_) {
    candidates.push_back(dir + "/" + relative);
    // A debug root such as a sysroot's usr/lib/debug works as well as its .build-id folder.
    candidates.push_back(dir + "/.build-id/" + relative);
  }
  candidates.push_back(std::string(kSystemBuildIdDirectory) + "/" + relative);
  for (const std::string& candidate : candidates) {
    if (::access(candidate.c_str(), R_OK) != 0) continue;
    std::optional<std::string> id = readBuildId(candidate);
    if (id && *id == buildId) return candidate;
  }
  return {};
}

std::string DebugFileSearch::describe() const {
  std::string text;
  for (const std::string& dir : directories_) text += dir + ", ";
  return text + kSystemBuildIdDirectory;
}

}  // namespace gtap::readers::symbolize
