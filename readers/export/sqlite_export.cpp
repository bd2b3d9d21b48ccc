// The SQLite export: processes, threads, API calls and device operations as
// tables (docs/export.md has the schema).
#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "gtap/readers/counters.h"
#include "gtap/readers/record_export.h"

namespace gtap::readers {

namespace {

// The SQLite export's tables; docs/export.md describes them. No index beyond
// the primary keys (and the one behind strings' UNIQUE): queries scan, and
// whoever queries one column often can add an index to the file.
constexpr const char* kSqliteSchema = R"(
CREATE TABLE processes(id INTEGER PRIMARY KEY, pid INTEGER, rank INTEGER, label TEXT, command TEXT);
CREATE TABLE threads(id INTEGER PRIMARY KEY, process_id INTEGER REFERENCES processes, thread INTEGER,
                     os_tid INTEGER, name TEXT);
CREATE TABLE strings(id INTEGER PRIMARY KEY, string TEXT UNIQUE);
CREATE TABLE api_calls(id INTEGER PRIMARY KEY, process_id INTEGER REFERENCES processes, thread INTEGER,
                       function_id INTEGER REFERENCES strings, begin_ns INTEGER, end_ns INTEGER,
                       result INTEGER, depth INTEGER, call_index INTEGER);
CREATE TABLE device_ops(id INTEGER PRIMARY KEY, process_id INTEGER REFERENCES processes, kind TEXT,
                        name_id INTEGER REFERENCES strings, queue_id INTEGER REFERENCES strings,
                        groups_x INTEGER, groups_y INTEGER, groups_z INTEGER,
                        group_size_x INTEGER, group_size_y INTEGER, group_size_z INTEGER, bytes INTEGER,
                        submit_ns INTEGER, start_ns INTEGER, end_ns INTEGER, level TEXT,
                        operation_id INTEGER REFERENCES strings, hal_dispatch_id INTEGER REFERENCES device_ops,
                        hal_submission_id INTEGER REFERENCES device_ops, direction TEXT,
                        thread INTEGER, call_index INTEGER, stack INTEGER);
CREATE TABLE frames(id INTEGER PRIMARY KEY, name TEXT, function TEXT, module TEXT, offset INTEGER,
                    file TEXT, line INTEGER, inlined INTEGER);
CREATE TABLE stack_frames(process_id INTEGER REFERENCES processes, stack INTEGER, depth INTEGER,
                          frame_id INTEGER REFERENCES frames);
CREATE TABLE instruction_samples(process_id INTEGER REFERENCES processes, device INTEGER, kernel TEXT,
                                 module INTEGER, address INTEGER, offset INTEGER, instruction TEXT, file TEXT,
                                 line INTEGER, reason TEXT, count INTEGER);
CREATE TABLE counter_sets(id INTEGER PRIMARY KEY, process_id INTEGER REFERENCES processes, set_id INTEGER,
                          device INTEGER, source TEXT, metric_group TEXT, pass INTEGER, passes INTEGER);
CREATE TABLE counter_set_counters(counter_set_id INTEGER REFERENCES counter_sets, position INTEGER, name TEXT,
                                  units TEXT, type TEXT, block TEXT, description TEXT);
CREATE TABLE counters(device_op_id INTEGER REFERENCES device_ops, counter_set_id INTEGER REFERENCES counter_sets,
                      counter TEXT, value, units TEXT);
CREATE TABLE counter_notes(process_id INTEGER REFERENCES processes, device INTEGER, counter TEXT, reason TEXT,
                           pass INTEGER);
CREATE TABLE device_metrics(process_id INTEGER REFERENCES processes, device INTEGER, source TEXT, metric TEXT,
                            units TEXT, cumulative INTEGER, time_ns INTEGER, value REAL);
CREATE VIEW counter_summary AS
  SELECT o.process_id AS process_id, s.string AS kernel, c.counter AS counter, c.units AS units,
         COUNT(*) AS dispatches, SUM(c.value) AS total, AVG(c.value) AS mean, MIN(c.value) AS min,
         MAX(c.value) AS max
  FROM counters c JOIN device_ops o ON o.id = c.device_op_id JOIN strings s ON s.id = o.name_id
  GROUP BY o.process_id, o.name_id, c.counter;
CREATE VIEW api_summary AS
  SELECT s.string AS function, COUNT(*) AS count, SUM(a.end_ns - a.begin_ns) AS total_ns
  FROM api_calls a JOIN strings s ON s.id = a.function_id GROUP BY a.function_id;
)";

// A database being written: statements prepared once and stepped with bound
// values. Every return code is checked; a failure throws SqliteError.
class SqliteDatabase {
 public:
  explicit SqliteDatabase(const std::string& path) {
    // The file exists already (created exclusively by OutputFile): SQLite
    // neither creates one nor follows a link in its place.
    int rc = sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_NOMUTEX,
                             nullptr);
    if (rc != SQLITE_OK) {
      // A failed open still hands back a connection (to ask for the message),
      // and no destructor runs for it.
      SqliteError error(message(rc));
      sqlite3_close(db_);
      db_ = nullptr;
      throw error;
    }
  }
  ~SqliteDatabase() {
    for (auto* s : statements_) sqlite3_finalize(s);
    if (db_) sqlite3_close_v2(db_);
  }
  SqliteDatabase(const SqliteDatabase&) = delete;
  SqliteDatabase& operator=(const SqliteDatabase&) = delete;

  void exec(const char* sql) { check(sqlite3_exec(db_, sql, nullptr, nullptr, nullptr)); }
  sqlite3_stmt* prepare(const char* sql) {
    sqlite3_stmt* s = nullptr;
    check(sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, &s, nullptr));
    statements_.push_back(s);
    return s;
  }
  void bind(sqlite3_stmt* s, int column, int64_t value) { check(sqlite3_bind_int64(s, column, value)); }
  void bind(sqlite3_stmt* s, int column, std::string_view value) {
    check(sqlite3_bind_text64(s, column, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8));
  }
  void bindNull(sqlite3_stmt* s, int column) { check(sqlite3_bind_null(s, column)); }
  // A number: whole ones as integers, others as reals, NULL when not finite.
  void bindNumber(sqlite3_stmt* s, int column, double value) {
    if (!std::isfinite(value)) bindNull(s, column);
    else if (value == std::floor(value) && std::fabs(value) < 9.0e15) bind(s, column, static_cast<int64_t>(value));
    else check(sqlite3_bind_double(s, column, value));
  }
  // Two columns set together, or both NULL when not `set`.
  void bindPair(sqlite3_stmt* s, int column, bool set, int64_t first, int64_t second) {
    if (set) {
      bind(s, column, first);
      bind(s, column + 1, second);
    } else {
      bindNull(s, column);
      bindNull(s, column + 1);
    }
  }
  // Runs an insert with what is bound and makes the statement ready for the next.
  void step(sqlite3_stmt* s) {
    int rc = sqlite3_step(s);
    if (rc != SQLITE_DONE) fail(rc);
    check(sqlite3_reset(s));
  }
  // Finalizes the statements and closes the file; the destructor does the
  // same without checking, after a failure.
  void close() {
    while (!statements_.empty()) {
      // Finalized even when this reports an error.
      sqlite3_stmt* s = statements_.back();
      statements_.pop_back();
      check(sqlite3_finalize(s));
    }
    int rc = sqlite3_close(db_);
    if (rc != SQLITE_OK) fail(rc);
    db_ = nullptr;
  }

 private:
  void check(int rc) {
    if (rc != SQLITE_OK) fail(rc);
  }
  [[noreturn]] void fail(int rc) { throw SqliteError(message(rc)); }
  std::string message(int rc) const {
    // The connection's message is the detailed one, and an I/O failure has
    // the system's reason too; without a connection (no memory for one) only
    // the code's description is left.
    std::string text = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    if (int e = db_ ? sqlite3_system_errno(db_) : 0) text += ": " + std::string(std::strerror(e));
    return "SQLite: " + text + " (code " + std::to_string(rc) + ")";
  }

  sqlite3* db_ = nullptr;
  std::vector<sqlite3_stmt*> statements_;
};

// Each distinct string once in the strings table, its id handed back.
class StringTable {
 public:
  explicit StringTable(SqliteDatabase& db) : db_(db), insert_(db.prepare("INSERT INTO strings(id, string) VALUES(?, ?)")) {}
  int64_t id(std::string_view s) {
    auto [it, added] = ids_.try_emplace(std::string(s), static_cast<int64_t>(ids_.size()) + 1);
    if (added) {
      db_.bind(insert_, 1, it->second);
      db_.bind(insert_, 2, s);
      db_.step(insert_);
    }
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
  SqliteDatabase& db_;
  sqlite3_stmt* insert_;
  std::unordered_map<std::string, int64_t> ids_;
  struct PlaceHash {
    size_t operator()(const std::pair<const char*, size_t>& p) const {
      return std::hash<const void*>()(p.first) ^ (p.second * 0x9e3779b97f4a7c15ull);
    }
  };
  std::unordered_map<std::pair<const char*, size_t>, int64_t, PlaceHash> stored_;
};

// The database of the captures `each` gives: each(write) calls
// write(capture, work, batches) for every capture in turn, `work` holding
// what its operations' queues name by the first batch. The names the
// operations point to must live until the end (the string table keys on
// where they are stored).
template <class ForEachCapture>
void writeDatabase(ForEachCapture&& each, OutputFile& out, StackFrames& stacks,
                   const InstructionResolver& instructions = {}, std::vector<std::string>* notes = nullptr) {
  SqliteDatabase db(out.temporaryPath());
  out.checkOpenedElsewhere();
  db.exec("PRAGMA journal_mode=OFF");
  db.exec("PRAGMA synchronous=OFF");
  db.exec("BEGIN");
  db.exec(kSqliteSchema);
  StringTable strings(db);
  auto* process = db.prepare("INSERT INTO processes(id, pid, rank, label, command) VALUES(?, ?, ?, ?, ?)");
  auto* thread = db.prepare("INSERT INTO threads(process_id, thread, os_tid, name) VALUES(?, ?, ?, ?)");
  auto* call = db.prepare(
      "INSERT INTO api_calls(process_id, thread, function_id, begin_ns, end_ns, result, depth, call_index) "
      "VALUES(?, ?, ?, ?, ?, ?, ?, ?)");
  auto* op = db.prepare(
      "INSERT INTO device_ops(process_id, kind, name_id, queue_id, groups_x, groups_y, groups_z, group_size_x, "
      "group_size_y, group_size_z, bytes, submit_ns, start_ns, end_ns, level, operation_id, id, hal_dispatch_id, "
      "hal_submission_id, direction, thread, call_index, stack) "
      "VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  auto* frame = db.prepare(
      "INSERT INTO frames(id, name, function, module, offset, file, line, inlined) VALUES(?, ?, ?, ?, ?, ?, ?, ?)");
  auto* stackFrame = db.prepare("INSERT INTO stack_frames(process_id, stack, depth, frame_id) VALUES(?, ?, ?, ?)");
  auto* sample = db.prepare(
      "INSERT INTO instruction_samples(process_id, device, kernel, module, address, offset, instruction, file, line, "
      "reason, count) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  auto* counterSet = db.prepare(
      "INSERT INTO counter_sets(id, process_id, set_id, device, source, metric_group, pass, passes) "
      "VALUES(?, ?, ?, ?, ?, ?, ?, ?)");
  auto* counterDef = db.prepare(
      "INSERT INTO counter_set_counters(counter_set_id, position, name, units, type, block, description) "
      "VALUES(?, ?, ?, ?, ?, ?, ?)");
  auto* counterValue =
      db.prepare("INSERT INTO counters(device_op_id, counter_set_id, counter, value, units) VALUES(?, ?, ?, ?, ?)");
  auto* counterNote =
      db.prepare("INSERT INTO counter_notes(process_id, device, counter, reason, pass) VALUES(?, ?, ?, ?, ?)");
  auto* metric = db.prepare(
      "INSERT INTO device_metrics(process_id, device, source, metric, units, cumulative, time_ns, value) "
      "VALUES(?, ?, ?, ?, ?, ?, ?, ?)");
  int64_t counterSetIds = 0;  // counter_sets rows before this capture's
  size_t framesWritten = 0;
  int64_t processId = 0;
  int64_t opIds = 0;  // device_ops ids before this capture's
  each([&](const Capture& c, const DeviceWork& work, const OpBatches& batches) {
    ++processId;
    std::string command;
    for (const auto& a : c.process().arguments) command += (command.empty() ? "" : " ") + a;
    db.bind(process, 1, processId);
    db.bind(process, 2, c.process().pid);
    if (c.process().rank >= 0) db.bind(process, 3, c.process().rank);
    else db.bindNull(process, 3);
    db.bind(process, 4, c.label());
    db.bind(process, 5, command);
    db.step(process);
    for (const auto& [id, t] : c.threads()) {
      db.bind(thread, 1, processId);
      db.bind(thread, 2, id);
      db.bind(thread, 3, t.osTid);
      db.bind(thread, 4, t.name);
      db.step(thread);
    }
    std::unordered_map<uint32_t, int64_t> functionIds;
    c.forEachCall([&](const ApiCall& a) {
      auto it = functionIds.find(a.function);
      if (it == functionIds.end()) it = functionIds.emplace(a.function, strings.id(c.functionName(a.function))).first;
      db.bind(call, 1, processId);
      db.bind(call, 2, a.thread);
      db.bind(call, 3, it->second);
      db.bind(call, 4, a.beginNs);
      db.bindPair(call, 5, a.finished, a.endNs, a.result);
      db.bind(call, 7, a.depth);
      db.bind(call, 8, static_cast<int64_t>(a.beginIndex));
      db.step(call);
    });
    // Counter sets (a row each, numbered across captures), what was not
    // collected, then each measured operation's values after its row.
    DispatchCounters counters(loadCounters(c));
    std::unordered_map<uint32_t, int64_t> setRows;
    for (const auto& [id, set] : counters.counters().sets) {
      int64_t row = ++counterSetIds;
      setRows[id] = row;
      db.bind(counterSet, 1, row);
      db.bind(counterSet, 2, processId);
      db.bind(counterSet, 3, id);
      db.bind(counterSet, 4, set.device);
      db.bind(counterSet, 5, set.source);
      db.bind(counterSet, 6, set.group);
      db.bind(counterSet, 7, set.pass);
      db.bind(counterSet, 8, set.passes);
      db.step(counterSet);
      for (size_t i = 0; i < set.counters.size(); ++i) {
        const CounterInfo& def = set.counters[i];
        db.bind(counterDef, 1, row);
        db.bind(counterDef, 2, static_cast<int64_t>(i));
        db.bind(counterDef, 3, def.name);
        db.bind(counterDef, 4, def.units);
        const char* types[] = {"unsigned", "signed", "real", "boolean"};
        db.bind(counterDef, 5, std::string_view(types[std::min<size_t>(static_cast<size_t>(def.type), 3)]));
        db.bind(counterDef, 6, def.block);
        db.bind(counterDef, 7, def.description);
        db.step(counterDef);
      }
    }
    for (const auto& n : counters.counters().notes) {
      db.bind(counterNote, 1, processId);
      if (n.device == ~0u) db.bindNull(counterNote, 2);
      else db.bind(counterNote, 2, n.device);
      db.bind(counterNote, 3, n.counter);
      db.bind(counterNote, 4, n.reason);
      db.bind(counterNote, 5, n.pass);
      db.step(counterNote);
    }
    std::unordered_map<uint64_t, int64_t> queueIds;
    size_t index = 0;
    batches([&](std::span<const DeviceOp> ops) {
      for (const DeviceOp& o : ops) {
        auto [q, added] = queueIds.try_emplace(o.queue);
        if (added) q->second = strings.id(work.queueName(o.queue));
        db.bind(op, 1, processId);
        db.bind(op, 2, opKindText(o.kind));
        db.bind(op, 3, strings.idOfStored(o.name));
        db.bind(op, 4, q->second);
        for (int i = 0; i < 3; ++i) {
          db.bind(op, 5 + i, o.groupCount[i]);
          db.bind(op, 8 + i, o.groupSize[i]);
        }
        db.bind(op, 11, static_cast<int64_t>(o.bytes));
        db.bind(op, 12, o.submitNs);
        db.bindPair(op, 13, o.timed, o.startNs, o.endNs);
        db.bind(op, 15, operationLevel(o));
        if (o.operation.empty()) db.bindNull(op, 16);
        else db.bind(op, 16, strings.idOfStored(o.operation));
        db.bind(op, 17, opIds + static_cast<int64_t>(index) + 1);
        db.bindPair(op, 18, o.hal != nullptr, opIds + static_cast<int64_t>(o.hal ? o.hal->dispatch : 0) + 1,
                    opIds + static_cast<int64_t>(o.hal ? o.hal->submission : 0) + 1);
        if (o.kind == schema::DeviceOpKind::COPY) db.bind(op, 20, directionName(o.direction));
        else db.bindNull(op, 20);
        if (o.appendIndex != ~uint64_t{0}) {
          db.bind(op, 21, o.thread);
          db.bind(op, 22, static_cast<int64_t>(o.appendIndex));
        } else {
          db.bindNull(op, 21);
          db.bindNull(op, 22);
        }
        if (o.stack) db.bind(op, 23, o.stack);
        else db.bindNull(op, 23);
        db.step(op);
        ++index;
        if (const CounterSetInfo* set = counters.setOf(o)) {
          for (size_t i = 0; i < set->counters.size(); ++i) {
            db.bind(counterValue, 1, opIds + static_cast<int64_t>(index));
            db.bind(counterValue, 2, setRows.at(set->id));
            db.bind(counterValue, 3, set->counters[i].name);
            db.bindNumber(counterValue, 4, set->counters[i].value(o.counterValues[i]));
            db.bind(counterValue, 5, set->counters[i].units);
            db.step(counterValue);
          }
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
          db.bind(metric, 1, processId);
          db.bind(metric, 2, series.device);
          db.bind(metric, 3, series.source);
          db.bind(metric, 4, series.metrics[m].name);
          db.bind(metric, 5, series.metrics[m].units);
          db.bind(metric, 6, series.metrics[m].cumulative ? 1 : 0);
          db.bind(metric, 7, series.times[i]);
          db.bindNumber(metric, 8, v);
          db.step(metric);
        }
    if (notes)
      for (auto& p : counters.problems(c.path())) notes->push_back(std::move(p));
    // Its stacks, root first, and the frames not written before.
    stacks.beginCapture();
    for (const auto& [id, pcs] : work.stacks) {
      const auto& frames = stacks.of(work, id);
      for (; framesWritten < stacks.frames().size(); ++framesWritten) {
        const NamedFrame& f = stacks.frames()[framesWritten];
        db.bind(frame, 1, static_cast<int64_t>(framesWritten) + 1);
        db.bind(frame, 2, f.text());
        auto textOrNull = [&](int column, const std::string& s) {
          if (s.empty()) db.bindNull(frame, column);
          else db.bind(frame, column, s);
        };
        textOrNull(3, f.function);
        textOrNull(4, f.module);
        db.bind(frame, 5, static_cast<int64_t>(f.offset));
        textOrNull(6, f.file);
        if (f.file.empty()) db.bindNull(frame, 7);
        else db.bind(frame, 7, f.line);
        db.bind(frame, 8, f.inlined ? 1 : 0);
        db.step(frame);
      }
      for (size_t depth = 0; depth < frames.size(); ++depth) {
        db.bind(stackFrame, 1, processId);
        db.bind(stackFrame, 2, id);
        db.bind(stackFrame, 3, static_cast<int64_t>(depth));
        db.bind(stackFrame, 4, static_cast<int64_t>(frames[depth]) + 1);
        db.step(stackFrame);
      }
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
          for (size_t k = 0; k < counts.size() && k < samples.reasons.size(); ++k) {
            if (!counts[k]) continue;
            db.bind(sample, 1, processId);
            db.bind(sample, 2, static_cast<int64_t>(code.device));
            db.bind(sample, 3, std::string_view(code.kernel));
            db.bind(sample, 4, static_cast<int64_t>(code.module));
            db.bind(sample, 5, static_cast<int64_t>(code.address));
            db.bind(sample, 6, static_cast<int64_t>(offset));
            db.bind(sample, 7, std::string_view(text));
            if (!named.empty() && !named.front().file.empty()) {
              db.bind(sample, 8, std::string_view(named.front().file));
              db.bind(sample, 9, static_cast<int64_t>(named.front().line));
            } else {
              db.bindNull(sample, 8);
              db.bindNull(sample, 9);
            }
            db.bind(sample, 10, std::string_view(samples.reasons[k]));
            db.bind(sample, 11, static_cast<int64_t>(counts[k]));
            db.step(sample);
          }
        });
  });
  db.exec("COMMIT");
  db.close();
}

}  // namespace

// The captures as one database in `out`'s temporary file, in one
// transaction. The file is the export's own until it is renamed into place,
// so it goes without a journal or syncs (commit() syncs it once).
void writeSqlite(const std::vector<LoadedCapture>& loaded, OutputFile& out, const FrameResolver& resolve) {
  StackFrames stacks(resolve);
  writeDatabase(
      [&](const auto& write) {
        for (const auto& lc : loaded)
          write(*lc.capture, lc.work, [&](const auto& visit) { visit(std::span<const DeviceOp>(lc.work.ops)); });
      },
      out, stacks);
}

void writeSqlite(std::span<const Capture* const> captures, OutputFile& out, std::vector<std::string>& notes,
                 const FrameResolver& resolve, const InstructionResolver& instructions) {
  StackFrames stacks(resolve);
  // Each capture's work (its names) lives to the end; its operations do not.
  std::vector<std::unique_ptr<DeviceWork>> works;
  writeDatabase(
      [&](const auto& write) {
        for (const Capture* c : captures) {
          auto& work = *works.emplace_back(std::make_unique<DeviceWork>());
          write(*c, work, [&](const auto& visit) { visitDeviceWork(*c, work, true, visit); });
          notes.insert(notes.end(), work.notes.begin(), work.notes.end());
          auto problems = stacks.takeProblems();
          notes.insert(notes.end(), problems.begin(), problems.end());
        }
      },
      out, stacks, instructions, &notes);
}

}  // namespace gtap::readers
