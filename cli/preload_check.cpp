#include "preload_check.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <set>
#include <sstream>

#include "elf_needs.h"

extern char** environ;

namespace gtap::cli {

namespace {

namespace fs = std::filesystem;

constexpr const char* kLoader = "/lib64/ld-linux-x86-64.so.2";

// The program's path as execvp finds it.
fs::path programPath(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin:/bin");
  for (std::string d; std::getline(dirs, d, ':');) {
    fs::path candidate = fs::path(d.empty() ? "." : d) / name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return {};
}

// What the loader says the program loads: soname -> path ("ld.so --list",
// which maps the program and its libraries but runs none of their code).
// Empty when it is not a dynamic executable the loader lists.
std::map<std::string, std::string> loadedBy(const fs::path& program) {
  std::map<std::string, std::string> out;
  int pipefd[2];
  if (::pipe2(pipefd, O_CLOEXEC) != 0) return out;
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(pipefd[0]);
    ::close(pipefd[1]);
    return out;
  }
  if (pid == 0) {
    ::dup2(pipefd[1], 1);
    int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0) ::dup2(null, 2);
    ::unsetenv("LD_PRELOAD");
    const char* argv[] = {kLoader, "--list", program.c_str(), nullptr};
    ::execve(kLoader, const_cast<char* const*>(argv), environ);
    ::_exit(127);
  }
  ::close(pipefd[1]);
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = ::read(pipefd[0], buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
  ::close(pipefd[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    size_t arrow = line.find(" => ");
    if (arrow == std::string::npos) continue;
    size_t start = line.find_first_not_of(" \t");
    size_t end = line.find(" (", arrow);
    out[line.substr(start, arrow - start)] = line.substr(arrow + 4, end == std::string::npos ? end : end - arrow - 4);
  }
  return out;
}

}  // namespace

std::string preloadProblem(const fs::path& library, const std::vector<std::string>& command) {
  std::error_code ec;
  fs::path deps = library.parent_path() / "deps";
  if (command.empty()) return {};
  fs::path program = programPath(command[0]);
  if (program.empty()) return {};
  auto loaded = loadedBy(program);
  if (loaded.empty()) return {};
  // The versions libgtap.so and the bundle's libraries need, by library.
  std::map<std::string, std::set<std::string>> wanted;
  std::vector<fs::path> ours = {library};
  if (fs::is_directory(deps, ec))
    for (const auto& e : fs::directory_iterator(deps, ec)) ours.push_back(e.path());
  for (const auto& f : ours) {
    ElfNeeds needs;
    std::string error;
    if (!readElfNeeds(f, needs, error)) continue;
    for (const auto& [soname, versions] : needs.versions) wanted[soname].insert(versions.begin(), versions.end());
  }
  std::string problems;
  for (const auto& [soname, versions] : wanted) {
    auto it = loaded.find(soname);
    if (it == loaded.end()) continue;  // the bundle's copy will be loaded
    fs::path theirs = fs::weakly_canonical(it->second, ec);
    if (fs::is_directory(deps, ec) && theirs.parent_path() == fs::weakly_canonical(deps, ec)) continue;
    ElfNeeds defined;
    std::string error;
    if (!readElfNeeds(theirs, defined, error) || defined.defines.empty()) continue;
    std::string missing;
    for (const auto& v : versions)
      if (!defined.defines.count(v)) missing += (missing.empty() ? "" : ", ") + v;
    if (!missing.empty())
      problems += (problems.empty() ? "" : "; ") + command[0] + " loads " + it->second + ", which lacks " + missing +
                  " that gtap's libraries need";
  }
  if (problems.empty()) return {};
  return problems +
         ": with gtap preloaded the loader would stop the program before it starts (gtap needs libraries at least as "
         "new as those it was built with: use a gtap, or a gtap bundle, built on a system no newer than the "
         "program's)";
}

}  // namespace gtap::cli
