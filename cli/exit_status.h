// What gtap's exit status means, the same for every command (gtap run ends
// with the program's own once the program has started).
#pragma once

#include <iostream>

#include "gtap/readers/output_file.h"

namespace gtap::cli {

inline constexpr int kExitSuccess = 0;
// An input that cannot be read or is damaged, an output that cannot be
// written, a replay that failed, gtap installed incompletely.
inline constexpr int kExitError = 1;
// The command line: an unknown option, a missing or malformed argument, an
// output gtap will not write (one that exists, without --force; a symbolic
// link, directory or device, whatever is given).
inline constexpr int kExitUsage = 2;
// replay --verify: a read-back differed from what the program saw; diff
// --fail-above: something grew past the threshold.
inline constexpr int kExitMismatch = 3;

// For gtap --help and README.md's list.
inline constexpr const char* kExitStatusHelp =
    "Exit status: 0 success; 1 error (an input that cannot be read or is damaged, an output that cannot be "
    "written, a failed replay); 2 usage (an unknown option, a missing or malformed argument, an output gtap will "
    "not write: an existing file without --force, a symbolic link, directory or device); 3 replay --verify found a "
    "read-back that differs, or diff --fail-above a change above the threshold. gtap run: the program's own status (a program killed by a signal is killed by the "
    "same signal, so a shell shows 128+N); before the program starts, 2 usage, 1 error, 126 the program cannot be "
    "executed, 127 it is not found.";

// Says why an output was refused or could not be created; the status to exit with.
inline int reportOutputError(const char* verb, const readers::OutputError& e, const char* toReplace) {
  std::cerr << "gtap " << verb << ": " << e.what();
  if (e.kind() == readers::OutputError::Kind::exists && toReplace) std::cerr << "; " << toReplace;
  std::cerr << "\n";
  return e.refusedTarget() ? kExitUsage : kExitError;
}

}  // namespace gtap::cli
