// The options every report and export takes to narrow its captures (--kernel,
// --from, --to, --pid, --rank): registered by one function, turned into the
// readers' ReportFilter and set on each capture as it is opened, so the
// readers apply it wherever they read calls and device operations.
#pragma once

#include <CLI/CLI.hpp>

#include <cmath>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <exception>
#include <set>
#include <string>
#include <vector>

#include "gtap/readers/capture_archive.h"
#include "gtap/readers/parallel.h"
#include "gtap/readers/report_filter.h"
#include "open_captures.h"

namespace gtap::cli {

struct ReportFilterOptions {
  std::string kernel;
  std::optional<double> from, to;  // seconds
  std::vector<uint32_t> pids;
  std::vector<int32_t> ranks;
  bool given() const { return !kernel.empty() || from || to || !pids.empty() || !ranks.empty(); }
};

// --pid and --rank alone, for a report that narrows records its own way.
inline void addProcessFilterOptions(CLI::App& cmd, ReportFilterOptions& o) {
  // One value an occurrence: the capture files may follow.
  cmd.add_option("--pid", o.pids, "Only the captures of this process (repeatable)")->allow_extra_args(false);
  cmd.add_option("--rank", o.ranks, "Only the captures of this rank (repeatable)")->allow_extra_args(false);
}

inline void addReportFilterOptions(CLI::App& cmd, ReportFilterOptions& o) {
  cmd.add_option("--kernel", o.kernel,
                 "Only kernel executions whose names match this glob (fnmatch), and the API calls that launched them");
  cmd.add_option("--from", o.from, "Only what starts at or after this offset into the run (seconds)");
  cmd.add_option("--to", o.to, "Only what starts at or before this offset into the run (seconds)");
  addProcessFilterOptions(cmd, o);
}

// The filter the options ask for, or an error message (a usage error).
inline std::shared_ptr<readers::ReportFilter> reportFilter(const ReportFilterOptions& o, std::string& error) {
  auto f = std::make_shared<readers::ReportFilter>();
  f->kernel = o.kernel;
  auto ns = [&](const std::optional<double>& seconds, const char* name, std::optional<int64_t>& out) {
    if (!seconds) return true;
    if (!std::isfinite(*seconds) || *seconds < 0) {
      error = std::string(name) + " must be an offset into the run in seconds, 0 or more";
      return false;
    }
    out = static_cast<int64_t>(std::llround(*seconds * 1e9));
    return true;
  };
  if (!ns(o.from, "--from", f->fromNs) || !ns(o.to, "--to", f->toNs)) return nullptr;
  if (f->fromNs && f->toNs && *f->fromNs > *f->toNs) {
    error = "--from must not be after --to";
    return nullptr;
  }
  f->pids = o.pids;
  f->ranks = o.ranks;
  return f;
}

// Says that no capture is of the --pid or --rank asked for, and which the
// files hold.
inline void sayNoCaptureOf(const char* verb, const ReportFilterOptions& options, const std::set<uint32_t>& pids,
                           const std::set<int32_t>& ranks, std::ostream& say = std::cerr) {
  say << "gtap " << verb << ": no capture of";
  if (!options.pids.empty()) {
    say << " pid";
    for (uint32_t p : options.pids) say << " " << p;
  }
  if (!options.ranks.empty()) {
    say << (options.pids.empty() ? "" : " and") << " rank";
    for (int32_t r : options.ranks) say << " " << r;
  }
  say << " among the files given; they hold pid";
  for (uint32_t p : pids) say << " " << p;
  say << ", rank";
  for (int32_t r : ranks) say << " " << (r < 0 ? std::string("none") : std::to_string(r));
  say << "\n";
}

// Opens the files as openCaptures does, keeps those of the processes asked
// for and sets the filter on each. A bad filter, or a --pid or --rank no file
// has, is said on stderr and sets `usage`.
inline OpenedCaptures openCaptures(const std::vector<std::string>& paths, const char* verb,
                                   const ReportFilterOptions& options) {
  std::string error;
  auto filter = reportFilter(options, error);
  if (!filter) {
    std::cerr << "gtap " << verb << ": " << error << "\n";
    OpenedCaptures none;
    none.usage = true;
    return none;
  }
  OpenedCaptures opened = openCaptures(paths, verb);
  if (opened.captures.empty()) return opened;
  std::set<uint32_t> pids;
  std::set<int32_t> ranks;
  std::vector<std::unique_ptr<readers::Capture>> kept;
  for (auto& c : opened.captures) {
    pids.insert(c->process().pid);
    ranks.insert(c->process().rank);
    if (!filter->keepsProcess(c->process())) continue;
    c->setFilter(filter);
    kept.push_back(std::move(c));
  }
  opened.captures = std::move(kept);
  if (opened.captures.empty()) {
    sayNoCaptureOf(verb, options, pids, ranks);
    opened.usage = true;
  }
  return opened;
}

// Reads the captures of `paths` (a merged file's members each on its own) a
// few at a time (gtap -j) without holding them all: read(capture) runs on one
// of the threads and gives what the report keeps of it, merge(capture, part)
// runs in the order given with the capture as a CaptureFile of one (its merged
// file beside it), after which the capture is closed unless merge moved the
// CaptureFile away. Memory holds
// the captures in flight, not every one, however many files there are. What
// cannot be opened, and each capture's notes, are said on `say` (stderr) in
// order; the filter applies as openCaptures' does (its errors set `usage`).
// Without `sayNotes`, a capture's recovery and notes are the report's to say.
struct StreamedCaptures {
  size_t captures = 0;  // read and merged
  int failures = 0;     // files (or members) that could not be opened
  bool usage = false;
};

template <class Part>
StreamedCaptures streamCaptures(const std::vector<std::string>& paths, const char* verb,
                                const ReportFilterOptions& options,
                                const std::function<Part(const readers::Capture&)>& read,
                                const std::function<void(readers::CaptureFile&, Part&)>& merge,
                                bool sayNotes = true, std::ostream& say = std::cerr) {
  StreamedCaptures result;
  std::string error;
  auto filter = reportFilter(options, error);
  if (!filter) {
    say << "gtap " << verb << ": " << error << "\n";
    result.usage = true;
    return result;
  }
  // The sources in order: a file, or a member of a merged file (the
  // archive's index is read here; its members are opened on the threads).
  struct Source {
    std::string path;
    std::shared_ptr<const readers::CaptureArchive> archive;
    readers::CaptureArchive::Member member;
    std::string error;  // the file could not be opened at all
  };
  std::vector<Source> sources;
  for (const auto& path : paths) {
    if (!readers::isCaptureArchive(path)) {
      sources.push_back({path, nullptr, {}, {}});
      continue;
    }
    try {
      auto archive = std::make_shared<const readers::CaptureArchive>(path);
      for (const auto& m : archive->members()) sources.push_back({path, archive, m, {}});
    } catch (const std::exception& e) {
      sources.push_back({path, nullptr, {}, e.what()});
    }
  }
  struct Slot {
    readers::CaptureFile file;  // one capture, and its merged file if any
    readers::Capture* capture = nullptr;
    std::optional<Part> part;
    std::string error;
    bool kept = false;
  };
  std::vector<Slot> slots(sources.size());
  std::set<uint32_t> pids;
  std::set<int32_t> ranks;
  readers::forEachInParallel(
      sources.size(),
      [&](size_t i) {
        Source& s = sources[i];
        Slot& slot = slots[i];
        if (!s.error.empty()) {
          slot.error = s.error;
          return;
        }
        try {
          slot.file.archive = s.archive;
          slot.file.captures.push_back(s.archive ? std::make_unique<readers::Capture>(s.archive->bytes(s.member),
                                                                                     s.archive->memberPath(s.member))
                                                 : std::make_unique<readers::Capture>(s.path));
          slot.capture = slot.file.captures.back().get();
        } catch (const std::exception& e) {
          slot.error = e.what();
          return;
        }
        slot.kept = filter->keepsProcess(slot.capture->process());
        if (!slot.kept) return;
        slot.capture->setFilter(filter);
        slot.part.emplace(read(*slot.capture));
      },
      [&](size_t i) {
        Slot& slot = slots[i];
        if (!slot.error.empty()) {
          say << "gtap " << verb << ": " << slot.error << "\n";
          ++result.failures;
        } else {
          const readers::Capture& c = *slot.capture;
          pids.insert(c.process().pid);
          ranks.insert(c.process().rank);
          if (slot.kept) {
            if (sayNotes && !c.recovery().closedCleanly)
              say << "gtap " << verb << ": " << c.path() << ": recovered " << c.recovery().validBytes << " of "
                        << c.recovery().fileSize << " bytes (" << c.recovery().stopReason << ")\n";
            if (sayNotes)
              for (const auto& n : c.notes()) say << "gtap " << verb << ": " << n << "\n";
            merge(slot.file, *slot.part);
            ++result.captures;
          }
        }
        slot = Slot();
        if (sources[i].archive) sources[i].archive->releasePages(sources[i].member);
        sources[i].archive.reset();
      });
  if (result.captures == 0 && !pids.empty()) {
    sayNoCaptureOf(verb, options, pids, ranks, say);
    result.usage = true;
  }
  return result;
}

}  // namespace gtap::cli
