// The exec family. A successful exec replaces the process image: no atexit
// handler, destructor or writer thread of gtap's runs after it. So before the
// real exec the capture is made complete (everything recorded, then the
// trailer); when the exec fails and returns, the trailer is taken back and
// capture goes on in the same file (session.cpp). A vfork child (or any clone
// gtap's fork handlers did not see) that execs leaves everything alone: the
// session it would see is its parent's.
//
// glibc's execl*, execvp* and fexecve reach execve inside libc, not through
// the exported symbol, so each entry point is interposed. posix_spawn's child
// execs inside libc too and never reaches gtap; glibc has no
// POSIX_SPAWN_SETEXEC, the only posix_spawn that replaces the caller.
#include <alloca.h>
#include <dlfcn.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>

#include "dlsym_hook.h"
#include "session.h"

namespace gtap::core {

namespace {

using ExecveFn = int (*)(const char*, char* const[], char* const[]);
using ExecvFn = int (*)(const char*, char* const[]);
using FexecveFn = int (*)(int, char* const[], char* const[]);
using ExecveatFn = int (*)(int, const char*, char* const[], char* const[], int);

struct RealExec {
  ExecveFn execve = nullptr;
  ExecvFn execv = nullptr;
  ExecvFn execvp = nullptr;
  ExecveFn execvpe = nullptr;
  FexecveFn fexecve = nullptr;
  ExecveatFn execveat = nullptr;
};
RealExec g_real;

template <typename Fn>
Fn resolved(Fn& slot, const char* name) {
  // Normally set when the library loaded; looked up here only when a library
  // loaded before gtap execs from its own constructor.
  if (!slot) slot = reinterpret_cast<Fn>(realDlsym(RTLD_NEXT, name));
  return slot;
}

// Looked up when the library loads: a vfork child must look nothing up (the
// dynamic loader's lock and caches are its parent's).
__attribute__((constructor(102))) void resolveRealExec() {
  resolved(g_real.execve, "execve");
  resolved(g_real.execv, "execv");
  resolved(g_real.execvp, "execvp");
  resolved(g_real.execvpe, "execvpe");
  resolved(g_real.fexecve, "fexecve");
  resolved(g_real.execveat, "execveat");
}

template <typename Call>
int aroundExec(Call call) {
  if (inVforkOrCloneChild()) return call();
  bool suspended = suspendSessionForExec();
  int result = call();
  int savedErrno = errno;
  if (suspended) resumeSessionAfterExec();
  errno = savedErrno;
  return result;
}

int missing() {
  errno = ENOSYS;
  return -1;
}

}  // namespace

}  // namespace gtap::core

// The variadic forms gather their arguments on the stack, as glibc does (exec
// may be called where malloc may not: a signal handler, a vfork child), and
// take the array form's path.
// The first argument is declared non-null (as glibc declares it, and as
// glibc counts them).
#define GTAP_GATHER_ARGS(first, argv, envpOut)                                   \
  va_list args_;                                                                 \
  va_start(args_, first);                                                        \
  size_t count_ = 1; /* the arguments before the terminating null */            \
  {                                                                              \
    va_list scan_;                                                               \
    va_copy(scan_, args_);                                                       \
    while (va_arg(scan_, const char*)) ++count_;                                 \
    va_end(scan_);                                                               \
  }                                                                              \
  auto** argv = static_cast<char**>(alloca((count_ + 1) * sizeof(char*)));       \
  argv[0] = const_cast<char*>(first);                                            \
  for (size_t i_ = 1; i_ <= count_; ++i_) argv[i_] = va_arg(args_, char*);       \
  envpOut;                                                                       \
  va_end(args_)

using gtap::core::aroundExec;
using gtap::core::g_real;
using gtap::core::missing;
using gtap::core::resolved;

#define GTAP_EXPORT extern "C" __attribute__((visibility("default")))

GTAP_EXPORT int execve(const char* path, char* const argv[], char* const envp[]) noexcept {
  auto real = resolved(g_real.execve, "execve");
  return real ? aroundExec([&] { return real(path, argv, envp); }) : missing();
}

GTAP_EXPORT int execv(const char* path, char* const argv[]) noexcept {
  auto real = resolved(g_real.execv, "execv");
  return real ? aroundExec([&] { return real(path, argv); }) : missing();
}

GTAP_EXPORT int execvp(const char* file, char* const argv[]) noexcept {
  auto real = resolved(g_real.execvp, "execvp");
  return real ? aroundExec([&] { return real(file, argv); }) : missing();
}

GTAP_EXPORT int execvpe(const char* file, char* const argv[], char* const envp[]) noexcept {
  auto real = resolved(g_real.execvpe, "execvpe");
  return real ? aroundExec([&] { return real(file, argv, envp); }) : missing();
}

GTAP_EXPORT int fexecve(int fd, char* const argv[], char* const envp[]) noexcept {
  auto real = resolved(g_real.fexecve, "fexecve");
  return real ? aroundExec([&] { return real(fd, argv, envp); }) : missing();
}

GTAP_EXPORT int execveat(int dirfd, const char* path, char* const argv[], char* const envp[], int flags) noexcept {
  auto real = resolved(g_real.execveat, "execveat");
  return real ? aroundExec([&] { return real(dirfd, path, argv, envp, flags); }) : missing();
}

GTAP_EXPORT int execl(const char* path, const char* arg, ...) noexcept {
  GTAP_GATHER_ARGS(arg, argv, (void)0);
  auto real = resolved(g_real.execve, "execve");
  return real ? aroundExec([&] { return real(path, argv, environ); }) : missing();
}

GTAP_EXPORT int execlp(const char* file, const char* arg, ...) noexcept {
  GTAP_GATHER_ARGS(arg, argv, (void)0);
  auto real = resolved(g_real.execvp, "execvp");
  return real ? aroundExec([&] { return real(file, argv); }) : missing();
}

GTAP_EXPORT int execle(const char* path, const char* arg, ...) noexcept {
  char* const* envp = nullptr;
  GTAP_GATHER_ARGS(arg, argv, envp = va_arg(args_, char* const*));
  auto real = resolved(g_real.execve, "execve");
  return real ? aroundExec([&] { return real(path, argv, envp); }) : missing();
}
