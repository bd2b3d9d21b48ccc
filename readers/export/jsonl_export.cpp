// JSON Lines: one object a line for every API call and device operation
// (docs/export.md).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <span>
#include <string_view>
#include <type_traits>
#include <iterator>
#include <map>
#include <unordered_map>

#include "gtap/format/container.h"
#include "gtap/readers/counters.h"
#include "gtap/readers/json.h"
#include "gtap/readers/memory_events.h"
#include "gtap/readers/parallel.h"
#include "gtap/readers/ranges.h"
#include "gtap/readers/report_filter.h"
#include "gtap/readers/record_export.h"

namespace gtap::readers {

const char* operationLevel(const DeviceOp& op) {
  if (op.recordedBy != schema::Api::IREE_HAL) return "device";
  return op.operation == "host_execution" ? "host" : "hal";
}

namespace {

// Lines built in a block and handed to the stream a block at a time.
class Lines {
 public:
  explicit Lines(std::ostream& out) : out_(out) { text_.reserve(kBlock + 4096); }
  ~Lines() { flush(); }
  Lines& operator<<(std::string_view s) {
    text_.append(s);
    return *this;
  }
  Lines& operator<<(char c) {
    text_ += c;
    return *this;
  }
  template <class T>
    requires std::is_integral_v<T>
  Lines& operator<<(T v) {
    char buf[24];
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    text_.append(buf, r.ptr);
    return *this;
  }
  Lines& json(std::string_view s) {
    // Escaped without its quotes, as the fields are written.
    size_t at = text_.size();
    appendJsonString(text_, s);
    text_.erase(at, 1);
    text_.pop_back();
    return *this;
  }
  // A number as JSON has it: whole numbers exactly, others to 17 digits;
  // null when not finite.
  Lines& number(double v) {
    char buf[40];
    if (!std::isfinite(v)) return *this << std::string_view("null");
    if (v == std::floor(v) && std::fabs(v) < 9.0e15) std::snprintf(buf, sizeof buf, "%.0f", v);
    else std::snprintf(buf, sizeof buf, "%.17g", v);
    text_.append(buf);
    return *this;
  }
  void endLine() {
    text_ += '\n';
    if (text_.size() >= kBlock) flush();
  }
  void flush() {
    if (!text_.empty()) out_.write(text_.data(), static_cast<std::streamsize>(text_.size()));
    text_.clear();
  }

 private:
  static constexpr size_t kBlock = 1 << 16;
  std::ostream& out_;
  std::string text_;
};

// A HAL-level record's method, thread and call (the API call that issued it:
// the thread's event index of its begin), command buffer, the buffers it
// binds or touches, and the semaphore values it waits for and signals.
void writeHalOperation(const DeviceOp& op, Lines& out) {
  out << ",\"operation\":\"";
  out.json(op.operation) << "\",\"thread\":" << op.thread << ",\"call_index\":" << op.appendIndex
                         << ",\"command_buffer\":" << op.list << ",\"buffers\":[";
  auto bindings = op.bindings();
  for (size_t i = 0; i < bindings.size(); ++i)
    out << (i ? "," : "") << "[" << bindings[i].buffer << "," << bindings[i].offset << ","
        << bindings[i].length << "]";
  auto semaphores = [&](const char* key, std::span<const DeviceOp::SemaphoreValue> values) {
    out << "],\"" << key << "\":[";
    for (size_t i = 0; i < values.size(); ++i)
      out << (i ? "," : "") << "[" << values[i].semaphore << "," << values[i].value << "]";
  };
  semaphores("waits", op.waits());
  semaphores("signals", op.signals());
  out << "]";
}

// A capture's counter sets (`"type":"counter_set"`) and the counters asked
// for and not collected (`"type":"counter_note"`).
void writeCounterSets(const CapturedCounters& counters, const std::string& process, const std::string& pid,
                      Lines& out) {
  for (const auto& [id, set] : counters.sets) {
    out << "{\"type\":\"counter_set\",\"process\":\"" << process << "\",\"pid\":" << pid << ",\"id\":" << id
        << ",\"device\":" << set.device << ",\"source\":\"";
    out.json(set.source) << "\",\"group\":\"";
    out.json(set.group) << "\",\"pass\":" << set.pass << ",\"passes\":" << set.passes << ",\"counters\":[";
    for (size_t i = 0; i < set.counters.size(); ++i) {
      const CounterInfo& c = set.counters[i];
      out << (i ? ",{\"name\":\"" : "{\"name\":\"");
      out.json(c.name) << "\",\"units\":\"";
      out.json(c.units) << "\",\"block\":\"";
      out.json(c.block) << "\",\"description\":\"";
      out.json(c.description) << "\"}";
    }
    out << "]}";
    out.endLine();
  }
  for (const auto& n : counters.notes) {
    out << "{\"type\":\"counter_note\",\"process\":\"" << process << "\",\"pid\":" << pid << ",\"counter\":\"";
    out.json(n.counter) << "\",\"device\":";
    if (n.device == ~0u) out << std::string_view("null");
    else out << n.device;
    out << ",\"reason\":\"";
    out.json(n.reason) << "\",\"pass\":" << n.pass << "}";
    out.endLine();
  }
}

// Each device metric sample (`"type":"device_metric"`), a line per metric
// read; a device without metrics says why (`"note"`).
void writeDeviceMetrics(const CapturedCounters& counters, const std::string& process, const std::string& pid,
                        Lines& out) {
  for (const auto& series : counters.metrics) {
    auto begin = [&]() -> Lines& {
      out << "{\"type\":\"device_metric\",\"process\":\"" << process << "\",\"pid\":" << pid
          << ",\"device\":" << series.device << ",\"source\":\"";
      return out.json(series.source) << "\"";
    };
    if (series.metrics.empty() || series.times.empty()) {
      begin() << ",\"note\":\"";
      out.json(series.note) << "\"}";
      out.endLine();
      continue;
    }
    for (size_t i = 0; i < series.times.size(); ++i)
      for (size_t m = 0; m < series.metrics.size(); ++m) {
        double v = series.at(i, m);
        if (std::isnan(v)) continue;
        begin() << ",\"metric\":\"";
        out.json(series.metrics[m].name) << "\",\"units\":\"";
        out.json(series.metrics[m].units) << "\",\"cumulative\":"
                                          << std::string_view(series.metrics[m].cumulative ? "true" : "false")
                                          << ",\"time_ns\":" << series.times[i] << ",\"value\":";
        out.number(v) << "}";
        out.endLine();
      }
  }
}

// The first line: what the stream is, its schema version and the row types
// it may hold (docs/export.md describes each).
void writeSchema(Lines& out) {
  out << "{\"type\":\"schema\",\"version\":" << kJsonLinesSchemaVersion << ",\"newest_capture_format\":\""
      << format::kFormatMajor << "." << format::kFormatMinor << "\",\"types\":[";
  const char* types[] = {"schema",  "process", "api",           "counter_set", "counter_note",  "device",
                         "counters", "level",  "copy_direction", "memory",     "device_metric", "stack",
                         "instruction", "range"};
  for (size_t i = 0; i < std::size(types); ++i) out << (i ? ",\"" : "\"") << std::string_view(types[i]) << "\"";
  out << "]}";
  out.endLine();
}

// A capture's own line: which process (and rank) the rows after it are of.
void writeProcess(const Capture& c, const std::string& process, Lines& out) {
  const auto& p = c.process();
  out << "{\"type\":\"process\",\"process\":\"" << process << "\",\"pid\":" << p.pid << ",\"rank\":" << p.rank
      << ",\"host\":\"";
  out.json(p.hostname) << "\",\"executable\":\"";
  out.json(p.executable) << "\",\"file\":\"";
  out.json(c.path()) << "\",\"mode\":\"";
  out.json(p.mode) << "\"}";
  out.endLine();
}

// What each level (device, hal, host) and each copy direction of a capture's
// operations add up to, counted as the operations are written.
class LevelTotals {
 public:
  void add(const DeviceOp& op) {
    Totals& l = levels_[operationLevel(op)];
    ++l.operations;
    if (op.timed) {
      ++l.timed;
      l.deviceNs += op.durationNs();
    }
    if (op.kind != schema::DeviceOpKind::COPY) return;
    Totals& d = directions_[{operationLevel(op), directionName(op.direction)}];
    ++d.operations;
    d.bytes += op.bytes;
    if (op.timed) {
      ++d.timed;
      d.deviceNs += op.durationNs();
    }
  }
  void write(const std::string& process, const std::string& pid, Lines& out) const {
    for (const auto& [level, t] : levels_) {
      out << "{\"type\":\"level\",\"process\":\"" << process << "\",\"pid\":" << pid << ",\"level\":\""
          << level << "\",\"operations\":" << t.operations << ",\"timed\":" << t.timed
          << ",\"device_ns\":" << t.deviceNs << "}";
      out.endLine();
    }
    for (const auto& [key, t] : directions_) {
      out << "{\"type\":\"copy_direction\",\"process\":\"" << process << "\",\"pid\":" << pid
          << ",\"level\":\"" << key.first << "\",\"direction\":\"" << key.second << "\",\"copies\":" << t.operations
          << ",\"bytes\":" << t.bytes << ",\"timed\":" << t.timed << ",\"device_ns\":" << t.deviceNs << "}";
      out.endLine();
    }
  }

 private:
  struct Totals {
    uint64_t operations = 0, timed = 0, bytes = 0;
    int64_t deviceNs = 0;
  };
  std::map<std::string, Totals> levels_;
  std::map<std::pair<std::string, std::string>, Totals> directions_;
};

// Every allocation and free in time order, with the call that made it and
// its stack (`"type":"memory"`).
void writeMemoryEvents(const Capture& c, const DeviceWork& work, const std::string& process, const std::string& pid,
                       Lines& out) {
  for (const MemoryEvent& e : memoryEvents(c, work)) {
    const MemoryOp& m = e.op;
    out << "{\"type\":\"memory\",\"process\":\"" << process << "\",\"pid\":" << pid << ",\"event\":\""
        << std::string_view(m.isFree ? "free" : "allocate") << "\",\"kind\":\"" << memoryKindName(m.kind) << "\"";
    if (m.device != ~0u) out << ",\"device\":" << m.device;
    out << ",\"address\":" << m.address << ",\"size\":" << m.size << ",\"time_ns\":" << m.hostNs
        << ",\"thread\":" << m.thread;
    if (!e.function.empty()) {
      out << ",\"function\":\"";
      out.json(e.function) << "\",\"call_index\":" << e.callIndex;
    }
    if (m.stack) out << ",\"stack\":" << m.stack;
    out << "}";
    out.endLine();
  }
}

// The named ranges the program pushed and popped (`"type":"range"`), by
// thread, then begin; with a window (--from, --to), those that begin in it.
void writeRanges(const Capture& c, const std::string& process, const std::string& pid, Lines& out,
                 std::vector<std::string>& problems) {
  ProgramRanges ranges = loadRanges(c);
  for (auto& p : ranges.problems) problems.push_back(std::move(p));
  for (const NamedRange& r : ranges.ranges) {
    if (c.filter() && !c.filter()->inWindow(c, r.beginNs)) continue;
    out << "{\"type\":\"range\",\"process\":\"" << process << "\",\"pid\":" << pid << ",\"thread\":" << r.thread
        << ",\"name\":\"";
    out.json(ranges.nameOf(r)) << "\",\"begin_ns\":" << r.beginNs << ",\"end_ns\":" << r.endNs
                               << ",\"depth\":" << r.depth << ",\"open_at_end\":"
                               << std::string_view(r.openAtEnd ? "true" : "false") << "}";
    out.endLine();
  }
}

// One capture's lines: its API calls, then its device operations as
// `batches` gives them (`work` holds their queues' objects by the first),
// then its stacks.
void writeCapture(const Capture& c, const DeviceWork& work, const OpBatches& batches, StackFrames& stacks,
                  Lines& out, std::vector<std::string>& problems) {
  std::string process = jsonEscape(c.label());
  std::string pid = std::to_string(c.process().pid);
  writeProcess(c, process, out);
  // Each function's name escaped once.
  std::unordered_map<uint32_t, std::string> functions;
  c.forEachCallBatch([&](std::span<const ApiCall> calls) {
    for (const ApiCall& call : calls) {
      auto [f, added] = functions.try_emplace(call.function);
      if (added) f->second = jsonEscape(c.functionName(call.function));
      out << "{\"type\":\"api\",\"process\":\"" << process << "\",\"pid\":" << pid
          << ",\"thread\":" << call.thread << ",\"function\":\"" << f->second << "\",\"begin_ns\":" << call.beginNs;
      if (call.finished) out << ",\"end_ns\":" << call.endNs << ",\"result\":" << call.result;
      else out << ",\"finished\":false";
      out << "}";
      out.endLine();
    }
  });
  // Counter sets and what was not collected come before the operations
  // whose values name them (format 1.7; none in older files).
  DispatchCounters counters(loadCounters(c));
  writeCounterSets(counters.counters(), process, pid, out);
  std::unordered_map<uint64_t, std::string> queues;
  size_t index = 0;
  LevelTotals totals;
  batches([&](std::span<const DeviceOp> ops) {
    for (const DeviceOp& op : ops) {
      totals.add(op);
      auto [q, added] = queues.try_emplace(op.queue);
      if (added) q->second = jsonEscape(work.queueName(op.queue));
      out << "{\"type\":\"device\",\"process\":\"" << process << "\",\"pid\":" << pid << ",\"index\":" << index++
          << ",\"kind\":\"" << opKindText(op.kind) << "\",\"name\":\"";
      out.json(op.name) << "\",\"queue\":\"" << q->second << "\",\"groups\":[" << op.groupCount[0] << ","
                        << op.groupCount[1] << "," << op.groupCount[2] << "],\"group_size\":[" << op.groupSize[0]
                        << "," << op.groupSize[1] << "," << op.groupSize[2] << "],\"bytes\":" << op.bytes;
      if (op.kind == schema::DeviceOpKind::COPY) out << ",\"direction\":\"" << directionName(op.direction) << "\"";
      out << ",\"submit_ns\":" << op.submitNs;
      if (op.timed) {
        out << ",\"start_ns\":" << op.startNs << ",\"end_ns\":" << op.endNs;
      } else {
        out << ",\"untimed\":\"";
        out.json(op.note) << "\"";
      }
      out << ",\"level\":\"" << operationLevel(op) << "\"";
      if (op.recordedBy == schema::Api::IREE_HAL) writeHalOperation(op, out);
      // The join of HAL and device dispatches, by the index of the other line.
      if (op.hal) out << ",\"hal_dispatch\":" << op.hal->dispatch << ",\"hal_submission\":" << op.hal->submission;
      if (op.recordedBy == schema::Api::IREE_HAL && op.operation == "dispatch")
        out << ",\"device_dispatches\":" << op.deviceDispatches;
      if (op.stack) out << ",\"stack\":" << op.stack;
      out << "}";
      out.endLine();
      if (const CounterSetInfo* set = counters.setOf(op)) {
        out << "{\"type\":\"counters\",\"process\":\"" << process << "\",\"pid\":" << pid
            << ",\"index\":" << index - 1 << ",\"set\":" << set->id << ",\"values\":{";
        for (size_t i = 0; i < set->counters.size(); ++i) {
          out << (i ? ",\"" : "\"");
          out.json(set->counters[i].name) << "\":";
          out.number(set->counters[i].value(op.counterValues[i]));
        }
        out << "}}";
        out.endLine();
      }
    }
  });
  totals.write(process, pid, out);
  writeMemoryEvents(c, work, process, pid, out);
  writeRanges(c, process, pid, out, problems);
  writeDeviceMetrics(counters.counters(), process, pid, out);
  for (auto& p : counters.problems(c.path())) problems.push_back(std::move(p));
  // Each stack, root first (from main where main is among its frames).
  stacks.beginCapture();
  for (const auto& [id, pcs] : work.stacks) {
    out << "{\"type\":\"stack\",\"process\":\"" << process << "\",\"pid\":" << pid << ",\"id\":" << id
        << ",\"frames\":[";
    const auto& frames = stacks.of(work, id);
    for (size_t i = 0; i < frames.size(); ++i) {
      const NamedFrame& f = stacks.frames()[frames[i]];
      out << (i ? ",{" : "{") << "\"name\":\"";
      out.json(f.text()) << "\"";
      if (!f.function.empty()) {
        out << ",\"function\":\"";
        out.json(f.function) << "\"";
      }
      if (!f.module.empty()) {
        out << ",\"module\":\"";
        out.json(f.module) << "\"";
      }
      out << ",\"offset\":" << f.offset;
      if (!f.file.empty()) {
        out << ",\"file\":\"";
        out.json(f.file) << "\",\"line\":" << f.line;
      }
      if (f.inlined) out << ",\"inlined\":true";
      out << "}";
    }
    out << "]}";
    out.endLine();
  }
}

// Mode samples: a line per sampled instruction of each kernel's code, its
// counts by reason, named by `instructions` (kernel+0xoffset without it).
void writeInstructions(const Capture& c, const DeviceWork& work, const InstructionResolver& instructions,
                       Lines& out, std::vector<std::string>& notes) {
  InstructionSamples samples = loadInstructionSamples(c, work);
  notes.insert(notes.end(), samples.notes.begin(), samples.notes.end());
  const std::string process = jsonEscape(c.label());
  const uint32_t pid = c.process().pid;
  forEachSampledInstruction(
      c, work, samples, instructions, notes,
      [&](const SampledCode& code, uint64_t offset, const std::vector<uint64_t>& counts,
          const std::vector<ResolvedFrame>& frames) {
        out << "{\"type\":\"instruction\",\"process\":\"" << process << "\",\"pid\":" << pid
            << ",\"device\":" << code.device << ",\"kernel\":\"";
        out.json(code.kernel) << "\",\"module\":" << code.module << ",\"address\":" << code.address
                              << ",\"offset\":" << offset << ",\"instruction\":\"";
        out.json(instructionText(frames, code.kernel, offset)) << "\"";
        if (!frames.empty() && !frames.front().file.empty()) {
          out << ",\"file\":\"";
          out.json(frames.front().file) << "\",\"line\":" << frames.front().line;
        }
        uint64_t total = 0;
        out << ",\"counts\":{";
        bool first = true;
        for (size_t k = 0; k < counts.size() && k < samples.reasons.size(); ++k) {
          total += counts[k];
          if (!counts[k]) continue;
          out << (first ? "\"" : ",\"");
          out.json(samples.reasons[k]) << "\":" << counts[k];
          first = false;
        }
        out << "},\"samples\":" << total << "}";
        out.endLine();
      });
}

}  // namespace

void writeJsonLines(const std::vector<LoadedCapture>& loaded, std::ostream& stream, const FrameResolver& resolve) {
  Lines out(stream);
  writeSchema(out);
  StackFrames stacks(resolve);
  std::vector<std::string> problems;
  for (const auto& lc : loaded)
    writeCapture(
        *lc.capture, lc.work, [&](const auto& visit) { visit(std::span<const DeviceOp>(lc.work.ops)); }, stacks, out,
        problems);
}

void writeJsonLines(std::span<const Capture* const> captures, std::ostream& stream, std::vector<std::string>& notes,
                    const FrameResolver& resolve, const InstructionResolver& instructions) {
  Lines out(stream);
  writeSchema(out);
  StackFrames stacks(resolve);
  for (const Capture* c : captures) {
    DeviceWork work;  // one capture's at a time
    writeCapture(*c, work, [&](const auto& visit) { visitDeviceWork(*c, work, true, visit); }, stacks, out, notes);
    writeInstructions(*c, work, instructions, out, notes);
    notes.insert(notes.end(), work.notes.begin(), work.notes.end());
    auto problems = stacks.takeProblems();
    notes.insert(notes.end(), problems.begin(), problems.end());
  }
}

void writeJsonLinesInParallel(std::span<const Capture* const> captures, std::ostream& stream,
                              std::vector<std::string>& notes, const std::function<FrameResolver()>& resolverForPart,
                              const std::function<InstructionResolver()>& instructionsForPart) {
  {
    Lines out(stream);
    writeSchema(out);
  }
  // Each capture's lines written on a thread of its own into a stream that
  // is copied out in order (writeInOrder); its stacks named apart.
  std::vector<std::vector<std::string>> partNotes(captures.size());
  writeInOrder(captures.size(), stream, [&](size_t i, std::ostream& part) {
    const Capture& c = *captures[i];
    std::vector<std::string>& mine = partNotes[i];
    {
      Lines out(part);
      StackFrames stacks(resolverForPart());
      DeviceWork work;
      writeCapture(c, work, [&](const auto& visit) { visitDeviceWork(c, work, true, visit); }, stacks, out, mine);
      writeInstructions(c, work, instructionsForPart(), out, mine);
      mine.insert(mine.end(), work.notes.begin(), work.notes.end());
      auto problems = stacks.takeProblems();
      mine.insert(mine.end(), problems.begin(), problems.end());
    }
    c.reader().releasePages();
  });
  PartNotes joined(notes);
  for (auto& n : partNotes) joined.add(std::move(n));
}

}  // namespace gtap::readers
