// gtap merge -o ALL.gtap FILES...: one file holding the captures of several
// processes, ranks kept apart (readers/capture_archive.h); every report reads
// it as the captures it holds.
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "exit_status.h"
#include "gtap/format/reader.h"
#include "gtap/readers/capture_archive.h"
#include "gtap/readers/parallel.h"
#include "output.h"

namespace gtap::cli {

namespace {

struct MergeOptions {
  std::vector<std::string> files;
  std::string output;
  bool force = false;
};

int merge(const MergeOptions& o) {
  if (o.output == "-") {
    std::cerr << "gtap merge: -o names a file (a merged file is not written to standard output)\n";
    return kExitUsage;
  }
  for (const auto& f : o.files)
    if (f == o.output) {
      std::cerr << "gtap merge: " << f << " is both an input and the output\n";
      return kExitUsage;
    }
  // Every input must be a capture (or a merged file) before anything is
  // written: checked several at once (gtap -j), each that is not said in order.
  int unreadable = 0;
  std::vector<std::string> problems(o.files.size());
  readers::forEachInParallel(
      o.files.size(),
      [&](size_t i) {
        try {
          readers::openCaptureFile(o.files[i]);
        } catch (const std::exception& e) {
          problems[i] = e.what();
        }
      },
      [&](size_t i) {
        if (problems[i].empty()) return;
        std::cerr << "gtap merge: " << problems[i] << "\n";
        ++unreadable;
      });
  if (unreadable) {
    std::cerr << "gtap merge: nothing written\n";
    return kExitError;
  }
  std::optional<readers::OutputFile> out;
  if (int status = openOutput("merge", o.output, o.force, out)) return status;
  size_t members = 0;
  int status = writeOutput("merge", *out, [&](readers::OutputFile& f) {
    members = readers::writeCaptureArchive(o.files, f.stream(), true);
  });
  if (status == kExitSuccess)
    std::cerr << "gtap merge: " << members << " capture" << (members == 1 ? "" : "s") << " in " << o.output << "\n";
  return status;
}

}  // namespace

Action addMergeCommand(CLI::App& app) {
  auto o = std::make_shared<MergeOptions>();
  auto* cmd = app.add_subcommand("merge", "One file holding the captures of several processes (ranks kept apart), "
                                          "which every report reads as those captures");
  cmd->add_option("files", o->files, "Capture files (or merged files) in the order to keep")->required();
  cmd->add_option("-o,--output", o->output, "The merged file")->required();
  cmd->add_flag("--force", o->force, "Replace an existing file");
  return [o] { return merge(*o); };
}

}  // namespace gtap::cli
