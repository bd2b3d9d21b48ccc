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
#include "gtap/readers/parallel.h"
#include "gtap/readers/report_filter.h"

namespace gtap::cli {

struct OpenedCaptures {
  // Merged files the captures are read from: destroyed after them.
  std::vector<std::shared_ptr<const readers::CaptureArchive>> archives;
  std::vector<std::unique_ptr<readers::Capture>> captures;
  int failures = 0;
  bool usage = false;  // the filter options were wrong (report_filter_options.h)
  std::vector<const readers::Capture*> pointers() const {
    std::vector<const readers::Capture*> out;
    for (const auto& c : captures) out.push_back(c.get());
    return out;
  }
};

inline OpenedCaptures openCaptures(const std::vector<std::string>& paths, const char* verb) {
  OpenedCaptures opened;
  // Several files at once (gtap -j), kept and said in the order given.
  std::vector<readers::CaptureFile> files(paths.size());
  std::vector<std::string> errors(paths.size());
  readers::forEachInParallel(paths.size(), [&](size_t i) {
    try {
      // A merged file (gtap merge) is the captures it holds.
      files[i] = readers::openCaptureFile(paths[i]);
    } catch (const std::exception& e) {
      errors[i] = e.what();
    }
  });
  for (size_t i = 0; i < paths.size(); ++i) {
    if (!errors[i].empty()) {
      std::cerr << "gtap " << verb << ": " << errors[i] << "\n";
      ++opened.failures;
      continue;
    }
    if (files[i].archive) opened.archives.push_back(files[i].archive);
    for (auto& c : files[i].captures) opened.captures.push_back(std::move(c));
  }
  return opened;
}

// Each capture with its device side loaded (narrowed by the capture's filter
// unless not `narrow`); what loading found wrong goes to stderr.
inline std::vector<readers::LoadedCapture> loadDeviceWork(const OpenedCaptures& opened, const char* verb,
                                                          bool narrow = true) {
  // Several captures at once (gtap -j), kept and said in the order given.
  std::vector<readers::LoadedCapture> loaded(opened.captures.size());
  readers::forEachInParallel(opened.captures.size(), [&](size_t i) {
    const auto& c = opened.captures[i];
    loaded[i] = {c.get(), readers::loadDeviceWork(*c)};
    if (narrow) readers::narrowDeviceWork(*c, loaded[i].work);
  });
  for (const auto& l : loaded)
    for (const auto& n : l.work.notes) std::cerr << "gtap " << verb << ": " << n << "\n";
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
