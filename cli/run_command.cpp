// gtap run: sets the GTAP_* variables, LD_PRELOAD and (with --sim) the
// simulated runtimes' variables, then execs the program. The program keeps gtap's
// pid, so its exit status is the program's own.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "commands.h"
#include "exit_status.h"
#include "gtap/format/device_filter.h"
#include "gtap/format/modes.h"
#include "gtap/format/scope_signal.h"
#include "install_paths.h"
#include "offered_counters.h"
#include "preload_check.h"

namespace gtap::cli {

namespace {

// The arguments from the first "--" on (see splitRunArguments).
std::vector<std::string> g_afterSeparator;

// The program and its arguments: what CLI11 left after gtap's options (the
// program's name stops option parsing: prefix_command), then what followed
// "--". False after a usage error, said on stderr.
bool programArguments(const CLI::App& cmd, std::vector<std::string>& program) {
  program = cmd.remaining();
  if (program.empty()) {
    if (!g_afterSeparator.empty()) program.assign(g_afterSeparator.begin() + 1, g_afterSeparator.end());
  } else {
    // An option gtap does not know ends up here too, not only a program.
    if (program[0].size() > 1 && program[0][0] == '-') {
      std::cerr << "gtap run: unknown option " << program[0]
                << " (a program whose name starts with '-' goes after --)\n";
      return false;
    }
    program.insert(program.end(), g_afterSeparator.begin(), g_afterSeparator.end());
  }
  return true;
}

struct RunOptions {
  std::string output;
  std::string mode;
  int flushMs = 0;
  int bufferMb = 0;
  bool sim = false;
  bool quiet = false;
  std::string kernelFilter;
  std::string dispatchRange;
  int stackDepth = 0;
  int samplePeriodUs = 0;
  std::string filePolicy;
  std::string fileValidation;
  std::vector<std::string> scopes;
  std::string scopeSignal;
  bool startPaused = false;
  bool summary = false;
  std::string toggleSignal;
  std::string counters;
  bool countersOptional = false;
  int counterPass = -1;
  std::vector<uint32_t> deviceFilter, queueFilter;
  int metricsIntervalMs = 0;
  std::vector<std::string> command;
};

std::string joinNumbers(const std::vector<uint32_t>& v) {
  std::string out;
  for (uint32_t n : v) out += (out.empty() ? "" : ",") + std::to_string(n);
  return out;
}

// --counters: each name must be offered by some device the filters keep,
// unless --counters-optional; what needs more passes than one run collects
// is said before the program starts. False after an error said on stderr.
bool checkCounters(const RunOptions& o) {
  std::string zeNote, hsaNote;
  std::vector<OfferedDevice> devices = offeredLevelZeroCounters(zeNote);
  for (auto& d : offeredHsaCounters(hsaNote)) devices.push_back(std::move(d));
  std::vector<std::string> requested = format::splitCounterList(o.counters);
  if (requested.empty()) {
    std::cerr << "gtap run: --counters: no counter named\n";
    return false;
  }
  std::vector<std::string> offeredSomewhere;
  bool anyDevice = false;
  for (const auto& d : devices) {
    if (!o.deviceFilter.empty() &&
        std::find(o.deviceFilter.begin(), o.deviceFilter.end(), d.index) == o.deviceFilter.end())
      continue;
    anyDevice = true;
    format::CounterPlan plan = format::planCounters(o.counters, d.offers());
    for (const auto& name : requested)
      if (std::find(plan.unknown.begin(), plan.unknown.end(), name) == plan.unknown.end())
        offeredSomewhere.push_back(name);
    if (plan.passes.size() > 1) {
      uint32_t pass = o.counterPass < 0 ? 0 : static_cast<uint32_t>(o.counterPass);
      std::cerr << "gtap run: --counters needs " << plan.passes.size() << " passes on " << d.runtime << " device "
                << d.index << " (" << d.label << "); this run collects pass " << pass + 1;
      if (pass < plan.passes.size()) {
        std::cerr << ":";
        for (const auto& c : plan.passes[pass]) std::cerr << " " << c.name;
      }
      std::cerr << "; the others need runs with --counter-pass N, or gtap bench --counters on a replay "
                   "capture (one replay per pass)\n";
    }
  }
  std::vector<std::string> missing;
  for (const auto& name : requested)
    if (std::find(offeredSomewhere.begin(), offeredSomewhere.end(), name) == offeredSomewhere.end())
      missing.push_back(name);
  if (missing.empty()) return true;
  std::string list;
  for (const auto& m : missing) list += (list.empty() ? "'" : ", '") + m + "'";
  std::string where = anyDevice ? "by any device" : "(no device: " + zeNote + "; " + hsaNote + ")";
  if (o.countersOptional) {
    std::cerr << "gtap run: --counters: " << list << " not offered " << where
              << "; the program runs without " << (missing.size() == requested.size() ? "counters" : "them")
              << " (--counters-optional)\n";
    return true;
  }
  std::cerr << "gtap run: --counters: " << list << " not offered " << where
            << " (gtap counters --list" << (o.sim ? " --sim" : "")
            << " shows what is; --counters-optional runs the program without what is missing)\n";
  return false;
}

void appendPathList(const char* variable, const std::string& value, char separator) {
  const char* old = std::getenv(variable);
  std::string v = old && *old ? std::string(old) + separator + value : value;
  setenv(variable, v.c_str(), 1);
}

int run(const RunOptions& o) {
#if defined(GTAP_READERS_ONLY)
  std::cerr << "gtap run: this gtap was built without libgtap.so (GTAP_READERS_ONLY: the interposer is x86-64 "
               "only); it reads captures but cannot record them\n";
  return kExitError;
#endif
  if (o.command.empty()) {
    std::cerr << "gtap run: no program given (usage: gtap run [options] -- PROGRAM ARGS...)\n";
    return kExitUsage;
  }
  auto libdir = gtapLibraryDirectory();
  auto library = libdir / "libgtap.so";
  if (!std::filesystem::exists(library)) {
    std::cerr << "gtap run: " << library.string() << " not found (is gtap installed whole?)\n";
    return kExitError;
  }
  if (library.string().find_first_of(" :") != std::string::npos) {
    std::cerr << "gtap run: the path " << library.string()
              << " holds a space or colon, which LD_PRELOAD cannot carry\n";
    return kExitError;
  }
  if (!o.mode.empty()) {
    uint32_t bits = 0;
    std::string error;
    if (!format::parseModeList(o.mode, bits, error)) {
      std::cerr << "gtap run: --mode: " << error << "\n";
      return kExitUsage;
    }
    setenv("GTAP_MODE", o.mode.c_str(), 1);
  }
  if (!o.scopeSignal.empty()) {
    std::string error;
    if (!format::parseScopeSignal(o.scopeSignal, error)) {
      std::cerr << "gtap run: --scope-signal: " << error << "\n";
      return 2;
    }
  }
  if (!o.toggleSignal.empty()) {
    std::string error;
    int sig = format::parseScopeSignal(o.toggleSignal, error);
    if (!sig) {
      std::cerr << "gtap run: --toggle-signal: " << error << "\n";
      return kExitUsage;
    }
    std::string other;
    if (!o.scopeSignal.empty() && format::parseScopeSignal(o.scopeSignal, other) == sig) {
      std::cerr << "gtap run: --toggle-signal and --scope-signal name the same signal\n";
      return kExitUsage;
    }
    setenv("GTAP_TOGGLE_SIGNAL", o.toggleSignal.c_str(), 1);
  }
  if (o.startPaused) setenv("GTAP_START_PAUSED", "1", 1);
  if (o.summary) setenv("GTAP_SUMMARY", "1", 1);
  bool replayOptions = !o.filePolicy.empty() || !o.fileValidation.empty() || !o.scopes.empty() ||
                       !o.scopeSignal.empty();
  if (replayOptions) {
    uint32_t bits = 0;
    std::string error;
    const char* mode = !o.mode.empty() ? o.mode.c_str() : std::getenv("GTAP_MODE");
    if (!mode || !format::parseModeList(mode, bits, error) || !(bits & format::kModeReplay)) {
      std::cerr << "gtap run: --file-policy, --file-validation, --scope and --scope-signal apply to replay "
                   "streams: add replay to --mode\n";
      return kExitUsage;
    }
  }
  if (!o.filePolicy.empty()) setenv("GTAP_FILE_POLICY", o.filePolicy.c_str(), 1);
  if (!o.fileValidation.empty()) setenv("GTAP_FILE_VALIDATION", o.fileValidation.c_str(), 1);
  if (!o.scopes.empty()) {
    std::string joined;
    for (const auto& s : o.scopes) joined += (joined.empty() ? "" : ",") + s;
    setenv("GTAP_SCOPES", joined.c_str(), 1);
  }
  if (!o.scopeSignal.empty()) setenv("GTAP_SCOPE_SIGNAL", o.scopeSignal.c_str(), 1);
  if (!o.output.empty()) setenv("GTAP_OUTPUT", o.output.c_str(), 1);
  if (o.flushMs) setenv("GTAP_FLUSH_MS", std::to_string(o.flushMs).c_str(), 1);
  if (o.bufferMb) setenv("GTAP_BUFFER_MB", std::to_string(o.bufferMb).c_str(), 1);
  if (o.quiet) setenv("GTAP_QUIET", "1", 1);
  if (!o.kernelFilter.empty()) setenv("GTAP_KERNEL_FILTER", o.kernelFilter.c_str(), 1);
  if (!o.dispatchRange.empty()) setenv("GTAP_DISPATCH_RANGE", o.dispatchRange.c_str(), 1);
  if (o.stackDepth) setenv("GTAP_STACK_DEPTH", std::to_string(o.stackDepth).c_str(), 1);
  if (o.samplePeriodUs) setenv("GTAP_SAMPLE_PERIOD_US", std::to_string(o.samplePeriodUs).c_str(), 1);
  if (o.sim) {
    std::string error;
    if (!useSimulatedZeDriver(error) || !useSimulatedHsaRuntime(error)) {
      std::cerr << "gtap run --sim: " << error << "\n";
      return kExitError;
    }
  }
  if (!o.counters.empty()) {
    if (!checkCounters(o)) return kExitUsage;
    setenv("GTAP_COUNTERS", o.counters.c_str(), 1);
  }
  if (o.countersOptional) setenv("GTAP_COUNTERS_OPTIONAL", "1", 1);
  if (o.counterPass >= 0) setenv("GTAP_COUNTER_PASS", std::to_string(o.counterPass).c_str(), 1);
  if (!o.deviceFilter.empty()) setenv("GTAP_DEVICE_FILTER", joinNumbers(o.deviceFilter).c_str(), 1);
  if (!o.queueFilter.empty()) setenv("GTAP_QUEUE_FILTER", joinNumbers(o.queueFilter).c_str(), 1);
  if (o.metricsIntervalMs) setenv("GTAP_METRICS_INTERVAL_MS", std::to_string(o.metricsIntervalMs).c_str(), 1);
  // Libraries of the program's older than libgtap.so (or a bundle's) needs
  // would make the loader stop the program before it starts: it runs as
  // without gtap, and gtap says why nothing is captured.
  if (std::string problem = preloadProblem(library, o.command); !problem.empty()) {
    std::cerr << "gtap run: " << problem << "; it runs without gtap, and nothing is captured\n";
  } else {
    appendPathList("LD_PRELOAD", library.string(), ':');
    // HSA: the runtime loads the libraries named in HSA_TOOLS_LIB (space
    // separated) as tools; ROCr 6.1 and later only with the v1 switch. ROCr 5.3
    // and later also find libgtap.so by its HSA_AMD_TOOL_PRIORITY symbol, which
    // is what a path with a space in it relies on.
    if (library.string().find(' ') == std::string::npos) {
      const char* tools = std::getenv("HSA_TOOLS_LIB");
      if (!tools || std::string(" ").append(tools).append(" ").find(" " + library.string() + " ") == std::string::npos)
        appendPathList("HSA_TOOLS_LIB", library.string(), ' ');
    }
    setenv("HSA_TOOLS_ROCPROFILER_V1_TOOLS", "1", 0);
  }

  std::vector<char*> argv;
  for (const auto& a : o.command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  execvp(argv[0], argv.data());
  int err = errno;
  std::cerr << "gtap run: cannot execute '" << o.command[0] << "': " << std::strerror(err) << "\n";
  return err == ENOENT ? 127 : 126;
}

}  // namespace

int splitRunArguments(int argc, char** argv) {
  // Everything from the first "--" on is kept apart: CLI11 (as Debian 12 has
  // it) refuses a "--" before the program name under prefix_command. Whether
  // that "--" is gtap's or the program's is known only after parsing: the
  // program's when the program's name came before it.
  for (int i = 2; i < argc; ++i)
    if (std::strcmp(argv[i], "--") == 0) {
      g_afterSeparator.assign(argv + i, argv + argc);
      return i;
    }
  return argc;
}

Action addRunCommand(CLI::App& app) {
  auto o = std::make_shared<RunOptions>();
  auto* cmd = app.add_subcommand("run", "Run a program with gtap preloaded: gtap run [options] -- PROGRAM ARGS...");
  // The first argument that is not one of gtap's options is the program's
  // name; it and everything after it are the program's.
  cmd->prefix_command();
  cmd->add_option("-o,--output", o->output,
                  "Capture file pattern (GTAP_OUTPUT): %p pid, %h host, %r MPI rank, %t start time, "
                  "%e{NAME} environment variable, %% percent");
  std::string modes;
  for (const auto& m : format::kModeWords) modes += (modes.empty() ? "" : ", ") + std::string(m.word);
  cmd->add_option("-m,--mode", o->mode, "What to record (GTAP_MODE), comma-separated: " + modes);
  cmd->add_option("--kernel-filter", o->kernelFilter,
                  "Record kernel dispatches only for kernels whose name matches this glob (GTAP_KERNEL_FILTER)");
  cmd->add_option("--dispatch-range", o->dispatchRange,
                  "Record only the kernel dispatches numbered START to END, START:END (numbers as in replay "
                  "scopes: from 0, both included; GTAP_DISPATCH_RANGE)")
      ->check([](const std::string& v) -> std::string {
        uint64_t first = 0, last = 0;
        std::string error;
        return format::parseDispatchRange(v, first, last, error) ? std::string() : error;
      });
  cmd->add_option("--device-filter", o->deviceFilter,
                  "Record and measure device work only on these devices: indices in the runtime's order, as "
                  "gtap counters --list shows them, comma-separated (GTAP_DEVICE_FILTER)")
      ->delimiter(',');
  cmd->add_option("--queue-filter", o->queueFilter,
                  "Record and measure device work only on these queues: the program's queues numbered from 0 in "
                  "the order it created them, comma-separated (GTAP_QUEUE_FILTER)")
      ->delimiter(',');
  cmd->add_option("--counters", o->counters,
                  "Hardware counters to read around each recorded dispatch: names as the runtime spells them, or "
                  "metric groups, comma-separated (GTAP_COUNTERS; implies kernels; gtap counters --list)");
  cmd->add_flag("--counters-optional", o->countersOptional,
                "Run the program even when a counter is not offered, without it (GTAP_COUNTERS_OPTIONAL)");
  cmd->add_option("--counter-pass", o->counterPass,
                  "Which pass of a --counters list that needs several to collect, from 0 (GTAP_COUNTER_PASS)")
      ->check(CLI::Range(0, 1000));
  cmd->add_option("--metrics-interval", o->metricsIntervalMs,
                  "Sample device metrics (frequency, power, temperature, memory, engine activity) every MS "
                  "milliseconds while the program runs (GTAP_METRICS_INTERVAL_MS)")
      ->check(CLI::Range(1, 600000));
  cmd->add_option("--stack-depth", o->stackDepth, "CPU stack frames kept with mode stacks (GTAP_STACK_DEPTH)")
      ->check(CLI::Range(1, 256));
  cmd->add_option("--sample-period-us", o->samplePeriodUs,
                  "Instruction sampling period with mode samples, in microseconds (GTAP_SAMPLE_PERIOD_US)")
      ->check(CLI::Range(1, 1000000));
  cmd->add_option("--flush-ms", o->flushMs, "Longest time data waits in memory (GTAP_FLUSH_MS)")
      ->check(CLI::Range(1, 60000));
  cmd->add_option("--buffer-mb", o->bufferMb, "Memory for record buffers (GTAP_BUFFER_MB)")
      ->check(CLI::Range(1, 65536));
  cmd->add_option("--file-policy", o->filePolicy,
                  "Replay: bytes read from file mappings are kept as a reference to the file, as the ranges "
                  "read, as the whole file, or refused (GTAP_FILE_POLICY; default reference)")
      ->check(CLI::IsMember({"reference", "capture-ranges", "capture-all", "fail"}));
  cmd->add_option("--file-validation", o->fileValidation,
                  "Replay: file references carry the file's identity, or also a digest of its contents "
                  "(GTAP_FILE_VALIDATION; default identity)")
      ->check(CLI::IsMember({"identity", "digest"}));
  cmd->add_option("--scope", o->scopes,
                  "Replay: a scope NAME around kernel launches START to END (dispatch numbers from 0, both "
                  "included), NAME=START:END; repeatable (GTAP_SCOPES)")
      ->check([](const std::string& v) -> std::string {
        size_t eq = v.rfind('='), colon = v.rfind(':');
        if (eq == std::string::npos || eq == 0 || colon == std::string::npos || colon < eq)
          return "expected NAME=START:END, got '" + v + "'";
        try {
          size_t used = 0;
          unsigned long long first = std::stoull(v.substr(eq + 1, colon - eq - 1), &used);
          if (used != colon - eq - 1) throw std::invalid_argument("start");
          unsigned long long last = std::stoull(v.substr(colon + 1), &used);
          if (used != v.size() - colon - 1) throw std::invalid_argument("end");
          if (last < first) return "END comes before START in '" + v + "'";
        } catch (const std::exception&) {
          return "START and END must be numbers in '" + v + "'";
        }
        return {};
      });
  cmd->add_option("--scope-signal", o->scopeSignal,
                  "Replay: each delivery of this signal (e.g. SIGUSR2) opens or closes a scope named signal "
                  "(GTAP_SCOPE_SIGNAL)");
  cmd->add_flag("--start-paused", o->startPaused,
                "Record no API calls, device work or allocations until the program calls gtap_start() or the "
                "toggle signal comes (GTAP_START_PAUSED)");
  cmd->add_option("--toggle-signal", o->toggleSignal,
                  "Each delivery of this signal (e.g. SIGUSR2) pauses or resumes recording (GTAP_TOGGLE_SIGNAL)");
  cmd->add_flag("--sim", o->sim,
                "Use gtap's simulated devices (a Level Zero driver and an HSA runtime) instead of real ones");
  cmd->add_flag("-q,--quiet", o->quiet, "No closing line on stderr (GTAP_QUIET)");
  cmd->add_flag("--summary", o->summary,
                "When each capture file is complete, its process prints a short summary on stderr: top kernels, "
                "transfers and API time (GTAP_SUMMARY)");
  cmd->footer(
      "Example: gtap run --sim -o run-%p.gtap -- ./app --size 1024\n"
      "Exit status: the program's own (gtap becomes the program; one killed by a signal dies of the same signal, "
      "which a shell shows as 128+N). Before the program starts: 2 usage, 1 gtap installed incompletely, 126 the "
      "program cannot be executed, 127 it is not found.");
  return [o, cmd] {
    if (!programArguments(*cmd, o->command)) return kExitUsage;
    return run(*o);
  };
}

}  // namespace gtap::cli
