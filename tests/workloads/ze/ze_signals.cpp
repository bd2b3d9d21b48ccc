// Calls Level Zero, then meets a signal in a chosen way, so a test can hold a
// run under gtap against a plain run: same output, same exit status or
// terminating signal.
//
//   ze_signals die SIGNAL HOW HANDLER
//     SIGNAL   a number
//     HOW      raise | kill | tgkill | sigqueue | fault (a real SEGV/BUS/FPE/ILL)
//     HANDLER  none | exit (the program's handler _exits 40) | return (it
//              returns, and the program calls on and exits 0)
//   ze_signals handled N        its own SIGHUP handler, N raises between calls
//   ze_signals ignored          SIGUSR2 ignored before the first call, SIGPIPE
//                               after it: both raised, the program lives on
//   ze_signals view             prints the dispositions it reads back
//   ze_signals resethand        a SA_RESETHAND handler for SIGTERM: the
//                               first raise is handled, the second ends it
//
// Prints "calls NAME COUNT" lines for what it called before a signal, "total
// NAME COUNT" lines for everything when it lived on, and what its handlers saw.
#include <fcntl.h>
#include <level_zero/ze_api.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

int g_versionCalls = 0;
ze_driver_handle_t g_driver = nullptr;

void check(ze_result_t r, const char* what) {
  if (r != ZE_RESULT_SUCCESS) {
    std::fprintf(stderr, "%s failed: 0x%x\n", what, r);
    std::exit(10);
  }
}

void start() {
  check(zeInit(0), "zeInit");
  uint32_t count = 1;
  check(zeDriverGet(&count, &g_driver), "zeDriverGet");
}

void call(int n) {
  for (int i = 0; i < n; ++i) {
    ze_api_version_t version;
    check(zeDriverGetApiVersion(g_driver, &version), "zeDriverGetApiVersion");
    ++g_versionCalls;
  }
}

// What was called so far, out before the program may die ("calls"), or at
// its end after it lived through a signal ("total").
void report(const char* prefix = "calls") {
  std::printf("%s zeInit 1\n%s zeDriverGet 1\n%s zeDriverGetApiVersion %d\n", prefix, prefix, prefix,
              g_versionCalls);
  std::fflush(stdout);
}

void say(const char* text) {
  ssize_t ignored = ::write(STDOUT_FILENO, text, std::strlen(text));
  (void)ignored;
}

void handlerExit(int) {
  say("handled\n");
  _exit(40);
}

volatile sig_atomic_t g_handled = 0;
void handlerReturn(int) {
  g_handled = g_handled + 1;
}

void send(int sig, const std::string& how) {
  if (how == "raise") {
    raise(sig);
  } else if (how == "kill") {
    kill(getpid(), sig);
  } else if (how == "tgkill") {
    syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), sig);
  } else if (how == "sigqueue") {
    sigqueue(getpid(), sig, sigval{7});
  } else if (how == "fault") {
    if (sig == SIGSEGV) {
      *static_cast<volatile int*>(nullptr) = 1;
    } else if (sig == SIGFPE) {
      volatile int zero = 0, one = 1;
      volatile int q = one / zero;
      (void)q;
    } else if (sig == SIGILL) {
      __builtin_trap();
    } else if (sig == SIGBUS) {
      // A shared mapping past the end of its (empty) file.
      FILE* f = std::tmpfile();
      void* p = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fileno(f), 0);
      if (p == MAP_FAILED) std::exit(11);
      *static_cast<volatile int*>(p) = 1;
    }
  } else {
    std::fprintf(stderr, "unknown way: %s\n", how.c_str());
    std::exit(2);
  }
}

const char* describe(int sig) {
  struct sigaction sa {};
  if (sigaction(sig, nullptr, &sa) != 0) return "error";
  if (sa.sa_handler == SIG_DFL) return "default";
  if (sa.sa_handler == SIG_IGN) return "ignored";
  if (sa.sa_handler == &handlerExit) return "handlerExit";
  if (sa.sa_handler == &handlerReturn) return (sa.sa_flags & SA_RESTART) ? "handlerReturn restart" : "handlerReturn";
  return "other";
}

int die(int sig, const std::string& how, const std::string& handler) {
  if (handler == "exit") {
    signal(sig, &handlerExit);
  } else if (handler == "return") {
    struct sigaction sa {};
    sa.sa_handler = &handlerReturn;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, nullptr);
  }
  start();
  call(3);
  std::printf("disposition %s\n", describe(sig));
  report();
  send(sig, how);
  // Here only when the program's handler returned.
  std::printf("handled %d\n", static_cast<int>(g_handled));
  call(2);
  report("total");
  return 0;
}

void countHup(int) { g_handled = g_handled + 1; }

int handled(int n) {
  struct sigaction sa {};
  sa.sa_handler = &countHup;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGHUP, &sa, nullptr);
  start();
  for (int i = 0; i < n; ++i) {
    call(1);
    raise(SIGHUP);
  }
  call(1);
  std::printf("handled %d\n", static_cast<int>(g_handled));
  report();
  return 0;
}

int ignored() {
  signal(SIGUSR2, SIG_IGN);
  start();
  call(2);
  signal(SIGPIPE, SIG_IGN);
  raise(SIGUSR2);
  raise(SIGPIPE);
  call(2);
  std::printf("survived\n");
  report();
  return 0;
}

int view() {
  signal(SIGUSR1, &handlerExit);
  start();
  call(1);
  std::printf("SIGPIPE %s\n", describe(SIGPIPE));
  std::printf("SIGTERM %s\n", describe(SIGTERM));
  std::printf("SIGSEGV %s\n", describe(SIGSEGV));
  std::printf("SIGUSR1 %s\n", describe(SIGUSR1));
  // Set after the first call, read back by each interface.
  void (*old)(int) = signal(SIGTERM, &handlerReturn);
  std::printf("signal SIGTERM was %s\n", old == SIG_DFL ? "default" : "other");
  std::printf("SIGTERM %s\n", describe(SIGTERM));
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  siginterrupt(SIGTERM, 1);  // what older programs still call
#pragma GCC diagnostic pop
  std::printf("SIGTERM %s\n", describe(SIGTERM));
  old = signal(SIGTERM, SIG_DFL);
  std::printf("signal SIGTERM was %s\n", old == &handlerReturn ? "handlerReturn" : "other");
  std::printf("SIGTERM %s\n", describe(SIGTERM));
  signal(SIGALRM, SIG_IGN);
  std::printf("SIGALRM %s\n", describe(SIGALRM));
  report();
  // Back to the default: the signal still ends the program.
  raise(SIGTERM);
  return 0;
}

// A vfork child sets its own dispositions before it leaves (as a spawn does
// before exec); they are the child's, not the parent's.
int vforkView() {
  start();
  call(1);
  pid_t child = vfork();
  if (child == 0) {
    signal(SIGPIPE, SIG_IGN);
    signal(SIGTERM, &handlerReturn);
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  std::printf("SIGPIPE %s\n", describe(SIGPIPE));
  std::printf("SIGTERM %s\n", describe(SIGTERM));
  call(1);
  report();
  // Still the default here: the signal ends the parent.
  raise(SIGPIPE);
  return 0;
}

int resethand() {
  struct sigaction sa {};
  sa.sa_handler = &handlerReturn;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND;
  sigaction(SIGTERM, &sa, nullptr);
  start();
  call(2);
  raise(SIGTERM);
  std::printf("handled %d\nSIGTERM %s\n", static_cast<int>(g_handled), describe(SIGTERM));
  call(1);
  report("total");
  raise(SIGTERM);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "die" && argc == 5) return die(std::atoi(argv[2]), argv[3], argv[4]);
  if (mode == "handled" && argc == 3) return handled(std::atoi(argv[2]));
  if (mode == "ignored") return ignored();
  if (mode == "view") return view();
  if (mode == "resethand") return resethand();
  if (mode == "vforkview") return vforkView();
  std::fprintf(stderr, "usage: ze_signals die SIGNAL HOW HANDLER | handled N | ignored | view | resethand\n");
  return 2;
}
