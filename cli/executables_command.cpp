// gtap executables: the modules (code objects) a capture holds and their
// kernels, with what the runtime or the code object's metadata says of them.
#include <fnmatch.h>

#include <iostream>
#include <set>

#include "commands.h"
#include "gtap/readers/executables.h"
#include "gtap/readers/recorded_mode.h"
#include "gtap/readers/table.h"
#include "open_captures.h"
#include "report_filter_options.h"

namespace gtap::cli {

namespace {

struct ExecutablesOptions {
  std::vector<std::string> files;
  std::string format = "text";
  std::string filter;  // a glob on kernel names
  ReportFilterOptions narrow;
};

readers::Cell maybe(int64_t v) { return v < 0 ? readers::Cell::str("-") : readers::Cell::count(v); }

int executables(const ExecutablesOptions& o) {
  readers::OutputFormat format;
  if (!readers::parseOutputFormat(o.format, format)) {
    std::cerr << "gtap executables: --format must be text, csv or jsonl\n";
    return 2;
  }
  auto opened = openCaptures(o.files, "executables", o.narrow);
  if (opened.usage) return 2;
  if (opened.captures.empty()) return 1;
  reportNotes(opened, "executables");
  auto loaded = loadDeviceWork(opened, "executables");
  std::vector<std::string> notes;
  std::vector<readers::ExecutableKernelRow> rows;
  for (auto& each : loaded) {
    std::vector<readers::LoadedCapture> one;
    one.push_back(std::move(each));
    const readers::LoadedCapture& lc = one[0];
    auto mine = readers::executableRows(one, notes);
    // --kernel is --filter's glob; --from and --to keep the kernels that ran
    // in the window (the work loaded is narrowed to it), by name.
    for (const std::string* glob : {&o.filter, &o.narrow.kernel})
      if (!glob->empty())
        std::erase_if(mine, [&](const readers::ExecutableKernelRow& r) {
          return r.kernel.empty() || fnmatch(glob->c_str(), r.kernel.c_str(), 0) != 0;
        });
    if (o.narrow.from || o.narrow.to) {
      std::set<std::string, std::less<>> ran;
      for (const auto& op : lc.work.ops)
        if (op.kind == schema::DeviceOpKind::KERNEL) ran.emplace(op.name);
      std::erase_if(mine, [&](const readers::ExecutableKernelRow& r) { return !ran.count(r.kernel); });
    }
    for (auto& r : mine) rows.push_back(std::move(r));
  }
  for (const auto& n : notes) std::cerr << "gtap executables: " << n << "\n";
  std::vector<std::string> columns = {"module", "format", "size", "target", "kernel", "from", "args", "hidden_args",
                                      "kernarg_bytes", "sgprs", "vgprs", "lds_bytes", "scratch_bytes", "wavefront",
                                      "required_group_size", "hash"};
  if (opened.captures.size() > 1) columns.insert(columns.begin(), "process");
  readers::Table table("executable_kernel", columns);
  for (const auto& r : rows) {
    std::vector<readers::Cell> row;
    if (opened.captures.size() > 1) row.push_back(readers::Cell::str(r.process));
    row.push_back(readers::Cell::count(static_cast<int64_t>(r.module)));
    row.push_back(readers::Cell::str(r.format));
    row.push_back(readers::Cell::bytes(static_cast<int64_t>(r.size)));
    row.push_back(readers::Cell::str(r.target.empty() ? "-" : r.target));
    row.push_back(readers::Cell::str(r.kernel.empty() ? "-" : r.kernel));
    row.push_back(readers::Cell::str(r.source.empty() ? "-" : r.source));
    for (int64_t v : {r.args, r.hiddenArgs, r.kernargBytes, r.sgprs, r.vgprs, r.ldsBytes, r.scratchBytes, r.wavefront})
      row.push_back(maybe(v));
    row.push_back(readers::Cell::str(r.requiredGroupSize.empty() ? "-" : r.requiredGroupSize));
    row.push_back(readers::Cell::str(r.hash));
    table.add(std::move(row));
  }
  table.print(std::cout, format);
  if (format == readers::OutputFormat::text && rows.empty() && (o.narrow.from || o.narrow.to))
    std::cout << "no kernel ran between --from and --to" << (o.filter.empty() && o.narrow.kernel.empty() ? "" : " and matches")
              << "\n";
  else if (format == readers::OutputFormat::text && rows.empty() && (!o.filter.empty() || !o.narrow.kernel.empty()))
    std::cout << "no kernel matches '" << (o.filter.empty() ? o.narrow.kernel : o.filter) << "'\n";
  else if (format == readers::OutputFormat::text && rows.empty())
    std::cout << readers::nothingFoundHint(opened.pointers(), format::kModeKernels | format::kModeMemory, "executables", true)
              << "\n";
  return opened.failures ? 1 : 0;
}

}  // namespace

Action addExecutablesCommand(CLI::App& app) {
  auto o = std::make_shared<ExecutablesOptions>();
  auto* cmd = app.add_subcommand("executables",
                                 "Modules / code objects and their kernels: arguments, registers, LDS, scratch, wavefront");
  cmd->add_option("files", o->files, "Capture files")->required();
  cmd->add_option("--format", o->format, "text, csv or jsonl");
  cmd->add_option("--filter", o->filter,
                  "Only the kernels whose name matches this glob (fnmatch), and their modules' rows");
  addReportFilterOptions(*cmd, o->narrow);
  cmd->footer("--kernel is --filter; --from and --to keep the kernels that ran in that part of the run.");
  return [o] { return executables(*o); };
}

}  // namespace gtap::cli
