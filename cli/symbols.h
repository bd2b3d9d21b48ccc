// Naming code addresses for the commands that show stacks: where separate
// debug files are looked for, and the resolver the readers take.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "gtap/readers/stack_frames.h"
#include "gtap/readers/symbolizer.h"

namespace gtap::cli {

// --debug-dir's directories, then GTAP_DEBUG_PATH's (colon-separated; empty
// entries name nothing).
inline std::vector<std::string> debugDirectories(std::vector<std::string> dirs) {
  if (const char* env = std::getenv("GTAP_DEBUG_PATH")) {
    std::string list = env;
    for (size_t from = 0; from <= list.size();) {
      size_t colon = std::min(list.find(':', from), list.size());
      if (colon > from) dirs.push_back(list.substr(from, colon - from));
      from = colon + 1;
    }
  }
  return dirs;
}

// Frames from `symbolizer`, which must outlive the resolver.
inline readers::FrameResolver resolverFor(readers::Symbolizer& symbolizer) {
  return [&symbolizer](const readers::HostModule& m, uint64_t address, std::string& problem) {
    // Every captured frame is a return address (the call is just before it).
    auto r = symbolizer.symbolize({m.path, m.buildId, m.loadBias}, address, true);
    problem = r.problem;
    std::vector<readers::ResolvedFrame> frames;
    for (const auto& f : r.frames) frames.push_back({f.function, f.file, f.line, f.inlined});
    return frames;
  };
}

}  // namespace gtap::cli
