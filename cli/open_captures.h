// Opening the files a report was given: every file that cannot be used is
// named with the reason, and the report goes on with the rest.
#pragma once

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "gtap/readers/capture.h"
#include "gtap/readers/capture_archive.h"
#include "gtap/readers/kernel_stats.h"

namespace gtap::cli {

struct OpenedCaptures {
  // Merged files the captures are read from: destroyed after them.
  std::vector<std::shared_ptr<const readers::CaptureArchive>> archives;
  std::vector<std::unique_ptr<readers::Capture>> captures;
  int failures = 0;
  std::vector<const readers::Capture*> pointers() const {
    std::vector<const readers::Capture*> out;
    for (const auto& c : captures) out.push_back(c.get());
    return out;
  }
};

inline OpenedCaptures openCaptures(const std::vector<std::string>& paths, const char* verb) {
  OpenedCaptures opened;
  for (const auto& path : paths) {
    try {
      // A merged file (gtap merge) is the captures it holds.
      readers::CaptureFile file = readers::openCaptureFile(path);
      if (file.archive) opened.archives.push_back(file.archive);
      for (auto& c : file.captures) opened.captures.push_back(std::move(c));
    } catch (const std::exception& e) {
      std::cerr << "gtap " << verb << ": " << e.what() << "\n";
      ++opened.failures;
    }
  }
  return opened;
}

// Each capture with its device side loaded; what loading found wrong goes to
// stderr.
inline std::vector<readers::LoadedCapture> loadDeviceWork(const OpenedCaptures& opened, const char* verb) {
  std::vector<readers::LoadedCapture> loaded;
  for (const auto& c : opened.captures) {
    loaded.push_back({c.get(), readers::loadDeviceWork(*c)});
    for (const auto& n : loaded.back().work.notes) std::cerr << "gtap " << verb << ": " << n << "\n";
  }
  return loaded;
}

// Says, on stderr, what reading found wrong in each file.
inline void reportNotes(const OpenedCaptures& opened, const char* verb) {
  for (const auto& c : opened.captures) {
    if (!c->recovery().closedCleanly)
      std::cerr << "gtap " << verb << ": " << c->path() << ": recovered " << c->recovery().validBytes
                << " of " << c->recovery().fileSize << " bytes (" << c->recovery().stopReason << ")\n";
    for (const auto& n : c->notes()) std::cerr << "gtap " << verb << ": " << n << "\n";
  }
}

}  // namespace gtap::cli
