// gtap counters --list: the counters and metric groups the devices offer,
// through each runtime's own interface (offered_counters.h), so a user can
// pick names for --counters.
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "commands.h"
#include "exit_status.h"
#include "gtap/readers/table.h"
#include "install_paths.h"
#include "offered_counters.h"

namespace gtap::cli {

namespace {

struct CountersOptions {
  bool list = false;
  bool sim = false;
  std::string format = "text";
};

int listCounters(const CountersOptions& o) {
  readers::OutputFormat format;
  if (!readers::parseOutputFormat(o.format, format)) {
    std::cerr << "gtap counters: --format must be text, csv or jsonl\n";
    return kExitUsage;
  }
  std::string error;
  if (o.sim && (!useSimulatedZeDriver(error) || !useSimulatedHsaRuntime(error))) {
    std::cerr << "gtap counters --sim: " << error << "\n";
    return kExitError;
  }
  std::string zeNote, hsaNote;
  std::vector<OfferedDevice> devices = offeredLevelZeroCounters(zeNote);
  for (auto& d : offeredHsaCounters(hsaNote)) devices.push_back(std::move(d));
  if (devices.empty()) {
    std::cerr << "gtap counters: no device: " << zeNote << "; " << hsaNote
              << (o.sim ? "" : "; --sim lists the simulated devices'") << "\n";
    return kExitError;
  }
  readers::Table table({"runtime", "device", "group", "sampling", "domain", "metric", "type", "units", "description"});
  size_t counters = 0;
  bool ze = false, hsa = false;
  for (const auto& d : devices)
    for (const auto& c : d.counters) {
      table.add({readers::Cell::str(d.runtime), readers::Cell::str(d.label), readers::Cell::str(c.offer.group),
                 readers::Cell::str(c.sampling.empty() ? "-" : c.sampling),
                 readers::Cell::str(c.domain.empty() ? "-" : c.domain), readers::Cell::str(c.offer.name),
                 readers::Cell::str(c.type.empty() ? "-" : c.type),
                 readers::Cell::str(c.units.empty() ? "-" : c.units), readers::Cell::str(c.description)});
      ++counters;
      (d.runtime == "hsa" ? hsa : ze) = true;
    }
  table.print(std::cout, format);
  if (format == readers::OutputFormat::text) {
    if (!counters) std::cout << "no device offers counters\n";
    if (ze)
      std::cout << "\nLevel Zero: the metrics of one group are collected in one pass, one group per pass; "
                   "only per-dispatch groups can be --counters.\n";
    if (hsa)
      std::cout << "\nHSA: counters of different blocks share a pass; a block takes as many counters per pass as "
                   "it has counter registers (its 'per pass' in the domain column).\n";
  }
  return kExitSuccess;
}

int counters(const CountersOptions& o) {
  if (!o.list) {
    std::cerr << "gtap counters: give --list (the counters the devices offer)\n";
    return kExitUsage;
  }
  return listCounters(o);
}

}  // namespace

Action addCountersCommand(CLI::App& app) {
  auto o = std::make_shared<CountersOptions>();
  auto* cmd = app.add_subcommand("counters", "Hardware counters and metric groups the devices offer (--list)");
  cmd->add_flag("--list", o->list, "List every counter the devices offer (Level Zero metric groups, HSA AQL profile events)");
  cmd->add_flag("--sim", o->sim, "Ask gtap's simulated Level Zero driver and HSA runtime instead of real devices");
  cmd->add_option("--format", o->format, "text, csv or jsonl");
  return [o] { return counters(*o); };
}

}  // namespace gtap::cli
