#include "output_path.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace gtap::core {

namespace {
struct RankVariable {
  const char* rank;
  const char* size;
};
// Order matters only when several are set (e.g. Slurm launching OpenMPI): the
// MPI library's own variables first, the resource manager's last.
constexpr RankVariable kRankVariables[] = {
    {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},  // OpenMPI
    {"PMI_RANK", "PMI_SIZE"},                          // MPICH / Intel MPI (PMI)
    {"PMIX_RANK", "PMIX_SIZE"},                        // PMIx
    {"MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_SIZE"},    // MVAPICH
    {"PALS_RANKID", "PALS_SIZE"},                      // HPE PALS
    {"FLUX_TASK_RANK", "FLUX_JOB_SIZE"},               // Flux
    {"SLURM_PROCID", "SLURM_NTASKS"},                  // Slurm
};

bool parseInt(const char* s, int& out) {
  if (!s || !*s) return false;
  char* end = nullptr;
  long v = std::strtol(s, &end, 10);
  if (*end || v < 0 || v > 1 << 30) return false;
  out = static_cast<int>(v);
  return true;
}
}  // namespace

RankInfo detectRank() {
  RankInfo info;
  for (const auto& v : kRankVariables) {
    int r;
    if (!parseInt(std::getenv(v.rank), r)) continue;
    info.rank = r;
    info.source = v.rank;
    int n;
    if (parseInt(std::getenv(v.size), n)) info.worldSize = n;
    break;
  }
  return info;
}

bool expandOutputPattern(const std::string& pattern, int pid, const RankInfo& rank,
                         std::time_t start, std::string& out, std::string& error) {
  out.clear();
  for (size_t i = 0; i < pattern.size(); ++i) {
    char c = pattern[i];
    if (c != '%') {
      out += c;
      continue;
    }
    if (i + 1 >= pattern.size()) {
      error = "pattern ends with a lone '%'";
      return false;
    }
    char p = pattern[++i];
    switch (p) {
      case '%':
        out += '%';
        break;
      case 'p':
        out += std::to_string(pid);
        break;
      case 'h': {
        char host[256] = {};
        if (gethostname(host, sizeof host - 1) != 0) std::strcpy(host, "unknown-host");
        out += host;
        break;
      }
      case 'r':
        out += std::to_string(rank.rank < 0 ? 0 : rank.rank);
        break;
      case 't': {
        char buf[32];
        std::tm tm {};
        localtime_r(&start, &tm);
        std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
        out += buf;
        break;
      }
      case 'e': {
        size_t close = pattern.find('}', i);
        if (i + 1 >= pattern.size() || pattern[i + 1] != '{' || close == std::string::npos) {
          error = "%e must be followed by {NAME}";
          return false;
        }
        std::string name = pattern.substr(i + 2, close - i - 2);
        if (name.empty()) {
          error = "%e{} names no variable";
          return false;
        }
        if (const char* v = std::getenv(name.c_str())) out += v;
        i = close;
        break;
      }
      default:
        error = std::string("unknown placeholder '%") + p + "' (known: %p %h %r %t %e{NAME} %%)";
        return false;
    }
  }
  if (out.empty()) {
    error = "pattern expands to an empty path";
    return false;
  }
  return true;
}

}  // namespace gtap::core
