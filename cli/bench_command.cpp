// gtap bench: times full replays of a capture (or one scope of them) and the
// device time of each kernel. The device times come from gtap profiling the
// replay: the command runs itself again as a worker with libgtap.so preloaded
// in kernels mode, then reads the worker's timings and its profile.
#include <fcntl.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <stdexcept>

#include "bench.h"
#include "bench_counters.h"
#include "commands.h"
#include "exit_status.h"
#include "gtap/readers/json.h"
#include "gtap/readers/kernel_stats.h"
#include "gtap/readers/table.h"
#include "install_paths.h"
#include "output.h"

namespace gtap::cli {

namespace {

constexpr const char* kOverheadNote =
    "times include gtap's kernel profiling of the replay, about 1 us per launch";

// Removes the temporary directory (and what the worker left in it) on return.
struct TempDirectory {
  std::string path;
  ~TempDirectory() {
    if (path.empty()) return;
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

int runWorker(const BenchOptions& o, const std::string& library, const std::string& profile,
              const std::string& result, int counterPass = -1) {
  // A counter pass replays once: its timings are not reported.
  int iterations = counterPass >= 0 ? 1 : o.iterations;
  std::vector<std::string> args = {"gtap", "bench", o.source.file, "--iterations", std::to_string(iterations),
                                   "--worker-result", result};
  if (!o.scope.empty()) args.insert(args.end(), {"--scope", o.scope});
  if (o.source.sim) args.push_back("--sim");
  if (o.source.device >= 0) args.insert(args.end(), {"--device", std::to_string(o.source.device)});
  args.insert(args.end(), {"--wait-timeout", std::to_string(o.source.waitTimeout)});
  for (const auto& r : o.source.remaps) args.insert(args.end(), {"--remap", r});
  for (const auto& s : o.source.substitutions) args.insert(args.end(), {"--substitute", s});
  pid_t pid = fork();
  if (pid < 0) {
    std::cerr << "gtap bench: fork failed: " << std::strerror(errno) << "\n";
    return -1;
  }
  if (pid == 0) {
    const char* old = getenv("LD_PRELOAD");
    std::string preload = old && *old ? std::string(old) + ":" + library : library;
    setenv("LD_PRELOAD", preload.c_str(), 1);
    setenv("GTAP_MODE", "kernels", 1);
    setenv("GTAP_OUTPUT", profile.c_str(), 1);
    setenv("GTAP_FLUSH_MS", "60000", 1);
    setenv("GTAP_QUIET", "1", 1);
    if (counterPass >= 0) {
      setenv("GTAP_COUNTERS", o.counters.c_str(), 1);
      setenv("GTAP_COUNTER_PASS", std::to_string(counterPass).c_str(), 1);
    } else {
      unsetenv("GTAP_COUNTERS");
    }
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv("/proc/self/exe", argv.data());
    std::cerr << "gtap bench: cannot run /proc/self/exe: " << std::strerror(errno) << "\n";
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  std::cerr << "gtap bench: the replay worker was killed by signal " << WTERMSIG(status) << "\n";
  return -1;
}

// Copies the file at `from` into `to`'s temporary file. Throws on failure.
void copyInto(const std::string& from, readers::OutputFile& to) {
  int in = open(from.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) throw std::runtime_error("cannot read " + from + ": " + std::strerror(errno));
  std::vector<char> buffer(1 << 20);
  for (;;) {
    ssize_t n = read(in, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      close(in);
      throw std::runtime_error("cannot read " + from + ": " + std::strerror(err));
    }
    if (n == 0) break;
    to.stream().write(buffer.data(), n);
  }
  close(in);
}

// Per kernel name: the device times of launches submitted inside a timed window.
std::vector<readers::KernelRow> kernelTimes(const std::string& profile, const BenchTimings& timings,
                                            std::string& error) {
  try {
    readers::Capture capture(profile);
    return readers::kernelRowsWithin({&capture, readers::loadDeviceWork(capture)}, timings.windows);
  } catch (const std::exception& e) {
    error = e.what();
    return {};
  }
}

void printText(const BenchOptions& o, const BenchTimings& t, const std::vector<readers::KernelRow>& kernels,
               const std::string& keptProfile) {
  auto w = readers::spreadOf(t.iterationNs);
  std::cout << "gtap bench: " << o.source.file << ", " << t.iterationNs.size() << " iterations (" << kOverheadNote
            << ")\n";
  std::cout << (o.scope.empty() ? std::string("replay") : "scope " + o.scope) << " wall time: min "
            << readers::formatNanoseconds(w.min) << ", median " << readers::formatNanoseconds(w.median) << ", max "
            << readers::formatNanoseconds(w.max) << "\n\n";
  readers::Table table("bench_kernel", {"kernel", "count", "total", "mean", "min", "max", "untimed"});
  for (const auto& k : kernels) {
    table.add({readers::Cell::str(k.key), readers::Cell::count(static_cast<int64_t>(k.time.count)),
               readers::Cell::nanoseconds(k.time.total), readers::Cell::nanoseconds(static_cast<int64_t>(k.time.mean)),
               readers::Cell::nanoseconds(k.time.min), readers::Cell::nanoseconds(k.time.max),
               readers::Cell::count(static_cast<int64_t>(k.untimed))});
  }
  if (kernels.empty()) std::cout << "no kernels launched in the timed windows\n";
  else table.print(std::cout, readers::OutputFormat::text);
  if (!keptProfile.empty()) std::cout << "\nprofile: " << keptProfile << "\n";
}

void printJson(const BenchOptions& o, const BenchTimings& t, const std::vector<readers::KernelRow>& kernels,
               const std::string& keptProfile, const std::string& counters) {
  auto w = readers::spreadOf(t.iterationNs);
  std::string s = "{\"file\":";
  readers::appendJsonString(s, o.source.file);
  s += ",\"iterations\":" + std::to_string(t.iterationNs.size()) + ",\"scope\":";
  if (o.scope.empty()) s += "null";
  else readers::appendJsonString(s, o.scope);
  s += ",\"note\":";
  readers::appendJsonString(s, kOverheadNote);
  s += ",\"wall_ns\":{\"min\":" + std::to_string(w.min) + ",\"median\":" + std::to_string(w.median) +
       ",\"max\":" + std::to_string(w.max) + ",\"each\":[";
  for (size_t i = 0; i < t.iterationNs.size(); ++i) s += (i ? "," : "") + std::to_string(t.iterationNs[i]);
  s += "]},\"kernels\":[";
  for (size_t i = 0; i < kernels.size(); ++i) {
    const auto& k = kernels[i];
    s += i ? ",{\"name\":" : "{\"name\":";
    readers::appendJsonString(s, k.key);
    s += ",\"count\":" + std::to_string(k.time.count) + ",\"total_ns\":" + std::to_string(k.time.total) +
         ",\"mean_ns\":" + std::to_string(static_cast<int64_t>(k.time.mean)) +
         ",\"min_ns\":" + std::to_string(k.time.min) + ",\"max_ns\":" + std::to_string(k.time.max) +
         ",\"untimed\":" + std::to_string(k.untimed) + "}";
  }
  s += "],\"profile\":";
  if (keptProfile.empty()) s += "null";
  else readers::appendJsonString(s, keptProfile);
  if (!counters.empty()) s += ",\"counters\":" + counters;
  std::cout << s << "}\n";
}

int bench(const BenchOptions& o) {
  // Checked here for the command and the worker alike; the worker's replay
  // opens the simulated HSA runtime by the path this finds.
  readers::ReplayOptions simulated;
  if (!o.source.useSimulatedRuntimes(simulated, "bench")) return kExitError;
  if (!o.workerResult.empty()) return runBenchWorker(o);
  if (o.format != "text" && o.format != "json") {
    std::cerr << "gtap bench: --format must be text or json\n";
    return kExitUsage;
  }
  // The worker checks these too; a malformed one is said here, as usage.
  readers::ReplayOptions checked;
  if (!o.source.toReplayOptions(checked, "bench")) return kExitUsage;
  // The kept profile's file is made before the replays, so that a target
  // gtap will not write is said at once; it is removed on every failure.
  std::optional<readers::OutputFile> kept;
  if (!o.profile.empty()) {
    try {
      kept.emplace(o.profile, false);
    } catch (const readers::OutputError& e) {
      return reportOutputError("bench --profile", e, "it is never replaced");
    }
  }
  auto library = gtapLibraryDirectory() / "libgtap.so";
  if (!std::filesystem::exists(library)) {
    std::cerr << "gtap bench: " << library.string() << " not found (is gtap installed whole?)\n";
    return kExitError;
  }
  if (library.string().find_first_of(" :") != std::string::npos) {
    std::cerr << "gtap bench: the path " << library.string() << " holds a space or colon, which LD_PRELOAD cannot carry\n";
    return kExitError;
  }
  std::string pattern = (std::filesystem::temp_directory_path() / "gtap-bench-XXXXXX").string();
  TempDirectory temp;
  if (!mkdtemp(pattern.data())) {
    std::cerr << "gtap bench: cannot create a temporary directory: " << std::strerror(errno) << "\n";
    return kExitError;
  }
  temp.path = pattern;
  // The worker's libgtap.so writes the profile in the private directory; a
  // kept one is copied into place from there.
  std::string profile = temp.path + "/profile.gtap";
  std::string result = temp.path + "/timings.txt";
  bool counting = !o.counters.empty();
  int status = runWorker(o, library.string(), profile, result);
  if (status != 0) {
    if (status > 0) std::cerr << "gtap bench: the replay failed (worker exit status " << status << ")\n";
    return kExitError;
  }
  BenchTimings timings;
  std::string error;
  if (!readBenchTimings(result, timings, error)) {
    std::cerr << "gtap bench: " << error << "\n";
    return kExitError;
  }
  auto kernels = kernelTimes(profile, timings, error);
  if (!error.empty()) {
    std::cerr << "gtap bench: reading the profile " << profile << ": " << error << "\n";
    return kExitError;
  }
  // Counters: after the timed replays (which collection, serialising the
  // dispatches it measures, would slow), one replay per pass.
  JoinedCounters joined;
  if (counting) {
    uint32_t passes = 0;
    std::string passProfile = temp.path + "/profile-pass0.gtap";
    std::string passResult = temp.path + "/timings-pass0.txt";
    if (int st = runWorker(o, library.string(), passProfile, passResult, 0); st != 0) {
      if (st > 0) std::cerr << "gtap bench: the replay of counter pass 1 failed (worker exit status " << st << ")\n";
      return kExitError;
    }
    BenchTimings passTimings;
    if (!readBenchTimings(passResult, passTimings, error) ||
        !joinCounterPass(passProfile, passTimings, 0, joined, passes, error)) {
      std::cerr << "gtap bench --counters: " << error << "\n";
      return kExitError;
    }
    if (passes == 0) {
      std::cerr << "gtap bench --counters: the replay's devices offer none of '" << o.counters << "'";
      for (const auto& n : joined.notes) std::cerr << "; " << n;
      std::cerr << " (gtap counters --list" << (o.source.sim ? " --sim" : "") << ")\n";
      return kExitError;
    }
    for (uint32_t pass = 1; pass < passes; ++pass) {
      std::string passProfile = temp.path + "/profile-pass" + std::to_string(pass) + ".gtap";
      std::string passResult = temp.path + "/timings-pass" + std::to_string(pass) + ".txt";
      if (int st = runWorker(o, library.string(), passProfile, passResult, static_cast<int>(pass)); st != 0) {
        if (st > 0) std::cerr << "gtap bench: the replay of counter pass " << pass + 1 << " failed (worker exit status " << st << ")\n";
        return kExitError;
      }
      BenchTimings passTimings;
      uint32_t again = 0;
      if (!readBenchTimings(passResult, passTimings, error) ||
          !joinCounterPass(passProfile, passTimings, pass, joined, again, error)) {
        std::cerr << "gtap bench --counters: " << error << "\n";
        return kExitError;
      }
    }
  }
  if (kept) {
    try {
      copyInto(profile, *kept);
      kept->commit();
      sayWritten("bench", kept->target());
    } catch (const std::exception& e) {
      std::cerr << "gtap bench: --profile: " << e.what() << "\n";
      return kExitError;
    }
  }
  if (o.format == "json") {
    printJson(o, timings, kernels, o.profile, counting ? countersJson(joined) : std::string());
  } else {
    printText(o, timings, kernels, o.profile);
    if (counting) printCountersText(joined);
  }
  return kExitSuccess;
}

}  // namespace

Action addBenchCommand(CLI::App& app) {
  auto o = std::make_shared<BenchOptions>();
  auto* cmd = app.add_subcommand("bench", "Time full replays of a capture (or one scope) and each kernel's device time");
  o->source.add(cmd);
  cmd->add_option("--iterations", o->iterations, "Replays to time (default 10)")->check(CLI::Range(1, 1000000));
  cmd->add_option("--scope", o->scope, "Time only this scope's begin..end windows (work outside still replays)");
  cmd->add_option("--profile", o->profile, "Keep the replay's kernel profile in this new file (an existing one is never replaced)");
  cmd->add_option("--format", o->format, "text or json");
  cmd->add_option("--counters", o->counters,
                  "Hardware counters to collect while replaying (names or groups, comma-separated, as gtap counters "
                  "--list shows them); a list that needs several passes is replayed once per pass and joined per "
                  "dispatch; the timed replays run without them");
  // Set when bench runs itself as the worker.
  cmd->add_option("--worker-result", o->workerResult)->group("");
  cmd->footer(
      "With --sim, device code is host code: the replays run the machine code the capture holds, like running a "
      "program, so never bench a capture you do not trust with --sim.\n"
      "Exit status: 0 done, 1 a replay failed or the capture cannot be read, 2 usage (an unknown option, a "
      "malformed --remap or --substitute, a --profile file that exists or is not a new regular file).");
  return [o] { return bench(*o); };
}

}  // namespace gtap::cli
