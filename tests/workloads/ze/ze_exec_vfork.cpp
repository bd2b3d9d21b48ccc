// Calls Level Zero, then replaces itself or starts children the ways real
// programs do, and prints what it called ("calls NAME COUNT" lines; the image
// it execs prints "image NAME COUNT") so a test can hold gtap's files against
// what happened.
//
//   ze_exec_vfork exec VARIANT     calls, then execs itself ("image") with one
//                                  of execve execv execvp execvpe execl execlp
//                                  execle fexecve execveat
//   ze_exec_vfork exec-fails       calls; every variant fails (no such file)
//                                  with more calls between; then execs itself
//   ze_exec_vfork vfork            calls; vfork children that _exit, _Exit,
//                                  fail to exec and _exit, and exec /bin/true;
//                                  more calls after each
//   ze_exec_vfork spawn            calls; posix_spawn of /bin/true and of a
//                                  missing program, a clone(CLONE_VM|CLONE_VFORK)
//                                  child whose exec fails; more calls after each
//   ze_exec_vfork image            (what the exec'd image runs) a few calls
#include <fcntl.h>
#include <level_zero/ze_api.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

extern char** environ;

namespace {

std::map<std::string, int> g_counts;
ze_driver_handle_t g_driver = nullptr;
const char* g_self = nullptr;

void fail(const char* what) {
  std::fprintf(stderr, "%s failed: %s\n", what, std::strerror(errno));
  std::exit(10);
}

void start() {
  ++g_counts["zeInit"];
  if (zeInit(ZE_INIT_FLAG_GPU_ONLY) != ZE_RESULT_SUCCESS) fail("zeInit");
  uint32_t n = 1;
  ++g_counts["zeDriverGet"];
  if (zeDriverGet(&n, &g_driver) != ZE_RESULT_SUCCESS || !g_driver) fail("zeDriverGet");
}

void versionCalls(int n) {
  for (int i = 0; i < n; ++i) {
    ze_api_version_t v;
    ++g_counts["zeDriverGetApiVersion"];
    if (zeDriverGetApiVersion(g_driver, &v) != ZE_RESULT_SUCCESS) fail("zeDriverGetApiVersion");
  }
}

void printCounts(const char* prefix) {
  for (const auto& [name, count] : g_counts) std::printf("%s %s %d\n", prefix, name.c_str(), count);
  std::fflush(stdout);
}

const char* const kVariants[] = {"execve", "execv",  "execvp",  "execvpe", "execl",
                                 "execlp", "execle", "fexecve", "execveat"};

// Execs `path` (the program itself, or a missing file) with argument "image"
// through the named variant; returns only when the exec failed.
int execBy(const std::string& variant, const char* path) {
  char* argv[] = {const_cast<char*>(path), const_cast<char*>("image"), nullptr};
  if (variant == "execve") return execve(path, argv, environ);
  if (variant == "execv") return execv(path, argv);
  if (variant == "execvp") return execvp(path, argv);
  if (variant == "execvpe") return execvpe(path, argv, environ);
  if (variant == "execl") return execl(path, path, "image", static_cast<char*>(nullptr));
  if (variant == "execlp") return execlp(path, path, "image", static_cast<char*>(nullptr));
  if (variant == "execle") return execle(path, path, "image", static_cast<char*>(nullptr), environ);
  if (variant == "execveat") return execveat(AT_FDCWD, path, argv, environ, 0);
  if (variant == "fexecve") {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return fexecve(-1, argv, environ);  // fails as well (EINVAL)
    return fexecve(fd, argv, environ);
  }
  std::fprintf(stderr, "unknown variant %s\n", variant.c_str());
  std::exit(2);
}

int waitStatus(pid_t pid) {
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) fail("waitpid");
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

void expectExit(pid_t pid, int code, const char* what) {
  int got = waitStatus(pid);
  if (got != code) {
    std::fprintf(stderr, "%s: child exited %d, expected %d\n", what, got, code);
    std::exit(11);
  }
}

char g_cloneStack[256 * 1024] __attribute__((aligned(16)));

int cloneChild(void*) {
  char* argv[] = {const_cast<char*>("/nonexistent/ze-exec-vfork"), nullptr};
  execv(argv[0], argv);
  _exit(127);
}

}  // namespace

int main(int argc, char** argv) {
  g_self = argv[0];
  std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "image") {
    start();
    versionCalls(11);
    printCounts("image");
    return 0;
  }
  start();
  versionCalls(20);
  if (mode == "exec") {
    std::string variant = argc > 2 ? argv[2] : "execve";
    printCounts("calls");
    execBy(variant, g_self);
    fail(variant.c_str());
  } else if (mode == "exec-fails") {
    for (const char* variant : kVariants) {
      errno = 0;
      int r = execBy(variant, "/nonexistent/ze-exec-vfork");
      int expected = std::string(variant) == "fexecve" ? EINVAL : ENOENT;
      if (r != -1 || errno != expected) {
        std::fprintf(stderr, "%s returned %d, errno %d\n", variant, r, errno);
        return 12;
      }
      versionCalls(7);
    }
    printCounts("calls");
    execBy("execv", g_self);
    fail("execv");
  } else if (mode == "vfork") {
    pid_t pid = vfork();
    if (pid == 0) _exit(3);
    expectExit(pid, 3, "vfork + _exit");
    versionCalls(13);
    pid = vfork();
    if (pid == 0) _Exit(4);
    expectExit(pid, 4, "vfork + _Exit");
    versionCalls(17);
    pid = vfork();
    if (pid == 0) {
      char* args[] = {const_cast<char*>("/nonexistent/ze-exec-vfork"), nullptr};
      execv(args[0], args);
      _exit(127);
    }
    expectExit(pid, 127, "vfork + failed exec");
    versionCalls(19);
    pid = vfork();
    if (pid == 0) {
      char* args[] = {const_cast<char*>("/bin/true"), nullptr};
      execv(args[0], args);
      _exit(127);
    }
    expectExit(pid, 0, "vfork + exec");
    versionCalls(23);
  } else if (mode == "spawn") {
    char* trueArgs[] = {const_cast<char*>("/bin/true"), nullptr};
    pid_t pid = 0;
    if (posix_spawn(&pid, "/bin/true", nullptr, nullptr, trueArgs, environ) != 0) fail("posix_spawn");
    expectExit(pid, 0, "posix_spawn");
    versionCalls(13);
    char* missingArgs[] = {const_cast<char*>("no-such-program-ze-exec-vfork"), nullptr};
    int rc = posix_spawnp(&pid, missingArgs[0], nullptr, nullptr, missingArgs, environ);
    if (rc == 0) waitStatus(pid);  // older libcs report the failure as exit status 127
    versionCalls(17);
    pid = clone(&cloneChild, g_cloneStack + sizeof g_cloneStack, CLONE_VM | CLONE_VFORK | SIGCHLD, nullptr);
    if (pid < 0) fail("clone");
    expectExit(pid, 127, "clone + failed exec");
    versionCalls(19);
  } else {
    std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
    return 2;
  }
  printCounts("calls");
  return 0;
}
