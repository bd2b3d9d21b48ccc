// Where the commands that write a file (export, flame) put their output:
// standard output for "-", else a new file beside the target, put in place
// only once complete (readers/output_file.h).
#pragma once

#include <exception>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>

#include "exit_status.h"
#include "gtap/readers/output_file.h"
#include "gtap/readers/progress.h"
#include "gtap/readers/table.h"

namespace gtap::cli {

// Says on stderr what a command wrote, `bytes` in all, with what it holds
// when `detail` says: "gtap export: wrote run (3 tables, 12.0 MiB)".
inline void sayWritten(const char* verb, const std::string& path, const std::string& detail, uint64_t bytes) {
  readers::ReadProgress::clearLine();
  std::cerr << "gtap " << verb << ": wrote " << path << " (" << detail << (detail.empty() ? "" : ", ")
            << readers::formatBytes(bytes) << ")\n";
}

// The size of a file, or of a directory's files.
inline uint64_t writtenBytes(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  uint64_t bytes = 0;
  if (fs::is_directory(fs::symlink_status(path, ec))) {
    for (const auto& e : fs::recursive_directory_iterator(path, ec))
      if (e.is_regular_file(ec)) bytes += e.file_size(ec);
  } else {
    bytes = fs::file_size(path, ec);
  }
  return bytes;
}

// "gtap export: wrote run.pftrace (12.0 MiB)"; a directory's size is its files'.
inline void sayWritten(const char* verb, const std::string& path) {
  sayWritten(verb, path, "", writtenBytes(path));
}

// Creates the temporary file for `target` ("-": none) before the captures are
// read, so that a target that cannot be written is said at once. Returns 0,
// or the exit status when it cannot be written.
inline int openOutput(const char* verb, const std::string& target, bool force,
                      std::optional<readers::OutputFile>& out) {
  if (target == "-") return 0;
  try {
    out.emplace(target, force);
  } catch (const readers::OutputError& e) {
    return reportOutputError(verb, e, "give --force to replace it");
  }
  return 0;
}

// `write(std::ostream&)` on standard output; false (said on stderr) when that
// failed.
template <class Write>
bool writeStdout(const char* verb, Write&& write) {
  try {
    write(std::cout);
  } catch (const std::exception& e) {
    std::cerr << "gtap " << verb << ": " << e.what() << "\n";
    return false;
  }
  std::cout.flush();
  if (!std::cout) {
    std::cerr << "gtap " << verb << ": writing standard output failed\n";
    return false;
  }
  return true;
}

// `write(OutputFile&)` into the file openOutput made, then puts it in place;
// the exit status (a failure said on stderr, the temporary file removed).
template <class Write>
int writeOutput(const char* verb, readers::OutputFile& out, Write&& write) {
  try {
    write(out);
    out.commit();
    sayWritten(verb, out.target());
  } catch (const readers::OutputError& e) {
    // A target that became one gtap will not write while the command ran.
    return reportOutputError(verb, e, "give --force to replace it");
  } catch (const std::exception& e) {
    std::cerr << "gtap " << verb << ": writing " << out.target() << " failed: " << e.what() << "\n";
    return kExitError;
  }
  return kExitSuccess;
}

}  // namespace gtap::cli
