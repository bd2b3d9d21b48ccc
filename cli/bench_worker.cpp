// The bench worker: prepares the replay once, then performs it N times,
// timing each whole replay or each scope window, and flushes gtap's profile
// between iterations so that writing it is never inside a timed window.
#include <dlfcn.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "bench.h"
#include "gtap/readers/replay_stream.h"
#include "gtap/readers/replayer.h"

namespace gtap::cli {

namespace {

int64_t monotonicNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

}  // namespace

bool writeBenchTimings(const std::string& path, const BenchTimings& t, std::string& error) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    error = "cannot create " + path;
    return false;
  }
  std::ostringstream out;
  for (int64_t ns : t.iterationNs) out << "iteration " << ns << "\n";
  for (const auto& [b, e] : t.windows) out << "window " << b << " " << e << "\n";
  std::string text = out.str();
  bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ok = close(fd) == 0 && ok;
  if (!ok) error = "cannot write " + path;
  return ok;
}

bool readBenchTimings(const std::string& path, BenchTimings& t, std::string& error) {
  std::ifstream in(path);
  if (!in) {
    error = "cannot read " + path;
    return false;
  }
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string kind;
    fields >> kind;
    int64_t a = 0, b = 0;
    if (kind == "iteration" && fields >> a) t.iterationNs.push_back(a);
    else if (kind == "window" && fields >> a >> b) t.windows.emplace_back(a, b);
    else {
      error = path + ": unexpected line: " + line;
      return false;
    }
  }
  return true;
}

int runBenchWorker(const BenchOptions& o) {
  readers::ReplayOptions options;
  if (!o.source.toReplayOptions(options, "bench")) return 2;
  if (!o.source.useSimulatedRuntimes(options, "bench")) return 1;
  if (!o.scope.empty()) options.requiredScopes.push_back(o.scope);
  // libgtap.so exports gtap_flush when it is loaded; without it the profile
  // is written at the flush interval and at exit.
  auto flush = reinterpret_cast<void (*)()>(dlsym(RTLD_DEFAULT, "gtap_flush"));
  try {
    readers::Capture capture(o.source.file);
    readers::ReplayStream stream = readers::loadReplayStream(capture);
    readers::Replayer replayer(capture, stream, options);
    replayer.prepare();
    for (const auto& w : replayer.warnings()) std::cerr << "gtap bench: warning: " << w << "\n";
    BenchTimings timings;
    int64_t sum = 0, begin = 0;
    int depth = 0;
    readers::ReplayCallbacks callbacks;
    if (!o.scope.empty()) {
      // Outstanding work is finished at both ends, so the window holds
      // exactly the scope's work.
      callbacks.scopeBegin = [&](const readers::ReplayRecord& r) {
        if (r.fields.getScopeBegin().getScope() != o.scope || depth++ > 0) return;
        replayer.synchronizeAll();
        begin = monotonicNs();
      };
      callbacks.scopeEnd = [&](const readers::ReplayRecord& r) {
        if (r.fields.getScopeEnd().getScope() != o.scope || depth == 0 || --depth > 0) return;
        replayer.synchronizeAll();
        int64_t end = monotonicNs();
        sum += end - begin;
        timings.windows.emplace_back(begin, end);
      };
    }
    for (int i = 0; i < o.iterations; ++i) {
      sum = 0;
      depth = 0;
      int64_t start = monotonicNs();
      replayer.run(callbacks);
      int64_t end = monotonicNs();
      if (o.scope.empty()) {
        sum = end - start;
        timings.windows.emplace_back(start, end);
      }
      timings.iterationNs.push_back(sum);
      if (flush) flush();
    }
    std::string error;
    if (!writeBenchTimings(o.workerResult, timings, error)) {
      std::cerr << "gtap bench: " << error << "\n";
      return 1;
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "gtap bench: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace gtap::cli
