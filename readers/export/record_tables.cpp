// The rows of the record exports' tables (record_tables.h), from captures.
#include "record_tables.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>
#include <memory>
#include <ostream>
#include <stdexcept>
#include <streambuf>
#include <unordered_map>
#include <utility>

#include "gtap/readers/counters.h"
#include "gtap/readers/memory_events.h"
#include "gtap/readers/parallel.h"
#include "gtap/readers/ranges.h"
#include "gtap/readers/report_filter.h"
#include "gtap/readers/record_export.h"

namespace gtap::readers {

namespace {

constexpr const char* kInteger = "INTEGER";
constexpr const char* kText = "TEXT";
constexpr const char* kProcess = "INTEGER REFERENCES processes";
constexpr const char* kString = "INTEGER REFERENCES strings";

// The tables, in RecordTable order; docs/export.md describes them.
const std::vector<RecordTableInfo>& tables() {
  static const std::vector<RecordTableInfo> t = {
      {RecordTable::processes,
       "processes",
       {{"id", "INTEGER PRIMARY KEY"}, {"pid", kInteger}, {"rank", kInteger}, {"label", kText}, {"command", kText}},
       true},
      {RecordTable::threads,
       "threads",
       {{"id", "INTEGER PRIMARY KEY"}, {"process_id", kProcess}, {"thread", kInteger}, {"os_tid", kInteger},
        {"name", kText}},
       true},
      {RecordTable::strings, "strings", {{"id", "INTEGER PRIMARY KEY"}, {"string", "TEXT UNIQUE"}}, true},
      {RecordTable::apiCalls,
       "api_calls",
       {{"id", "INTEGER PRIMARY KEY"}, {"process_id", kProcess}, {"thread", kInteger}, {"function_id", kString},
        {"begin_ns", kInteger}, {"end_ns", kInteger}, {"result", kInteger}, {"depth", kInteger},
        {"call_index", kInteger}},
       true},
      {RecordTable::deviceOps,
       "device_ops",
       {{"id", "INTEGER PRIMARY KEY"}, {"process_id", kProcess}, {"kind", kText}, {"name_id", kString},
        {"queue_id", kString}, {"groups_x", kInteger}, {"groups_y", kInteger}, {"groups_z", kInteger},
        {"group_size_x", kInteger}, {"group_size_y", kInteger}, {"group_size_z", kInteger}, {"bytes", kInteger},
        {"submit_ns", kInteger}, {"start_ns", kInteger}, {"end_ns", kInteger}, {"level", kText},
        {"operation_id", kString}, {"hal_dispatch_id", "INTEGER REFERENCES device_ops"},
        {"hal_submission_id", "INTEGER REFERENCES device_ops"}, {"direction", kText}, {"thread", kInteger},
        {"call_index", kInteger}, {"stack", kInteger}},
       true},
      {RecordTable::allocations,
       "allocations",
       {{"id", "INTEGER PRIMARY KEY"}, {"process_id", kProcess}, {"event", kText}, {"kind", kText},
        {"device", kInteger}, {"address", kInteger}, {"size", kInteger}, {"time_ns", kInteger},
        {"thread", kInteger}, {"function_id", kString}, {"call_index", kInteger}, {"stack", kInteger}},
       true},
      {RecordTable::frames,
       "frames",
       {{"id", "INTEGER PRIMARY KEY"}, {"name", kText}, {"function", kText}, {"module", kText},
        {"offset", kInteger}, {"file", kText}, {"line", kInteger}, {"inlined", kInteger}},
       false},
      {RecordTable::stackFrames,
       "stack_frames",
       {{"process_id", kProcess}, {"stack", kInteger}, {"depth", kInteger},
        {"frame_id", "INTEGER REFERENCES frames"}},
       false},
      {RecordTable::instructionSamples,
       "instruction_samples",
       {{"process_id", kProcess}, {"device", kInteger}, {"kernel", kText}, {"module", kInteger},
        {"address", kInteger}, {"offset", kInteger}, {"instruction", kText}, {"file", kText}, {"line", kInteger},
        {"reason", kText}, {"count", kInteger}},
       false},
      {RecordTable::counterSets,
       "counter_sets",
       {{"id", "INTEGER PRIMARY KEY"}, {"process_id", kProcess}, {"set_id", kInteger}, {"device", kInteger},
        {"source", kText}, {"metric_group", kText}, {"pass", kInteger}, {"passes", kInteger}},
       false},
      {RecordTable::counterSetCounters,
       "counter_set_counters",
       {{"counter_set_id", "INTEGER REFERENCES counter_sets"}, {"position", kInteger}, {"name", kText},
        {"units", kText}, {"type", kText}, {"block", kText}, {"description", kText}},
       false},
      {RecordTable::counters,
       "counters",
       {{"device_op_id", "INTEGER REFERENCES device_ops"}, {"counter_set_id", "INTEGER REFERENCES counter_sets"},
        {"counter", kText}, {"value", ""}, {"units", kText}},
       false},
      {RecordTable::counterNotes,
       "counter_notes",
       {{"process_id", kProcess}, {"device", kInteger}, {"counter", kText}, {"reason", kText}, {"pass", kInteger}},
       false},
      {RecordTable::deviceMetrics,
       "device_metrics",
       {{"process_id", kProcess}, {"device", kInteger}, {"source", kText}, {"metric", kText}, {"units", kText},
        {"cumulative", kInteger}, {"time_ns", kInteger}, {"value", "REAL"}},
       false},
      {RecordTable::ranges,
       "ranges",
       {{"process_id", kProcess}, {"thread", kInteger}, {"name_id", kString}, {"begin_ns", kInteger},
        {"end_ns", kInteger}, {"depth", kInteger}, {"open_at_end", kInteger}},
       false},
  };
  return t;
}

// Each distinct string once in the strings table, its id handed back.
class StringTable {
 public:
  explicit StringTable(RecordSink& sink) : sink_(sink) {}
  int64_t id(std::string_view s) {
    auto [it, added] = ids_.try_emplace(std::string(s), static_cast<int64_t>(ids_.size()) + 1);
    if (added) sink_.row(RecordTable::strings, {it->second, s});
    return it->second;
  }
  // For a string that stays where it is (a DeviceWork's interned names): its
  // place stands for its text, so a repeated one costs no hashing of it.
  int64_t idOfStored(std::string_view s) {
    auto key = std::make_pair(s.data(), s.size());
    auto it = stored_.find(key);
    if (it == stored_.end()) it = stored_.emplace(key, id(s)).first;
    return it->second;
  }

 private:
  RecordSink& sink_;
  std::unordered_map<std::string, int64_t> ids_;
  struct PlaceHash {
    size_t operator()(const std::pair<const char*, size_t>& p) const {
      return std::hash<const void*>()(p.first) ^ (p.second * 0x9e3779b97f4a7c15ull);
    }
  };
  std::unordered_map<std::pair<const char*, size_t>, int64_t, PlaceHash> stored_;
};

// The rows of the captures `each` gives: each(write) calls
// write(capture, work, batches) for every capture in turn, `work` holding
// what its operations' queues name by the first batch. The names the
// operations point to must live until the end (the string table keys on
// where they are stored).
template <class ForEachCapture>
void writeRows(ForEachCapture&& each, RecordSink& sink, StackFrames& stacks,
               const InstructionResolver& instructions = {}, std::vector<std::string>* notes = nullptr) {
  using T = RecordTable;
  using V = RecordValue;
  StringTable strings(sink);
  int64_t counterSetIds = 0;  // counter_sets rows before this capture's
  size_t framesWritten = 0;
  int64_t processId = 0;
  int64_t opIds = 0;  // device_ops ids before this capture's
  int64_t threadIds = 0, callIds = 0, memoryIds = 0;
  each([&](const Capture& c, const DeviceWork& work, const OpBatches& batches) {
    ++processId;
    std::string command;
    for (const auto& a : c.process().arguments) command += (command.empty() ? "" : " ") + a;
    sink.row(T::processes, {processId, c.process().pid, V::integerOr(c.process().rank >= 0, c.process().rank),
                            c.label(), command});
    for (const auto& [id, t] : c.threads())
      sink.row(T::threads, {++threadIds, processId, id, t.osTid, t.name});
    std::unordered_map<uint32_t, int64_t> functionIds;
    c.forEachCall([&](const ApiCall& a) {
      auto it = functionIds.find(a.function);
      if (it == functionIds.end()) it = functionIds.emplace(a.function, strings.id(c.functionName(a.function))).first;
      sink.row(T::apiCalls, {++callIds, processId, a.thread, it->second, a.beginNs, V::integerOr(a.finished, a.endNs),
                             V::integerOr(a.finished, a.result), a.depth, a.beginIndex});
    });
    // Counter sets (a row each, numbered across captures), what was not
    // collected, then each measured operation's values after its row.
    DispatchCounters counters(loadCounters(c));
    std::unordered_map<uint32_t, int64_t> setRows;
    for (const auto& [id, set] : counters.counters().sets) {
      int64_t row = ++counterSetIds;
      setRows[id] = row;
      sink.row(T::counterSets, {row, processId, id, set.device, set.source, set.group, set.pass, set.passes});
      for (size_t i = 0; i < set.counters.size(); ++i) {
        const CounterInfo& def = set.counters[i];
        const char* types[] = {"unsigned", "signed", "real", "boolean"};
        sink.row(T::counterSetCounters, {row, i, def.name, def.units,
                                         types[std::min<size_t>(static_cast<size_t>(def.type), 3)], def.block,
                                         def.description});
      }
    }
    for (const auto& n : counters.counters().notes)
      sink.row(T::counterNotes, {processId, V::integerOr(n.device != ~0u, n.device), n.counter, n.reason, n.pass});
    std::unordered_map<uint64_t, int64_t> queueIds;
    size_t index = 0;
    batches([&](std::span<const DeviceOp> ops) {
      for (const DeviceOp& o : ops) {
        auto [q, added] = queueIds.try_emplace(o.queue);
        if (added) q->second = strings.id(work.queueName(o.queue));
        bool appended = o.appendIndex != ~uint64_t{0};
        int64_t id = opIds + static_cast<int64_t>(index) + 1;
        sink.row(T::deviceOps,
                 {id, processId, opKindText(o.kind), strings.idOfStored(o.name), q->second, o.groupCount[0],
                  o.groupCount[1], o.groupCount[2], o.groupSize[0], o.groupSize[1], o.groupSize[2], o.bytes,
                  o.submitNs, V::integerOr(o.timed, o.startNs), V::integerOr(o.timed, o.endNs), operationLevel(o),
                  o.operation.empty() ? V() : V(strings.idOfStored(o.operation)),
                  V::integerOr(o.hal != nullptr, opIds + static_cast<int64_t>(o.hal ? o.hal->dispatch : 0) + 1),
                  V::integerOr(o.hal != nullptr, opIds + static_cast<int64_t>(o.hal ? o.hal->submission : 0) + 1),
                  o.kind == schema::DeviceOpKind::COPY ? V(directionName(o.direction)) : V(),
                  V::integerOr(appended, o.thread), V::integerOr(appended, static_cast<int64_t>(o.appendIndex)),
                  V::integerOr(o.stack != 0, o.stack)});
        ++index;
        if (const CounterSetInfo* set = counters.setOf(o)) {
          for (size_t i = 0; i < set->counters.size(); ++i)
            sink.row(T::counters, {id, setRows.at(set->id), set->counters[i].name,
                                   V::number(set->counters[i].value(o.counterValues[i])), set->counters[i].units});
        }
      }
    });
    opIds += static_cast<int64_t>(index);
    // Device metrics: a row per sample and metric read.
    for (const auto& series : counters.counters().metrics)
      for (size_t i = 0; i < series.times.size(); ++i)
        for (size_t m = 0; m < series.metrics.size(); ++m) {
          double v = series.at(i, m);
          if (std::isnan(v)) continue;
          sink.row(T::deviceMetrics, {processId, series.device, series.source, series.metrics[m].name,
                                      series.metrics[m].units, series.metrics[m].cumulative ? 1 : 0, series.times[i],
                                      V::number(v)});
        }
    if (notes)
      for (auto& p : counters.problems(c.path())) notes->push_back(std::move(p));
    // Allocations and frees in time order, with the call that made each.
    for (const MemoryEvent& e : memoryEvents(c, work)) {
      const MemoryOp& m = e.op;
      bool called = !e.function.empty();
      sink.row(T::allocations,
               {++memoryIds, processId, m.isFree ? "free" : "allocate", memoryKindName(m.kind),
                V::integerOr(m.device != ~0u, m.device), m.address, m.size, m.hostNs, m.thread,
                called ? V(strings.id(e.function)) : V(), V::integerOr(called, static_cast<int64_t>(e.callIndex)),
                V::integerOr(m.stack != 0, m.stack)});
    }
    // The named ranges the program pushed and popped; with a window, those
    // that begin in it.
    ProgramRanges ranges = loadRanges(c);
    if (notes)
      for (auto& p : ranges.problems) notes->push_back(std::move(p));
    for (const NamedRange& r : ranges.ranges) {
      if (c.filter() && !c.filter()->inWindow(c, r.beginNs)) continue;
      sink.row(T::ranges, {processId, r.thread, strings.id(ranges.nameOf(r)), r.beginNs, r.endNs, r.depth,
                           r.openAtEnd ? 1 : 0});
    }
    // Its stacks, root first, and the frames not written before.
    stacks.beginCapture();
    for (const auto& [id, pcs] : work.stacks) {
      const auto& frames = stacks.of(work, id);
      for (; framesWritten < stacks.frames().size(); ++framesWritten) {
        const NamedFrame& f = stacks.frames()[framesWritten];
        sink.row(T::frames, {static_cast<int64_t>(framesWritten) + 1, f.text(), V::textOr(f.function),
                             V::textOr(f.module), f.offset, V::textOr(f.file), V::integerOr(!f.file.empty(), f.line),
                             f.inlined ? 1 : 0});
      }
      for (size_t depth = 0; depth < frames.size(); ++depth)
        sink.row(T::stackFrames, {processId, id, depth, static_cast<int64_t>(frames[depth]) + 1});
    }
    // Mode samples: a row per sampled instruction and reason counted.
    InstructionSamples samples = loadInstructionSamples(c, work);
    if (notes) notes->insert(notes->end(), samples.notes.begin(), samples.notes.end());
    std::vector<std::string> problems;
    forEachSampledInstruction(
        c, work, samples, instructions, notes ? *notes : problems,
        [&](const SampledCode& code, uint64_t offset, const std::vector<uint64_t>& counts,
            const std::vector<ResolvedFrame>& named) {
          const std::string text = instructionText(named, code.kernel, offset);
          bool located = !named.empty() && !named.front().file.empty();
          for (size_t k = 0; k < counts.size() && k < samples.reasons.size(); ++k) {
            if (!counts[k]) continue;
            sink.row(T::instructionSamples,
                     {processId, code.device, std::string_view(code.kernel), code.module, code.address, offset, text,
                      located ? V(std::string_view(named.front().file)) : V(),
                      V::integerOr(located, located ? static_cast<int64_t>(named.front().line) : 0),
                      std::string_view(samples.reasons[k]), counts[k]});
          }
        });
  });
}

// Rows in transit from a part's thread to the one writing the sink: a
// byte `kPartBegins` before each capture's rows, then per row its table's
// byte, its number of values and each value as a kind byte and its bytes
// (8 for a number, a 4-byte length and the bytes for text).
constexpr char kPartBegins = '\x7f';

class EncodingSink : public RecordSink {
 public:
  explicit EncodingSink(std::ostream& out) : out_(out) {}
  void beginPart() { out_.put(kPartBegins); }
  void row(RecordTable table, std::span<const RecordValue> values) override {
    bytes_.clear();
    bytes_.push_back(static_cast<char>(table));
    bytes_.push_back(static_cast<char>(values.size()));
    for (const RecordValue& v : values) encode(v, bytes_);
    out_.write(bytes_.data(), static_cast<std::streamsize>(bytes_.size()));
  }
  static void encode(const RecordValue& v, std::string& to) {
    to.push_back(static_cast<char>(v.kind));
    switch (v.kind) {
      case RecordValue::Kind::null: break;
      case RecordValue::Kind::integer: to.append(reinterpret_cast<const char*>(&v.integer), 8); break;
      case RecordValue::Kind::real: to.append(reinterpret_cast<const char*>(&v.real), 8); break;
      case RecordValue::Kind::text: {
        auto n = static_cast<uint32_t>(v.text.size());
        to.append(reinterpret_cast<const char*>(&n), 4);
        to.append(v.text);
        break;
      }
    }
  }

 private:
  std::ostream& out_;
  std::string bytes_;
};

// The parts' rows into one sink, as if one writer had written them all:
// each part numbers its rows from 1 and its strings and frames apart, so a
// row's own id and every id it refers to is moved past the rows of the
// parts before it, and a string or frame another part wrote already is
// referred to by its first id (never written twice).
class RemappingSink {
 public:
  explicit RemappingSink(RecordSink& out) : out_(out), bases_(recordTables().size()), counts_(bases_.size()) {
    // A column refers to the table its SQL type names (its own for the
    // primary key).
    for (const RecordTableInfo& t : recordTables()) {
      auto& refs = refs_.emplace_back();
      for (const RecordColumn& c : t.columns) {
        std::string_view type = c.sqlType;
        const RecordTableInfo* to = nullptr;
        if (type == "INTEGER PRIMARY KEY") to = &t;
        if (auto at = type.find("REFERENCES "); at != std::string_view::npos)
          to = recordTableNamed(type.substr(at + 11));
        refs.push_back(to ? static_cast<int>(to->table) : -1);
      }
    }
  }

  void beginPart() {
    for (size_t t = 0; t < bases_.size(); ++t) bases_[t] += std::exchange(counts_[t], 0);
    localStrings_.clear();
    localFrames_.clear();
  }

  void row(RecordTable table, std::span<RecordValue> values) {
    if (table == RecordTable::strings) return mapLocal(localStrings_, values, strings_, table);
    if (table == RecordTable::frames) return mapLocal(localFrames_, values, frames_, table);
    const auto& refs = refs_[static_cast<size_t>(table)];
    for (size_t i = 0; i < values.size() && i < refs.size(); ++i) {
      RecordValue& v = values[i];
      if (refs[i] < 0 || v.kind != RecordValue::Kind::integer) continue;
      auto to = static_cast<RecordTable>(refs[i]);
      if (to == table) counts_[refs[i]] = std::max(counts_[refs[i]], v.integer);
      if (to == RecordTable::strings) v.integer = local(localStrings_, v.integer);
      else if (to == RecordTable::frames) v.integer = local(localFrames_, v.integer);
      else v.integer += bases_[refs[i]];
    }
    out_.row(table, values);
  }

 private:
  static int64_t local(const std::vector<int64_t>& ids, int64_t id) {
    if (id < 1 || static_cast<size_t>(id) > ids.size())
      throw std::logic_error("a row refers to an unwritten string or frame");
    return ids[static_cast<size_t>(id) - 1];
  }
  // A string or frame row: its text (the values after the id) keys it.
  void mapLocal(std::vector<int64_t>& ids, std::span<RecordValue> values,
                std::unordered_map<std::string, int64_t>& global, RecordTable table) {
    if (values.empty() || values[0].kind != RecordValue::Kind::integer ||
        values[0].integer != static_cast<int64_t>(ids.size()) + 1)
      throw std::logic_error("a part's strings or frames are not numbered in order");
    key_.clear();
    for (size_t i = 1; i < values.size(); ++i) EncodingSink::encode(values[i], key_);
    auto [it, added] = global.try_emplace(key_, static_cast<int64_t>(global.size()) + 1);
    if (added) {
      values[0] = RecordValue(it->second);
      out_.row(table, values);
    }
    ids.push_back(it->second);
  }

  RecordSink& out_;
  std::vector<std::vector<int>> refs_;  // per table, per column: the table referred to, or -1
  std::vector<int64_t> bases_, counts_;
  std::vector<int64_t> localStrings_, localFrames_;  // by local id - 1
  std::unordered_map<std::string, int64_t> strings_, frames_;
  std::string key_;
};

// Decodes what EncodingSink wrote, as it comes, into a RemappingSink. What
// the sink throws is kept (the rest dropped) for the caller to rethrow.
class DecodingBuffer : public std::streambuf {
 public:
  explicit DecodingBuffer(RemappingSink& sink) : sink_(sink) {}
  void rethrow() {
    if (error_) std::rethrow_exception(error_);
    if (!data_.empty()) throw std::logic_error("the record rows ended in the middle of a row");
  }

 protected:
  int_type overflow(int_type c) override {
    if (c != traits_type::eof()) {
      char ch = traits_type::to_char_type(c);
      xsputn(&ch, 1);
    }
    return traits_type::not_eof(c);
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    if (error_) return n;
    data_.append(s, static_cast<size_t>(n));
    size_t at = 0;
    try {
      while (size_t used = decode(at)) at += used;
    } catch (...) {
      error_ = std::current_exception();
    }
    data_.erase(0, at);
    return n;
  }

 private:
  // Bytes of the whole row (or part mark) at `at` once handed on; 0 while it
  // is not all here.
  size_t decode(size_t at) {
    if (at >= data_.size()) return 0;
    if (data_[at] == kPartBegins) {
      sink_.beginPart();
      return 1;
    }
    size_t p = at + 2;
    if (p > data_.size()) return 0;
    auto table = static_cast<RecordTable>(data_[at]);
    size_t count = static_cast<unsigned char>(data_[at + 1]);
    values_.resize(count);
    for (size_t i = 0; i < count; ++i) {
      if (p >= data_.size()) return 0;
      RecordValue v;
      v.kind = static_cast<RecordValue::Kind>(data_[p++]);
      switch (v.kind) {
        case RecordValue::Kind::null: break;
        case RecordValue::Kind::integer:
        case RecordValue::Kind::real:
          if (p + 8 > data_.size()) return 0;
          std::memcpy(v.kind == RecordValue::Kind::integer ? static_cast<void*>(&v.integer) : &v.real,
                      data_.data() + p, 8);
          p += 8;
          break;
        case RecordValue::Kind::text: {
          uint32_t n;
          if (p + 4 > data_.size()) return 0;
          std::memcpy(&n, data_.data() + p, 4);
          p += 4;
          if (p + n > data_.size()) return 0;
          v.text = std::string_view(data_).substr(p, n);
          p += n;
          break;
        }
      }
      values_[i] = v;
    }
    sink_.row(table, values_);
    return p - at;
  }

  RemappingSink& sink_;
  std::string data_;
  std::vector<RecordValue> values_;
  std::exception_ptr error_;
};

}  // namespace

std::span<const RecordTableInfo> recordTables() { return tables(); }

const RecordTableInfo& recordTable(RecordTable table) { return tables()[static_cast<size_t>(table)]; }

const RecordTableInfo* recordTableNamed(std::string_view name) {
  for (const auto& t : tables())
    if (name == t.name) return &t;
  return nullptr;
}

RecordValue RecordValue::number(double v) {
  RecordValue r;
  if (!std::isfinite(v)) return r;
  if (v == std::floor(v) && std::fabs(v) < 9.0e15) return RecordValue(static_cast<int64_t>(v));
  r.kind = Kind::real;
  r.real = v;
  return r;
}

void writeRecordRows(const std::vector<LoadedCapture>& loaded, RecordSink& sink, const FrameResolver& resolve) {
  StackFrames stacks(resolve);
  writeRows(
      [&](const auto& write) {
        for (const auto& lc : loaded)
          write(*lc.capture, lc.work, [&](const auto& visit) { visit(std::span<const DeviceOp>(lc.work.ops)); });
      },
      sink, stacks);
}

void writeRecordRows(std::span<const Capture* const> captures, RecordSink& sink, std::vector<std::string>& notes,
                     const std::function<FrameResolver()>& resolverForPart,
                     const std::function<InstructionResolver()>& instructionsForPart) {
  // Each capture's rows made on a thread of its own (writeInOrder) and
  // numbered into the sink in order, so the rows are the same whatever the
  // number of threads.
  RemappingSink remap(sink);
  DecodingBuffer decode(remap);
  std::ostream rows(&decode);
  std::vector<std::vector<std::string>> partNotes(captures.size());
  // The sink (SQLite above all) is slower than the parts' threads: 4 MiB of
  // rows waiting per capture keeps them busy without holding more.
  constexpr size_t kHeld = size_t{4} << 20;
  writeInOrder(captures.size(), rows, [&](size_t i, std::ostream& part) {
    const Capture& c = *captures[i];
    std::vector<std::string>& mine = partNotes[i];
    EncodingSink encode(part);
    encode.beginPart();
    StackFrames stacks(resolverForPart ? resolverForPart() : FrameResolver{});
    DeviceWork work;
    writeRows(
        [&](const auto& write) {
          write(c, work, [&](const auto& visit) { visitDeviceWork(c, work, true, visit); });
          mine.insert(mine.end(), work.notes.begin(), work.notes.end());
          auto problems = stacks.takeProblems();
          mine.insert(mine.end(), problems.begin(), problems.end());
        },
        encode, stacks, instructionsForPart ? instructionsForPart() : InstructionResolver{}, &mine);
    c.reader().releasePages();
  }, kHeld);
  rows.flush();
  decode.rethrow();
  PartNotes joined(notes);
  for (auto& part : partNotes) joined.add(std::move(part));
}

}  // namespace gtap::readers
