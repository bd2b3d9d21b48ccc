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

}  // namespace gtap::core
