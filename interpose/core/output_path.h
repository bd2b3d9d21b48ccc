// Expands an output pattern: %p pid, %h host, %r MPI rank, %t start time
// (YYYYmmdd-HHMMSS), %e{NAME} an environment variable, %% a percent sign.
#pragma once

#include <ctime>
#include <string>

namespace gtap::core {

struct RankInfo {
  int rank = -1;       // -1 when no launcher said
  int worldSize = -1;
  const char* source = nullptr;  // the variable it came from
};

// Reads the rank from the variables of OpenMPI, MPICH/PMI, PMIx, Slurm,
// MVAPICH, PALS and Flux, in that order.
RankInfo detectRank();

// Returns false and sets `error` on a malformed pattern.
bool expandOutputPattern(const std::string& pattern, int pid, const RankInfo& rank,
                         std::time_t start, std::string& out, std::string& error);

// Creates the capture file `path` (O_EXCL|O_NOFOLLOW, mode 0600), or when that
// name is taken its first free numbered alternative ("name.1.gtap", ...), and
// the directories it needs, each 0700 whatever the umask. The whole path is
// checked before anything is created (length, each component's length, every
// existing component a directory); directories gtap creates are entered
// through descriptors, never by name again, so a symbolic link planted in one
// is never followed; when creation fails part-way, the directories created
// are removed. Returns the open descriptor and sets `chosen` to the file's
// path, or returns -1 and sets `error` (naming the path and what failed).
int createOutputFile(const std::string& path, std::string& chosen, std::string& error);

}  // namespace gtap::core
