#include "process.h"

#include <gtest/gtest.h>

#include <sstream>

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <stdexcept>

extern char** environ;

namespace gtap::test {

namespace {

std::vector<std::string> buildEnvironment(const EnvChanges& env, const std::vector<std::string>& unset) {
  std::vector<std::string> out;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    std::string key = kv.substr(0, kv.find('='));
    if (env.count(key) || std::find(unset.begin(), unset.end(), key) != unset.end()) continue;
    out.push_back(kv);
  }
  for (const auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}

pid_t spawn(const std::vector<std::string>& argv, const EnvChanges& env, const std::vector<std::string>& unset,
            int outFd, int errFd, int closeA, int closeB) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, outFd, 1);
  posix_spawn_file_actions_adddup2(&actions, errFd, 2);
  if (closeA >= 0) posix_spawn_file_actions_addclose(&actions, closeA);
  if (closeB >= 0) posix_spawn_file_actions_addclose(&actions, closeB);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  auto envStrings = buildEnvironment(env, unset);
  std::vector<char*> envp;
  for (auto& e : envStrings) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid;
  int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot start " + argv[0] + ": " + std::strerror(rc));
  return pid;
}

void fillResult(int status, ProcessResult& r) {
  if (WIFEXITED(status)) r.exitCode = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
}

}  // namespace

ProcessResult runProcess(const std::vector<std::string>& argv, const EnvChanges& env,
                         const std::vector<std::string>& unset) {
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC)) throw std::runtime_error("pipe");
  pid_t pid = spawn(argv, env, unset, out[1], err[1], out[0], err[0]);
  close(out[1]);
  close(err[1]);
  ProcessResult r;
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  int open = 2;
  char buf[65536];
  while (open > 0) {
    if (poll(fds, 2, -1) < 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP))) continue;
      ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open;
      } else {
        (i == 0 ? r.out : r.err).append(buf, static_cast<size_t>(n));
      }
    }
  }
  int status = 0;
  waitpid(pid, &status, 0);
  fillResult(status, r);
  return r;
}

RunningProcess::RunningProcess(const std::vector<std::string>& argv, const EnvChanges& env) {
  int out[2];
  if (pipe2(out, O_CLOEXEC)) throw std::runtime_error("pipe");
  int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
  pid_ = spawn(argv, env, {}, out[1], devnull, out[0], -1);
  close(out[1]);
  close(devnull);
  outFd_ = out[0];
}

RunningProcess::~RunningProcess() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  if (outFd_ >= 0) close(outFd_);
}

bool RunningProcess::readLine(std::string& line, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    size_t nl = buffer_.find('\n');
    if (nl != std::string::npos) {
      line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return true;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{outFd_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    char buf[4096];
    ssize_t n = read(outFd_, buf, sizeof buf);
    if (n <= 0) return false;
    buffer_.append(buf, static_cast<size_t>(n));
  }
}

void RunningProcess::kill(int sig) { ::kill(pid_, sig); }

ProcessResult RunningProcess::wait() {
  ProcessResult r;
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  fillResult(status, r);
  return r;
}

std::string gtapBinary() { return GTAP_TEST_GTAP_BINARY; }
ProcessResult runGtap(const std::vector<std::string>& args, const EnvChanges& env) {
  std::vector<std::string> argv = {gtapBinary()};
  argv.insert(argv.end(), args.begin(), args.end());
  return runProcess(argv, env);
}

std::string workload(const std::string& name) { return std::string(GTAP_TEST_WORKLOAD_DIR) + "/" + name; }

std::string freshDirectory(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("gtap-it-" + std::to_string(getpid())) / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

std::string strippedWithDebugFile(const std::string& binary, const std::string& dir) {
  std::string stripped = dir + "/" + std::filesystem::path(binary).filename().string();
  auto strip = runProcess({"strip", "--strip-all", "-o", stripped, binary});
  EXPECT_EQ(strip.exitCode, 0) << strip.err;
  auto note = runProcess({"readelf", "-n", stripped});
  auto at = note.out.find("Build ID: ");
  EXPECT_NE(at, std::string::npos) << binary << " is linked without --build-id";
  if (strip.exitCode != 0 || at == std::string::npos) return {};
  std::string id = note.out.substr(at + 10, note.out.find_first_of("\n ", at + 10) - at - 10);
  std::filesystem::create_directories(dir + "/debug/.build-id/" + id.substr(0, 2));
  auto copy = runProcess(
      {"objcopy", "--only-keep-debug", binary, dir + "/debug/.build-id/" + id.substr(0, 2) + "/" + id.substr(2) + ".debug"});
  EXPECT_EQ(copy.exitCode, 0) << copy.err;
  return copy.exitCode == 0 ? stripped : std::string();
}

std::vector<std::string> filesIn(const std::string& dir, const std::string& suffix) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    std::string p = e.path().string();
    if (p.size() >= suffix.size() && p.compare(p.size() - suffix.size(), suffix.size(), suffix) == 0)
      out.push_back(p);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::map<std::string, uint64_t> printedCounts(const std::string& out, const std::string& prefix) {
  std::map<std::string, uint64_t> c;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string p, name;
    uint64_t n;
    if (fields >> p >> name >> n && p == prefix) c[name] += n;
  }
  return c;
}

}  // namespace gtap::test
