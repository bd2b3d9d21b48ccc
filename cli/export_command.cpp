// gtap export: a timeline as Chrome Trace Event JSON, a Perfetto trace, JSON
// Lines of every API call and device operation, or the same calls and
// operations as an SQLite database (docs/export.md has its schema).
#include <sqlite3.h>

#include <cstring>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <unordered_map>

#include "commands.h"
#include "exit_status.h"
#include "gtap/readers/output_file.h"
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

const char* levelName(const readers::DeviceOp& op) {
  if (op.recordedBy != schema::Api::IREE_HAL) return "device";
  return op.operation == "host_execution" ? "host" : "hal";
}

// A HAL-level record's method, thread and call (the API call that issued it:
// the thread's event index of its begin), command buffer, the buffers it
// binds or touches, and the semaphore values it waits for and signals.
void writeHalOperation(const readers::DeviceOp& op, std::ostream& out) {
  out << ",\"operation\":\"" << readers::jsonEscape(op.operation) << "\",\"thread\":" << op.thread
      << ",\"call_index\":" << op.appendIndex << ",\"command_buffer\":" << op.list << ",\"buffers\":[";
  for (size_t i = 0; i < op.bindings.size(); ++i)
    out << (i ? "," : "") << "[" << op.bindings[i].buffer << "," << op.bindings[i].offset << ","
        << op.bindings[i].length << "]";
  auto semaphores = [&](const char* key, const std::vector<readers::DeviceOp::SemaphoreValue>& values) {
    out << "],\"" << key << "\":[";
    for (size_t i = 0; i < values.size(); ++i)
      out << (i ? "," : "") << "[" << values[i].semaphore << "," << values[i].value << "]";
  };
  semaphores("waits", op.waits);
  semaphores("signals", op.signals);
  out << "]";
}

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
    for (size_t index = 0; index < lc.work.ops.size(); ++index) {
      const auto& op = lc.work.ops[index];
      out << "{\"type\":\"device\",\"process\":\"" << process << "\",\"pid\":" << c.process().pid
          << ",\"index\":" << index << ",\"kind\":\"" << readers::opKindName(op.kind) << "\",\"name\":\"" << readers::jsonEscape(op.name)
          << "\",\"queue\":\"" << readers::jsonEscape(lc.work.queueName(op.queue)) << "\",\"groups\":["
          << op.groupCount[0] << "," << op.groupCount[1] << "," << op.groupCount[2] << "],\"group_size\":["
          << op.groupSize[0] << "," << op.groupSize[1] << "," << op.groupSize[2] << "],\"bytes\":" << op.bytes;
      if (op.kind == schema::DeviceOpKind::COPY) out << ",\"direction\":\"" << readers::directionName(op.direction) << "\"";
      out << ",\"submit_ns\":" << op.submitNs;
      if (op.timed) out << ",\"start_ns\":" << op.startNs << ",\"end_ns\":" << op.endNs;
      else out << ",\"untimed\":\"" << readers::jsonEscape(op.note) << "\"";
      out << ",\"level\":\"" << levelName(op) << "\"";
      if (op.recordedBy == schema::Api::IREE_HAL) writeHalOperation(op, out);
      // The join of HAL and device dispatches, by the index of the other line.
      if (op.halDispatch != readers::DeviceOp::kNone)
        out << ",\"hal_dispatch\":" << op.halDispatch << ",\"hal_submission\":" << op.halSubmission;
      if (op.recordedBy == schema::Api::IREE_HAL && op.operation == "dispatch")
        out << ",\"device_dispatches\":" << op.deviceDispatches;
      out << "}\n";
    }
  }
}

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
                       result INTEGER, depth INTEGER);
CREATE TABLE device_ops(id INTEGER PRIMARY KEY, process_id INTEGER REFERENCES processes, kind TEXT,
                        name_id INTEGER REFERENCES strings, queue_id INTEGER REFERENCES strings,
                        groups_x INTEGER, groups_y INTEGER, groups_z INTEGER,
                        group_size_x INTEGER, group_size_y INTEGER, group_size_z INTEGER, bytes INTEGER,
                        submit_ns INTEGER, start_ns INTEGER, end_ns INTEGER, level TEXT,
                        operation_id INTEGER REFERENCES strings, hal_dispatch_id INTEGER REFERENCES device_ops,
                        hal_submission_id INTEGER REFERENCES device_ops, direction TEXT);
CREATE VIEW api_summary AS
  SELECT s.string AS function, COUNT(*) AS count, SUM(a.end_ns - a.begin_ns) AS total_ns
  FROM api_calls a JOIN strings s ON s.id = a.function_id GROUP BY a.function_id;
)";

// What SQLite refused, in its own words.
struct SqliteError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

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
  void bind(sqlite3_stmt* s, int column, const std::string& value) {
    check(sqlite3_bind_text64(s, column, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8));
  }
  void bindNull(sqlite3_stmt* s, int column) { check(sqlite3_bind_null(s, column)); }
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
  int64_t id(const std::string& s) {
    auto [it, added] = ids_.try_emplace(s, static_cast<int64_t>(ids_.size()) + 1);
    if (added) {
      db_.bind(insert_, 1, it->second);
      db_.bind(insert_, 2, s);
      db_.step(insert_);
    }
    return it->second;
  }

 private:
  SqliteDatabase& db_;
  sqlite3_stmt* insert_;
  std::unordered_map<std::string, int64_t> ids_;
};

// The captures as one database in `out`'s temporary file, in one
// transaction. The file is the export's own until it is renamed into place,
// so it goes without a journal or syncs (commit() syncs it once).
void writeSqlite(const std::vector<readers::LoadedCapture>& loaded, readers::OutputFile& out) {
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
      "INSERT INTO api_calls(process_id, thread, function_id, begin_ns, end_ns, result, depth) "
      "VALUES(?, ?, ?, ?, ?, ?, ?)");
  auto* op = db.prepare(
      "INSERT INTO device_ops(process_id, kind, name_id, queue_id, groups_x, groups_y, groups_z, group_size_x, "
      "group_size_y, group_size_z, bytes, submit_ns, start_ns, end_ns, level, operation_id, id, hal_dispatch_id, "
      "hal_submission_id, direction) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  int64_t processId = 0;
  int64_t opIds = 0;  // device_ops ids before this capture's
  for (const auto& lc : loaded) {
    const auto& c = *lc.capture;
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
    c.forEachCall([&](const readers::ApiCall& a) {
      auto it = functionIds.find(a.function);
      if (it == functionIds.end()) it = functionIds.emplace(a.function, strings.id(c.functionName(a.function))).first;
      db.bind(call, 1, processId);
      db.bind(call, 2, a.thread);
      db.bind(call, 3, it->second);
      db.bind(call, 4, a.beginNs);
      if (a.finished) {
        db.bind(call, 5, a.endNs);
        db.bind(call, 6, a.result);
      } else {
        db.bindNull(call, 5);
        db.bindNull(call, 6);
      }
      db.bind(call, 7, a.depth);
      db.step(call);
    });
    for (size_t index = 0; index < lc.work.ops.size(); ++index) {
      const auto& o = lc.work.ops[index];
      db.bind(op, 1, processId);
      db.bind(op, 2, readers::opKindName(o.kind));
      db.bind(op, 3, strings.id(o.name));
      db.bind(op, 4, strings.id(lc.work.queueName(o.queue)));
      for (int i = 0; i < 3; ++i) {
        db.bind(op, 5 + i, o.groupCount[i]);
        db.bind(op, 8 + i, o.groupSize[i]);
      }
      db.bind(op, 11, static_cast<int64_t>(o.bytes));
      db.bind(op, 12, o.submitNs);
      if (o.timed) {
        db.bind(op, 13, o.startNs);
        db.bind(op, 14, o.endNs);
      } else {
        db.bindNull(op, 13);
        db.bindNull(op, 14);
      }
      db.bind(op, 15, levelName(o));
      if (o.operation.empty()) db.bindNull(op, 16);
      else db.bind(op, 16, strings.id(o.operation));
      db.bind(op, 17, opIds + static_cast<int64_t>(index) + 1);
      if (o.halDispatch != readers::DeviceOp::kNone) {
        db.bind(op, 18, opIds + static_cast<int64_t>(o.halDispatch) + 1);
        db.bind(op, 19, opIds + static_cast<int64_t>(o.halSubmission) + 1);
      } else {
        db.bindNull(op, 18);
        db.bindNull(op, 19);
      }
      if (o.kind == schema::DeviceOpKind::COPY) db.bind(op, 20, readers::directionName(o.direction));
      else db.bindNull(op, 20);
      db.step(op);
    }
    opIds += static_cast<int64_t>(lc.work.ops.size());
  }
  db.exec("COMMIT");
  db.close();
}

// A text or protobuf export into `out`. Throws what the exporters throw; a
// failed write shows in the stream's state.
void writeTextOrProtobuf(const ExportOptions& o, const std::vector<readers::LoadedCapture>& loaded,
                         std::ostream& out) {
  if (o.format == "jsonl") {
    writeJsonLines(loaded, out);
  } else {
    auto timeline = readers::buildTimeline(loaded);
    if (o.format == "chrome") readers::writeChromeTrace(timeline, out);
    else readers::writePerfettoTrace(timeline, out);
  }
}

// The export on standard output; false (said on stderr) when that failed.
bool writeToStdout(const ExportOptions& o, const std::vector<readers::LoadedCapture>& loaded) {
  try {
    writeTextOrProtobuf(o, loaded, std::cout);
  } catch (const std::exception& e) {
    std::cerr << "gtap export: " << e.what() << "\n";
    return false;
  }
  std::cout.flush();
  if (!std::cout) {
    std::cerr << "gtap export: writing standard output failed\n";
    return false;
  }
  return true;
}

// Writes the export into `out` and puts it in place; the exit status (a
// failure said on stderr, the temporary file removed).
int writeExport(const ExportOptions& o, const std::vector<readers::LoadedCapture>& loaded, readers::OutputFile& out) {
  try {
    if (o.format == "sqlite") writeSqlite(loaded, out);
    else writeTextOrProtobuf(o, loaded, out.stream());
    out.commit();
  } catch (const readers::OutputError& e) {
    // A target that became one gtap will not write while the export ran.
    return reportOutputError("export", e, "give --force to replace it");
  } catch (const std::exception& e) {
    std::cerr << "gtap export: writing " << o.output << " failed: " << e.what() << "\n";
    return kExitError;
  }
  return kExitSuccess;
}

int exportTimeline(const ExportOptions& o) {
  if (o.format != "chrome" && o.format != "perfetto" && o.format != "jsonl" && o.format != "sqlite") {
    std::cerr << "gtap export: --format must be chrome, perfetto, jsonl or sqlite\n";
    return kExitUsage;
  }
  // "-": standard output, for a pipe (a database needs a file).
  bool toStdout = o.output == "-";
  if (toStdout && o.format == "sqlite") {
    std::cerr << "gtap export: an SQLite database needs a file (-o FILE), not standard output\n";
    return kExitUsage;
  }
  // Created before the captures are read, so that a target that cannot be
  // written is said at once; removed again on every failure below.
  std::optional<readers::OutputFile> out;
  if (!toStdout) {
    try {
      out.emplace(o.output, o.force);
    } catch (const readers::OutputError& e) {
      return reportOutputError("export", e, "give --force to replace it");
    }
  }
  auto opened = openCaptures(o.files, "export");
  if (opened.captures.empty()) return kExitError;
  reportNotes(opened, "export");
  auto loaded = loadDeviceWork(opened, "export");
  int status = toStdout ? (writeToStdout(o, loaded) ? kExitSuccess : kExitError) : writeExport(o, loaded, *out);
  return status == kExitSuccess && opened.failures ? kExitError : status;
}

}  // namespace

Action addExportCommand(CLI::App& app) {
  auto o = std::make_shared<ExportOptions>();
  auto* cmd = app.add_subcommand("export", "Write a timeline: Chrome JSON (Perfetto UI, speedscope), Perfetto protobuf, JSON Lines, or an SQLite database");
  cmd->add_option("files", o->files, "Capture files (several merge)")->required();
  cmd->add_option("--format", o->format, "chrome, perfetto, jsonl or sqlite")->required();
  cmd->add_option("-o,--output", o->output, "Output file; - for standard output (not sqlite)")->required();
  cmd->add_flag("--force", o->force, "Replace an existing regular output file (never a link, directory or device)");
  return [o] { return exportTimeline(*o); };
}

}  // namespace gtap::cli
