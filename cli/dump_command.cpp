// gtap dump: every record of a capture's replay stream, with its fields named
// per op, then what the stream needs to be replayed (a summary).
#include <cstdio>
#include <iostream>

#include "commands.h"
#include "gtap/readers/replay_dump.h"
#include "gtap/readers/replay_fields.h"
#include "open_captures.h"

namespace gtap::cli {

namespace {

struct DumpOptions {
  std::string file;
  std::string format = "text";
  bool ops = false;
};

int dump(const DumpOptions& o) {
  if (o.ops) {
    if (!o.file.empty()) {
      std::cerr << "gtap dump: --ops takes no capture file\n";
      return 2;
    }
    readers::writeReplayOpsMarkdown(std::cout);
    std::cout.flush();
    return std::cout ? 0 : 1;
  }
  if (o.file.empty()) {
    std::cerr << "gtap dump: a capture file is required (or --ops)\nRun with --help for more information.\n";
    return 2;
  }
  if (o.format != "text" && o.format != "jsonl") {
    std::cerr << "gtap dump: --format must be text or jsonl\n";
    return 2;
  }
  auto opened = openCaptures({o.file}, "dump");
  if (opened.captures.empty()) return 1;
  const readers::Capture& c = *opened.captures.front();
  readers::ReplayStream stream;
  try {
    stream = readers::loadReplayStream(c);
  } catch (const std::exception& e) {
    std::cerr << "gtap dump: " << e.what() << "\n";
    return 1;
  }
  for (const auto& n : stream.notes) std::cerr << "gtap dump: " << n << "\n";
  if (!stream.complete)
    std::cerr << "gtap dump: " << c.path() << ": the replay stream is cut short: " << stream.cutDescription << "\n";
  if (o.format == "jsonl") readers::writeReplayDumpJsonLines(std::cout, c, stream);
  else readers::writeReplayDumpText(std::cout, c, stream);
  std::cout.flush();
  return std::cout ? 0 : 1;
}

}  // namespace

Action addDumpCommand(CLI::App& app) {
  auto o = std::make_shared<DumpOptions>();
  auto* cmd = app.add_subcommand("dump", "Every record of a capture's replay stream (--mode=replay), then a summary");
  cmd->add_option("file", o->file, "Capture file");
  cmd->add_option("--format", o->format, "text or jsonl");
  cmd->add_flag("--ops", o->ops,
                "Print every replay operation this gtap knows, with its fields, as a Markdown table (no file)");
  return [o] { return dump(*o); };
}

}  // namespace gtap::cli
