// The options every report and export takes to narrow its captures (--kernel,
// --from, --to, --pid, --rank): registered by one function, turned into the
// readers' ReportFilter and set on each capture as it is opened, so the
// readers apply it wherever they read calls and device operations.
#pragma once

#include <CLI/CLI.hpp>

#include <cmath>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "gtap/readers/report_filter.h"
#include "open_captures.h"

namespace gtap::cli {

struct ReportFilterOptions {
  std::string kernel;
  std::optional<double> from, to;  // seconds
  std::vector<uint32_t> pids;
  std::vector<int32_t> ranks;
};

inline void addReportFilterOptions(CLI::App& cmd, ReportFilterOptions& o) {
  cmd.add_option("--kernel", o.kernel,
                 "Only kernel executions whose names match this glob (fnmatch), and the API calls that launched them");
  cmd.add_option("--from", o.from, "Only what starts at or after this offset into the run (seconds)");
  cmd.add_option("--to", o.to, "Only what starts at or before this offset into the run (seconds)");
  // One value an occurrence: the capture files may follow.
  cmd.add_option("--pid", o.pids, "Only the captures of this process (repeatable)")->allow_extra_args(false);
  cmd.add_option("--rank", o.ranks, "Only the captures of this rank (repeatable)")->allow_extra_args(false);
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
    std::cerr << "gtap " << verb << ": no capture of";
    if (!options.pids.empty()) {
      std::cerr << " pid";
      for (uint32_t p : options.pids) std::cerr << " " << p;
    }
    if (!options.ranks.empty()) {
      std::cerr << (options.pids.empty() ? "" : " and") << " rank";
      for (int32_t r : options.ranks) std::cerr << " " << r;
    }
    std::cerr << " among the files given; they hold pid";
    for (uint32_t p : pids) std::cerr << " " << p;
    std::cerr << ", rank";
    for (int32_t r : ranks) std::cerr << " " << (r < 0 ? std::string("none") : std::to_string(r));
    std::cerr << "\n";
    opened.usage = true;
  }
  return opened;
}

}  // namespace gtap::cli
