#include "output_path.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

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

// A descriptor closed when it goes out of scope.
class OwnedFd {
 public:
  explicit OwnedFd(int fd = -1) : fd_(fd) {}
  ~OwnedFd() { reset(); }
  OwnedFd(const OwnedFd&) = delete;
  OwnedFd& operator=(const OwnedFd&) = delete;
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

// Long paths are shortened in messages, so one line still says what failed.
std::string shown(const std::string& path) {
  return path.size() <= 160 ? path : path.substr(0, 80) + "..." + path.substr(path.size() - 60);
}

std::string joined(const std::vector<std::string>& parts, size_t from, size_t to) {
  std::string out;
  for (size_t i = from; i < to; ++i) {
    if (!out.empty()) out += '/';
    out += parts[i];
  }
  return out;
}

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

int createOutputFile(const std::string& path, std::string& chosen, std::string& error) {
  // Checked before anything exists: a path the system cannot name would
  // otherwise fail only some directories deep, after creating them.
  if (path.size() >= PATH_MAX) {
    error = shown(path) + ": the path is " + std::to_string(path.size()) +
            " bytes long; the system's limit is " + std::to_string(PATH_MAX - 1);
    return -1;
  }
  if (path.empty() || path.back() == '/') {
    error = "'" + path + "': names a directory, not a file";
    return -1;
  }
  std::vector<std::string> parts;
  for (size_t i = 0; i < path.size();) {
    size_t slash = path.find('/', i);
    if (slash == std::string::npos) slash = path.size();
    if (slash > i) parts.push_back(path.substr(i, slash - i));
    i = slash + 1;
  }
  for (size_t i = 0; i < parts.size(); ++i)
    if (parts[i].size() > NAME_MAX) {
      error = shown(path) + ": the name '" + shown(parts[i]) + "' is " + std::to_string(parts[i].size()) +
              " bytes long; the system's limit is " + std::to_string(NAME_MAX);
      return -1;
    }
  bool absolute = path[0] == '/';
  std::string prefix = absolute ? "/" : "";
  auto prefixThrough = [&](size_t i) { return prefix + joined(parts, 0, i + 1); };

  // The directories that exist already (a symbolic link the user made to a
  // directory is theirs to make, and followed).
  OwnedFd dir(::open(absolute ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (dir.get() < 0) {
    error = std::string(absolute ? "/" : "the current directory") + ": " + std::strerror(errno);
    return -1;
  }
  size_t last = parts.size() - 1;  // the file's own name
  size_t existing = 0;
  for (; existing < last; ++existing) {
    struct stat st {};
    if (::fstatat(dir.get(), parts[existing].c_str(), &st, 0) != 0) {
      if (errno == ENOENT) break;
      error = prefixThrough(existing) + ": " + std::strerror(errno);
      return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
      error = prefixThrough(existing) + ": exists and is not a directory";
      return -1;
    }
    int next = ::openat(dir.get(), parts[existing].c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (next < 0) {
      error = prefixThrough(existing) + ": " + std::strerror(errno);
      return -1;
    }
    dir.reset(next);
  }

  // The missing ones, each entered through the descriptor of its parent and
  // never by name again: one created by gtap is 0700 and its own, so nothing
  // can be planted in it, and one that turns out to be a symbolic link where
  // gtap just made a directory is refused.
  OwnedFd base(::fcntl(dir.get(), F_DUPFD_CLOEXEC, 0));
  std::vector<bool> created;  // per level below `base`
  auto removeCreated = [&] {
    for (size_t k = created.size(); k-- > 0;)
      if (created[k]) ::unlinkat(base.get(), joined(parts, existing, existing + k + 1).c_str(), AT_REMOVEDIR);
  };
  if (base.get() < 0) {
    error = shown(path) + ": " + std::strerror(errno);
    return -1;
  }
  for (size_t i = existing; i < last; ++i) {
    bool made = ::mkdirat(dir.get(), parts[i].c_str(), 0700) == 0;
    if (!made && errno != EEXIST) {  // EEXIST: another process made it meanwhile
      error = prefixThrough(i) + ": cannot create the directory: " + std::strerror(errno);
      removeCreated();
      return -1;
    }
    created.push_back(made);
    int next = ::openat(dir.get(), parts[i].c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0) {
      error = prefixThrough(i) + ": " + (errno == ENOTDIR || errno == ELOOP
                                             ? std::string("is not a directory gtap can enter (a symbolic link?)")
                                             : std::string(std::strerror(errno)));
      removeCreated();
      return -1;
    }
    dir.reset(next);
  }

  // Never replaces an existing file: the first free of "name.1.gtap",
  // "name.2.gtap", ... instead.
  const std::string& name = parts[last];
  std::string stem = name, ext;
  if (size_t dot = name.rfind('.'); dot != std::string::npos && dot > 0) {
    stem = name.substr(0, dot);
    ext = name.substr(dot);
  }
  std::string directory = path.substr(0, path.rfind('/') + 1);
  for (int n = 0; n < 1000; ++n) {
    std::string candidate = n == 0 ? name : stem + "." + std::to_string(n) + ext;
    int fd = ::openat(dir.get(), candidate.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0) {
      chosen = directory + candidate;
      return fd;
    }
    if (errno == EEXIST) continue;
    error = shown(directory + candidate) + ": " + std::strerror(errno);
    removeCreated();
    return -1;
  }
  error = shown(path) + ": it and 999 numbered alternatives exist";
  return -1;
}

}  // namespace gtap::core
