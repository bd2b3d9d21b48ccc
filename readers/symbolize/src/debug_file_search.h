// Where separate debug files are looked for: by GNU build-id, in the
// directories the user gave and then the system's /usr/lib/debug/.build-id.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace gtap::readers::symbolize {

// Lower-case hex of a build-id note's bytes.
std::string hexBuildId(const void* bits, size_t length);

// The build-id of the ELF file at `path`: nullopt when it cannot be opened or
// is not ELF, an empty string when it has no build-id note.
std::optional<std::string> readBuildId(const std::string& path);

class DebugFileSearch {
 public:
  explicit DebugFileSearch(std::vector<std::string> extraDirectories);

  // A debug file whose own build-id note is `buildId` (checked, since a stale
  // file under the right name would give wrong lines), or empty when none.
  std::string find(const std::string& buildId) const;

  // The directories searched, for messages: "a, b, /usr/lib/debug/.build-id".
  std::string describe() const;

 private:
  std::vector<std::string> directories_;  // the user's, each holding xx/yyyy.debug
};

}  // namespace gtap::readers::symbolize
