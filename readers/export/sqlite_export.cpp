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

#include "gtap/readers/record_export.h"
#include "record_tables.h"

namespace gtap::readers {

namespace {

// The views over the tables (record_tables.h has the tables). No index
// beyond the primary keys (and the one behind strings' UNIQUE): queries scan,
// and whoever queries one column often can add an index to the file.
constexpr const char* kSqliteViews = R"(
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
  void bindReal(sqlite3_stmt* s, int column, double value) { check(sqlite3_bind_double(s, column, value)); }
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

// The rows as inserts: a prepared statement per table, created from its
// columns.
class SqliteSink : public RecordSink {
 public:
  explicit SqliteSink(SqliteDatabase& db) : db_(db) {
    for (const RecordTableInfo& t : recordTables()) {
      std::string create = std::string("CREATE TABLE ") + t.name + "(";
      std::string insert = std::string("INSERT INTO ") + t.name + " VALUES(";
      for (size_t i = 0; i < t.columns.size(); ++i) {
        create += (i ? ", " : "") + std::string(t.columns[i].name);
        if (*t.columns[i].sqlType) create += std::string(" ") + t.columns[i].sqlType;
        insert += i ? ", ?" : "?";
      }
      db_.exec((create + ")").c_str());
      inserts_.push_back(db_.prepare((insert + ")").c_str()));
    }
    db_.exec(kSqliteViews);
  }
  void row(RecordTable table, std::span<const RecordValue> values) override {
    sqlite3_stmt* s = inserts_[static_cast<size_t>(table)];
    int column = 1;
    for (const RecordValue& v : values) {
      switch (v.kind) {
        case RecordValue::Kind::null: db_.bindNull(s, column); break;
        case RecordValue::Kind::integer: db_.bind(s, column, v.integer); break;
        case RecordValue::Kind::real: db_.bindReal(s, column, v.real); break;
        case RecordValue::Kind::text: db_.bind(s, column, v.text); break;
      }
      ++column;
    }
    db_.step(s);
  }

 private:
  SqliteDatabase& db_;
  std::vector<sqlite3_stmt*> inserts_;
};

// The database in `out`'s temporary file, in one transaction; `rows(sink)`
// gives its rows.
template <class Rows>
void writeDatabase(OutputFile& out, Rows&& rows) {
  SqliteDatabase db(out.temporaryPath());
  out.checkOpenedElsewhere();
  db.exec("PRAGMA journal_mode=OFF");
  db.exec("PRAGMA synchronous=OFF");
  db.exec("BEGIN");
  SqliteSink sink(db);
  rows(sink);
  db.exec("COMMIT");
  db.close();
}

}  // namespace

// The captures as one database in `out`'s temporary file, in one
// transaction. The file is the export's own until it is renamed into place,
// so it goes without a journal or syncs (commit() syncs it once).
void writeSqlite(const std::vector<LoadedCapture>& loaded, OutputFile& out, const FrameResolver& resolve) {
  writeDatabase(out, [&](RecordSink& sink) { writeRecordRows(loaded, sink, resolve); });
}

void writeSqlite(std::span<const Capture* const> captures, OutputFile& out, std::vector<std::string>& notes,
                 const std::function<FrameResolver()>& resolverForPart,
                 const std::function<InstructionResolver()>& instructionsForPart) {
  writeDatabase(out, [&](RecordSink& sink) {
    writeRecordRows(captures, sink, notes, resolverForPart, instructionsForPart);
  });
}

}  // namespace gtap::readers
