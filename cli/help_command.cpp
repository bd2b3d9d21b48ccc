// gtap help [TOPIC] and gtap --agents_md (help_topics.h).
#include <algorithm>
#include <iostream>
#include <sstream>
#include <string_view>

#include "commands.h"
#include "exit_status.h"
#include "help_topics.h"

extern "C" const char gtap_readme_start[];
extern "C" const char gtap_readme_end[];

namespace gtap::cli {

namespace {

std::string_view readme() {
  return {gtap_readme_start, static_cast<size_t>(gtap_readme_end - gtap_readme_start)};
}

// One row type of the JSON Lines gtap writes: which verbs write it, its
// fields (`<name>` stands for fields named after what the capture holds,
// such as counter names) and what one row is.
struct RowType {
  const char* type;
  const char* verbs;
  const char* fields;
  const char* meaning;
};

constexpr RowType kRowTypes[] = {
    {"api_function", "api", "function api count total mean min max p50 p99 failed unfinished",
     "one API function over every call (times in ns)"},
    {"kernel", "kernels",
     "process kernel module queue range groups group_size grid level count total mean min max p50 p99 share untimed "
     "joined measured mean_<counter>",
     "one kernel (or module, queue, range or launch shape with --by) over its timed executions; `process` with "
     "--per-process, `level` when IREE HAL and device dispatches are both present, `mean_<counter>` with --counters"},
    {"kernel_instruction", "kernels --instructions",
     "kernel instruction offset offsets samples share time <reason> location",
     "one sampled kernel instruction (mode samples), its sample count per reason"},
    {"allocation", "memory", "section process kind allocations frees bytes peak largest live_at_end",
     "allocations of one memory kind"},
    {"memory_event", "memory --events", "process time event kind size address device thread function stack",
     "one allocation or free in order (time: ns into the run), with the call and the stack that made it"},
    {"live_allocation", "memory --at", "process time event kind size address device thread function stack",
     "an allocation live at --at: made at or before it and not freed"},
    {"queue_submission", "queue",
     "process queue submission submit_at thread what lists operations work waits signals start_at device_span gap",
     "one submission to a queue, in order (submit_at and start_at: ns into the run; gap: its device start minus "
     "the latest end before it)"},
    {"queue", "queue", "process queue kind name submissions operations busy span busy_share gaps",
     "one queue over its submissions"},
    {"command_list", "command", "process list kind name commands executions device_time",
     "a command list or command buffer"},
    {"command", "command --id",
     "process list command kind name groups group_size bytes execution submit_at start_at duration",
     "one command of the list on one execution, with its device times"},
    {"transfer", "memory, summary", "section process kind count bytes device_time bandwidth_bytes_per_s",
     "copies of one direction, or fills"},
    {"process_summary", "summary",
     "file process duration_ns api_calls api_ns threads allocations allocated_bytes mode device_filter closed_cleanly "
     "events_dropped hal_dispatches hal_submissions hal_waits hal_waits_unrecorded_in hal_executions hal_joined devices",
     "one process: how long it ran, API time, and per device its busy time and operations"},
    {"top_kernel", "summary", "kernel level count total mean share hottest_line", "the kernels with most device time"},
    {"capture", "info",
     "file format producer pid ppid forked_from rank host executable command mode device_filter start closed_cleanly "
     "close_reason recovery file_bytes valid_bytes events events_dropped hal_waits_unrecorded_in threads "
     "ranges ranges_open_at_end unmatched_range_pops unrecorded_functions chunks compression_ratio",
     "one capture file: its process, settings, and what it holds"},
    {"explain_process", "explain",
     "process file executable duration_ns closed_cleanly recovery untimed_reasons no_device_work",
     "the process explained (first of its rows)"},
    {"explain_device", "explain",
     "process device busy_ns span_ns idle_ns busy_share_of_run busy_share_of_span", "how busy one device was"},
    {"explain_kernel", "explain", "process rank kernel share count total_ns p50_ns",
     "a kernel among those with most device time"},
    {"explain_gap", "explain", "process device start_offset_ns duration_ns before after host_calls",
     "a long idle stretch of a device and the API calls the host made meanwhile"},
    {"explain_launch", "explain",
     "process kernel duration_ns groups group_size submit_offset_ns stack hal_dispatch hal_command_buffer "
     "hal_dispatch_offset_ns hal_submission_offset_ns",
     "one of the slowest launches, with the CPU stack that made it"},
    {"explain_hal_join", "explain", "process executions joined device_kernels not_from_hal",
     "how IREE HAL dispatches met the device dispatches they became"},
    {"explain_note", "explain", "process note", "what could not be named (a stack's modules)"},
    {"executable_kernel", "executables",
     "process module format size target kernel from args hidden_args kernarg_bytes sgprs vgprs lds_bytes "
     "scratch_bytes wavefront required_group_size hash",
     "one kernel of a loaded executable"},
    {"kernel_counter", "counters", "process kernel counter units dispatches total mean min max",
     "one hardware counter of one kernel over its measured dispatches"},
    {"dispatch_counter", "counters --per-dispatch",
     "capture process kernel device queue dispatch device_time <counter> busy_share waves_per_work-group achieved_MHz",
     "one measured dispatch with a field per counter"},
    {"device_metric_summary", "counters --device-metrics",
     "process device source metric units samples min mean max rate", "one device metric over the run"},
    {"roofline", "counters --roofline",
     "process kernel device flop bytes time intensity flop_per_s bytes_per_s peak_flop_per_s peak_bytes_per_s "
     "attainable_flop_per_s of_attainable",
     "one kernel's place on the roofline"},
    {"offered_counter", "counters --list", "runtime device group sampling domain metric value_type units description",
     "a counter a device offers"},
    {"diff", "diff", "kind name count_before count_after total_before total_after change change_percent",
     "a kernel or API function whose count or time changed between two captures (`change_percent` null when new)"},
    {"record", "dump", "seq op thread <field>", "one replay record, with the fields of its operation"},
    {"summary", "dump",
     "records first_seq last_seq complete cut by_op objects operations executes inline_bytes blob_bytes file_bytes "
     "unsupported scopes hermetic external_files",
     "what a replay stream holds (last row)"},
    {"schema", "export", "version newest_capture_format types", "the first row: the row layout's version"},
    {"process", "export", "process pid rank host executable file mode", "a capture's process; its rows follow"},
    {"api", "export", "process pid thread function begin_ns end_ns result finished", "one API call"},
    {"device", "export",
     "process pid index kind name queue groups group_size bytes direction submit_ns start_ns end_ns untimed level "
     "operation thread call_index command_buffer buffers waits signals hal_dispatch hal_submission device_dispatches "
     "stack",
     "one device operation (kernel, copy, fill, barrier; IREE HAL operations add their command buffer fields)"},
    {"level", "export", "process pid level operations timed device_ns", "what one level's operations add up to"},
    {"copy_direction", "export", "process pid level direction copies bytes timed device_ns",
     "what one copy direction adds up to"},
    {"memory", "export", "process pid event kind device address size time_ns thread function call_index stack",
     "one allocation or free, with the call that made it"},
    {"range", "export", "process pid thread name begin_ns end_ns depth open_at_end",
     "a named range the program pushed and popped (gtap_range_push / gtap_range_pop)"},
    {"counter_set", "export", "process pid id device source group pass passes counters",
     "a set of hardware counters measured together"},
    {"counter_note", "export", "process pid counter device reason pass", "a counter asked for and not collected"},
    {"counters", "export", "process pid index set values", "the counter values of the operation `index`"},
    {"device_metric", "export",
     "process pid device source metric units cumulative time_ns value note", "one device metric sample"},
    {"stack", "export", "process pid id frames", "a CPU stack, root first"},
    {"instruction", "export",
     "process pid device kernel module address offset instruction file line counts samples",
     "one sampled kernel instruction"},
};

std::string fieldList(const char* fields) {
  std::istringstream in(fields);
  std::string out;
  for (std::string f; in >> f;) out += (out.empty() ? "`" : ", `") + f + "`";
  return out;
}

// An option's names and what it takes, as a user types it.
std::string optionSyntax(const CLI::Option* o) {
  if (o->get_positional()) return o->get_name(true, false);
  std::string names = o->get_name(false, true);
  // "INT:INT in [1 - 256]" says INT; "TEXT:{a,b}" says {a,b}; a flag nothing.
  std::string type = o->get_type_name();
  if (size_t set = type.find(":{"); set != std::string::npos) type = type.substr(set + 1);
  else type = type.substr(0, type.find(':'));
  if (!type.empty()) names += " " + type;
  return names;
}

void writeVerb(const CLI::App& sub, std::ostream& out) {
  out << "### `gtap " << sub.get_name() << "`\n\n" << sub.get_description() << "\n\n";
  std::vector<const CLI::Option*> options = sub.get_options([](const CLI::Option* o) {
    return !o->get_group().empty() && o->get_name(false, false) != "--help" && o->get_name(false, false) != "-h";
  });
  for (const CLI::Option* o : options) {
    out << "- `" << optionSyntax(o) << "`";
    if (!o->get_description().empty()) out << ": " << o->get_description();
    if (!o->get_default_str().empty()) out << " (default `" << o->get_default_str() << "`)";
    out << "\n";
  }
  out << "\n";
}

constexpr const char* kRecipes = R"md(## Recipes

Find the slowest kernel and the stack that launched it:

```sh
gtap run -m api,kernels,stacks -o run.gtap -- ./app
gtap kernels --format=jsonl run.gtap | head -1       # rows by total device time, largest first
gtap explain --format=jsonl run.gtap                 # explain_launch rows: the slowest launches and their stacks
```

Compare two runs (a regression check; exit status 3 when something grew past the threshold):

```sh
gtap diff --format=jsonl --fail-above 10 before.gtap after.gtap
```

Replay the device work and check it reads back what the program saw, then time it:

```sh
gtap run -m replay -o cap.gtap -- ./app
gtap replay --verify cap.gtap
gtap bench cap.gtap
```

Everything, for a script or a database:

```sh
gtap export --format=jsonl -o - run.gtap             # first row: type schema
gtap export --format=sqlite -o run.db run.gtap
```

Many ranks: give every file to one report (`gtap summary rank-*.gtap`); rows name their process.
)md";

}  // namespace

std::vector<std::pair<std::string, std::string>> helpTopics() {
  std::vector<std::pair<std::string, std::string>> topics;
  std::string_view text = readme();
  constexpr std::string_view open = "<!-- help: ", close = "<!-- /help -->";
  for (size_t at = text.find(open); at != std::string_view::npos; at = text.find(open, at + 1)) {
    size_t nameEnd = text.find(" -->\n", at);
    size_t end = text.find(close, at);
    if (nameEnd == std::string_view::npos || end == std::string_view::npos || nameEnd > end) break;
    std::string name(text.substr(at + open.size(), nameEnd - at - open.size()));
    topics.emplace_back(name, std::string(text.substr(nameEnd + 5, end - nameEnd - 5)));
  }
  return topics;
}

std::string agentsMarkdown(const CLI::App& app) {
  std::ostringstream out;
  out << "# gtap " GTAP_VERSION ": a playbook\n\n"
      << "gtap captures what a program asks of its GPU runtime (Level Zero, HSA, IREE HAL) without recompiling "
         "it: `gtap run -- ./app` writes one capture file per process; the other verbs report on captures, export "
         "them and replay their device work. This text is generated by `gtap --agents_md` from the binary "
         "itself.\n\n"
      << "## Verbs\n\n";
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) writeVerb(*sub, out);
  out << "Options of gtap itself, taken after any verb too:\n\n";
  for (const CLI::Option* o : app.get_options([](const CLI::Option* o) {
         return !o->get_group().empty() && o->get_name(false, false) != "--help";
       }))
    out << "- `" << optionSyntax(o) << "`: " << o->get_description() << "\n";
  out << "- `--agents_md`: this text\n\n";
  out << "## JSON Lines rows\n\n"
      << "Every row of `--format=jsonl` (reports) and `gtap export --format=jsonl` is one JSON object with "
         "`\"type\"` first. Times are nanoseconds; `*_offset_ns` are from the start of the process's run. Keys "
         "use `_` for spaces. Rows by type (the verbs that write them): fields.\n\n";
  for (const RowType& r : kRowTypes)
    out << "- `" << r.type << "` (" << r.verbs << "): " << fieldList(r.fields) << ". " << r.meaning << ".\n";
  out << "\n" << kRecipes << "\n";
  for (const auto& [name, text] : helpTopics()) out << "## " << name << " (`gtap help " << name << "`)\n\n" << text << "\n";
  return out.str();
}

Action addHelpCommand(CLI::App& app) {
  auto topic = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("help", "The tables of modes, environment variables, output patterns, run options "
                                         "and exit status (gtap help TOPIC), or a verb's options (gtap help VERB)");
  cmd->add_option("topic", *topic, "A topic, or a verb");
  return [&app, topic] {
    auto topics = helpTopics();
    if (topic->empty()) {
      std::cout << "gtap help TOPIC, one of:";
      for (const auto& [name, text] : topics) std::cout << " " << name;
      std::cout << "\ngtap help VERB for a verb's options; gtap --agents_md for all of it as Markdown\n";
      return kExitSuccess;
    }
    std::string wanted = *topic == "env" ? "environment" : *topic == "run" ? "run-options" : *topic;
    for (const auto& [name, text] : topics)
      if (name == wanted) {
        std::cout << text;
        return kExitSuccess;
      }
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
      if (sub->get_name() == *topic) {
        std::cout << sub->help();
        return kExitSuccess;
      }
    std::cerr << "gtap help: no topic or verb '" << *topic << "'; topics:";
    for (const auto& [name, text] : topics) std::cerr << " " << name;
    std::cerr << "\n";
    return kExitUsage;
  };
}

}  // namespace gtap::cli
