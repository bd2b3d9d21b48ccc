// Runs real processes for integration tests: gtap itself and the workloads
// under it. Output is collected through pipes; nothing is simulated.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace gtap::test {

struct ProcessResult {
  int exitCode = -1;    // -1 when killed by a signal
  int signal = 0;
  std::string out;
  std::string err;
};

// Environment changes: a value sets the variable, a missing optional unsets it.
using EnvChanges = std::map<std::string, std::string>;

ProcessResult runProcess(const std::vector<std::string>& argv, const EnvChanges& env = {},
                         const std::vector<std::string>& unset = {});

// A process whose stdout is read line by line while it runs.
class RunningProcess {
 public:
  RunningProcess(const std::vector<std::string>& argv, const EnvChanges& env = {});
  ~RunningProcess();
  // Returns the next line of stdout, or false at end of output or timeout.
  bool readLine(std::string& line, std::chrono::milliseconds timeout);
  void kill(int sig);
  ProcessResult wait();
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int outFd_ = -1;
  std::string buffer_;
};

// Paths known at build time.
std::string gtapBinary();
// bin/gtap with `args`, run to its end.
ProcessResult runGtap(const std::vector<std::string>& args, const EnvChanges& env = {});
std::string workload(const std::string& name);
// A fresh empty directory for one test.
std::string freshDirectory(const std::string& name);
std::vector<std::string> filesIn(const std::string& dir, const std::string& suffix = ".gtap");
// Copies `binary` stripped of every symbol into DIR/<its name> and keeps its
// debug information where a lookup by build-id finds it
// (DIR/debug/.build-id/xx/rest.debug); returns the stripped copy's path, or
// an empty string (the test failed) when a tool did not work.
std::string strippedWithDebugFile(const std::string& binary, const std::string& dir);

// Counts a workload printed about itself: "PREFIX NAME COUNT" lines, summed
// per name.
std::map<std::string, uint64_t> printedCounts(const std::string& out, const std::string& prefix);

}  // namespace gtap::test
