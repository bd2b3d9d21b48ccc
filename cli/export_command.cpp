// gtap export: a timeline as Chrome Trace Event JSON, a Perfetto trace, or
// JSON Lines of every API call and device operation.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "commands.h"
#include "gtap/readers/table.h"
#include "gtap/readers/timeline_builder.h"
#include "open_captures.h"

namespace gtap::cli {

namespace {

struct ExportOptions {
  std::vector<std::string> files;
  std::string format;
  std::string output;
  bool force = false;
};

void writeJsonLines(const std::vector<readers::LoadedCapture>& loaded, std::ostream& out) {
  for (const auto& lc : loaded) {
    const auto& c = *lc.capture;
    std::string process = readers::jsonEscape(c.label());
    c.forEachCall([&](const readers::ApiCall& call) {
      out << "{\"type\":\"api\",\"process\":\"" << process << "\",\"pid\":" << c.process().pid
          << ",\"thread\":" << call.thread << ",\"function\":\"" << readers::jsonEscape(c.functionName(call.function))
          << "\",\"begin_ns\":" << call.beginNs;
      if (call.finished) out << ",\"end_ns\":" << call.endNs << ",\"result\":" << call.result;
      else out << ",\"finished\":false";
      out << "}\n";
    });
    for (const auto& op : lc.work.ops) {
      out << "{\"type\":\"device\",\"process\":\"" << process << "\",\"pid\":" << c.process().pid
          << ",\"kind\":\"" << readers::opKindName(op.kind) << "\",\"name\":\"" << readers::jsonEscape(op.name)
          << "\",\"queue\":\"" << readers::jsonEscape(lc.work.queueName(op.queue)) << "\",\"groups\":["
          << op.groupCount[0] << "," << op.groupCount[1] << "," << op.groupCount[2] << "],\"group_size\":["
          << op.groupSize[0] << "," << op.groupSize[1] << "," << op.groupSize[2] << "],\"bytes\":" << op.bytes
          << ",\"submit_ns\":" << op.submitNs;
      if (op.timed) out << ",\"start_ns\":" << op.startNs << ",\"end_ns\":" << op.endNs;
      else out << ",\"untimed\":\"" << readers::jsonEscape(op.note) << "\"";
      out << "}\n";
    }
  }
}

int exportTimeline(const ExportOptions& o) {
  if (o.format != "chrome" && o.format != "perfetto" && o.format != "jsonl") {
    std::cerr << "gtap export: --format must be chrome, perfetto or jsonl\n";
    return 2;
  }
  if (std::filesystem::exists(o.output) && !o.force) {
    std::cerr << "gtap export: " << o.output << " exists; give --force to replace it\n";
    return 2;
  }
  auto opened = openCaptures(o.files, "export");
  if (opened.captures.empty()) return 1;
  reportNotes(opened, "export");
  auto loaded = loadDeviceWork(opened, "export");
  // Written beside the destination and renamed into place, so a failed export
  // leaves whatever was there before.
  std::string temp = o.output + ".partial-" + std::to_string(getpid());
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) {
      std::cerr << "gtap export: cannot write " << temp << "\n";
      return 1;
    }
    try {
      if (o.format == "jsonl") {
        writeJsonLines(loaded, out);
      } else {
        auto timeline = readers::buildTimeline(loaded);
        if (o.format == "chrome") readers::writeChromeTrace(timeline, out);
        else readers::writePerfettoTrace(timeline, out);
      }
    } catch (const std::exception& e) {
      std::cerr << "gtap export: " << e.what() << "\n";
      out.close();
      std::remove(temp.c_str());
      return 1;
    }
    out.flush();
    if (!out) {
      std::cerr << "gtap export: writing " << temp << " failed\n";
      std::remove(temp.c_str());
      return 1;
    }
  }
  std::error_code ec;
  std::filesystem::rename(temp, o.output, ec);
  if (ec) {
    std::cerr << "gtap export: cannot move " << temp << " to " << o.output << ": " << ec.message() << "\n";
    return 1;
  }
  return opened.failures ? 1 : 0;
}

}  // namespace

Action addExportCommand(CLI::App& app) {
  auto o = std::make_shared<ExportOptions>();
  auto* cmd = app.add_subcommand("export", "Write a timeline: Chrome JSON (Perfetto UI, speedscope), Perfetto protobuf, or JSON Lines");
  cmd->add_option("files", o->files, "Capture files (several merge)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--format", o->format, "chrome, perfetto or jsonl")->required();
  cmd->add_option("-o,--output", o->output, "Output file")->required();
  cmd->add_flag("--force", o->force, "Replace an existing output file");
  return [o] { return exportTimeline(*o); };
}

}  // namespace gtap::cli
