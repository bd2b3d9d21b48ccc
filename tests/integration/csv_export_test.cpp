// gtap export --format=csv: a folder of CSV files holding the SQLite export's
// tables, parsed back and compared with the database row by row.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "process.h"
#include "sqlite_query.h"

namespace gtap::test {
namespace {

using Row = std::vector<std::string>;

// RFC 4180 records: quoted fields may hold commas, quotes (doubled) and line
// breaks. A field that was quoted is marked by `quoted` (to tell "" from an
// empty field, which is NULL).
struct Csv {
  std::vector<Row> rows;
  std::vector<std::vector<bool>> quoted;
};

Csv parseCsv(const std::string& text) {
  Csv csv;
  Row row;
  std::vector<bool> rowQuoted;
  std::string field;
  bool inQuotes = false, wasQuoted = false;
  auto endField = [&] {
    row.push_back(field);
    rowQuoted.push_back(wasQuoted);
    field.clear();
    wasQuoted = false;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (inQuotes) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        inQuotes = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      EXPECT_TRUE(field.empty()) << "a quote inside an unquoted field at byte " << i;
      inQuotes = wasQuoted = true;
    } else if (c == ',') {
      endField();
    } else if (c == '\n') {
      endField();
      csv.rows.push_back(std::move(row));
      csv.quoted.push_back(std::move(rowQuoted));
      row.clear();
      rowQuoted.clear();
    } else {
      field += c;
    }
  }
  EXPECT_FALSE(inQuotes) << "the file ends inside a quoted field";
  EXPECT_TRUE(row.empty() && field.empty()) << "the last line has no line break";
  return csv;
}

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Database {
  sqlite3* db = nullptr;
  explicit Database(const std::string& path) {
    EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK) << path;
  }
  ~Database() { sqlite3_close(db); }
};

// A table's rows as text, NULL as nullopt-like marker "\x01NULL".
std::vector<Row> tableRows(sqlite3* db, const std::string& table, std::vector<std::string>& columns) {
  sqlite3_stmt* stmt = nullptr;
  std::string sql = "SELECT * FROM " + table + " ORDER BY rowid";
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  columns.clear();
  for (int i = 0; i < sqlite3_column_count(stmt); ++i) columns.push_back(sqlite3_column_name(stmt, i));
  std::vector<Row> rows;
  while (sqlite3_step(stmt) == SQLITE_ROW) {
    Row row;
    for (int i = 0; i < sqlite3_column_count(stmt); ++i) {
      if (sqlite3_column_type(stmt, i) == SQLITE_NULL) row.push_back("\x01NULL");
      else row.push_back(reinterpret_cast<const char*>(sqlite3_column_text(stmt, i)));
    }
    rows.push_back(std::move(row));
  }
  sqlite3_finalize(stmt);
  return rows;
}

std::vector<std::string> databaseTables(sqlite3* db) {
  std::vector<std::string> names;
  for (const auto& [name, n] : queryPairs(db, "SELECT name, 0 FROM sqlite_master WHERE type = 'table' ORDER BY name"))
    names.push_back(name);
  return names;
}

class CsvExport : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(freshDirectory("csv-export"));
    ze_ = new std::string(*dir_ + "/ze.gtap");
    hsa_ = new std::string(*dir_ + "/hsa.gtap");
    ASSERT_EQ(runGtap({"run", "--sim", "-q", "-m", "api,kernels,memory,stacks", "-o", *ze_, "--",
                    workload("ze_pipeline")}).exitCode, 0);
    ASSERT_EQ(runGtap({"run", "--sim", "-q", "-m", "api,kernels,memory,stacks", "-o", *hsa_, "--",
                    workload("hsa_pipeline")}).exitCode, 0);
  }
  static std::string* dir_;
  static std::string* ze_;
  static std::string* hsa_;
};
std::string* CsvExport::dir_;
std::string* CsvExport::ze_;
std::string* CsvExport::hsa_;

// Every table the database has rows in is a CSV file with the same columns
// and the same rows in the same order (NULL an empty field, text as stored);
// the tables every capture has are files even when empty.
TEST_F(CsvExport, TablesEqualTheSqliteExportRowByRow) {
  std::string out = *dir_ + "/tables", db = *dir_ + "/all.db";
  auto csv = runGtap({"export", "--format=csv", "-o", out, *ze_, *hsa_});
  ASSERT_EQ(csv.exitCode, 0) << csv.err;
  EXPECT_NE(csv.err.find("gtap export: wrote " + out + "/ ("), std::string::npos) << csv.err;
  ASSERT_EQ(runGtap({"export", "--format=sqlite", "-o", db, *ze_, *hsa_}).exitCode, 0);
  Database database(db);
  auto tables = databaseTables(database.db);
  ASSERT_GE(tables.size(), 10u);
  int compared = 0;
  for (const auto& table : tables) {
    std::vector<std::string> columns;
    auto expected = tableRows(database.db, table, columns);
    std::string path = out + "/" + table + ".csv";
    bool always = table == "processes" || table == "threads" || table == "strings" || table == "api_calls" ||
                  table == "device_ops" || table == "allocations";
    if (!std::filesystem::exists(path)) {
      EXPECT_TRUE(expected.empty() && !always) << table << " has rows but no CSV file";
      continue;
    }
    Csv parsed = parseCsv(readFile(path));
    ASSERT_FALSE(parsed.rows.empty()) << path << " has no header";
    EXPECT_EQ(parsed.rows[0], columns) << table;
    ASSERT_EQ(parsed.rows.size() - 1, expected.size()) << table;
    for (size_t r = 0; r < expected.size(); ++r) {
      const Row& got = parsed.rows[r + 1];
      ASSERT_EQ(got.size(), columns.size()) << table << " row " << r + 1;
      for (size_t c = 0; c < columns.size(); ++c) {
        const std::string& want = expected[r][c];
        if (want == "\x01NULL") {
          EXPECT_TRUE(got[c].empty() && !parsed.quoted[r + 1][c]) << table << "." << columns[c] << " row " << r + 1;
        } else if (sqlite3_strglob("*[.eE]*", want.c_str()) == 0 && table == "device_metrics") {
          EXPECT_DOUBLE_EQ(std::stod(got[c]), std::stod(want)) << table << "." << columns[c];
        } else {
          EXPECT_EQ(got[c], want) << table << "." << columns[c] << " row " << r + 1;
        }
      }
    }
    ++compared;
  }
  for (const char* t : {"processes", "threads", "strings", "api_calls", "device_ops", "allocations", "frames",
                        "stack_frames"})
    EXPECT_TRUE(std::filesystem::exists(out + "/" + t + ".csv")) << t;
  EXPECT_GE(compared, 8);
  // What the rows say: both processes, every allocation joined to its call.
  Database check(db);
  EXPECT_EQ(queryInt(check.db, "SELECT COUNT(*) FROM processes"), 2);
  EXPECT_GT(queryInt(check.db, "SELECT COUNT(*) FROM allocations WHERE event = 'allocate'"), 0);
  EXPECT_EQ(queryInt(check.db, "SELECT COUNT(*) FROM allocations a LEFT JOIN strings s ON s.id = a.function_id "
                               "WHERE s.string IS NULL"),
            0);
}

// One table on standard output is the file's own bytes.
TEST_F(CsvExport, OneTableOnStandardOutputIsItsFile) {
  std::string out = *dir_ + "/one";
  ASSERT_EQ(runGtap({"export", "--format=csv", "-o", out, *ze_}).exitCode, 0);
  for (const char* table : {"api_calls", "device_ops", "allocations"}) {
    auto piped = runGtap({"export", "--format=csv", "-o", "-", "--table", table, *ze_});
    ASSERT_EQ(piped.exitCode, 0) << piped.err;
    EXPECT_EQ(piped.out, readFile(out + "/" + table + ".csv")) << table;
  }
  // --table with a folder writes only those.
  std::string some = *dir_ + "/some";
  ASSERT_EQ(runGtap({"export", "--format=csv", "-o", some, "--table", "strings", "--table", "api_calls", *ze_}).exitCode,
            0);
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(some)) files.push_back(e.path().filename());
  std::sort(files.begin(), files.end());
  EXPECT_EQ(files, (std::vector<std::string>{"api_calls.csv", "strings.csv"}));
}

// Nothing the user had is replaced without --force, nothing is written
// through a link, and a wrong request says what is wrong.
TEST_F(CsvExport, RefusesWhatItMustNotWrite) {
  std::string out = *dir_ + "/kept";
  ASSERT_EQ(runGtap({"export", "--format=csv", "-o", out, *ze_}).exitCode, 0);
  std::string before = readFile(out + "/api_calls.csv");
  size_t written = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(out)) ++written;
  {
    std::ofstream mark(out + "/device_ops.csv");
    mark << "mine\n";
  }
  auto again = runGtap({"export", "--format=csv", "-o", out, *hsa_});
  EXPECT_EQ(again.exitCode, 2);
  EXPECT_NE(again.err.find("--force"), std::string::npos) << again.err;
  EXPECT_EQ(readFile(out + "/device_ops.csv"), "mine\n");
  EXPECT_EQ(readFile(out + "/api_calls.csv"), before);
  size_t entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(out)) {
    ++entries;
    EXPECT_EQ(e.path().extension(), ".csv") << "left behind: " << e.path();
  }
  EXPECT_EQ(entries, written);
  auto forced = runGtap({"export", "--format=csv", "--force", "-o", out, *hsa_});
  ASSERT_EQ(forced.exitCode, 0) << forced.err;
  EXPECT_NE(readFile(out + "/device_ops.csv"), "mine\n");
  EXPECT_NE(readFile(out + "/api_calls.csv"), before);

  // A link in the folder's place is refused, and what it points to untouched.
  std::string target = *dir_ + "/elsewhere", link = *dir_ + "/link";
  std::filesystem::create_directory(target);
  std::filesystem::create_directory_symlink(target, link);
  auto linked = runGtap({"export", "--format=csv", "-o", link, *ze_});
  EXPECT_EQ(linked.exitCode, 2);
  EXPECT_NE(linked.err.find("symbolic link"), std::string::npos) << linked.err;
  EXPECT_TRUE(std::filesystem::is_empty(target));
  // A regular file in its place.
  auto file = runGtap({"export", "--format=csv", "-o", *ze_, *hsa_});
  EXPECT_EQ(file.exitCode, 2);
  EXPECT_NE(file.err.find("not a folder"), std::string::npos) << file.err;

  auto noTable = runGtap({"export", "--format=csv", "-o", "-", *ze_});
  EXPECT_EQ(noTable.exitCode, 2);
  EXPECT_NE(noTable.err.find("--table"), std::string::npos) << noTable.err;
  auto unknown = runGtap({"export", "--format=csv", "-o", "-", "--table", "calls", *ze_});
  EXPECT_EQ(unknown.exitCode, 2);
  EXPECT_NE(unknown.err.find("no table calls; the tables are processes"), std::string::npos) << unknown.err;
  EXPECT_EQ(runGtap({"export", "--format=jsonl", "-o", "-", "--table", "api_calls", *ze_}).exitCode, 2);

  // A capture that cannot be read leaves no folder behind.
  std::string bad = *dir_ + "/bad.gtap", none = *dir_ + "/never";
  {
    std::ofstream b(bad);
    b << "not a capture";
  }
  auto unreadable = runGtap({"export", "--format=csv", "-o", none, bad});
  EXPECT_NE(unreadable.exitCode, 0);
  EXPECT_FALSE(std::filesystem::exists(none));
}

// The report filters narrow the export: --pid keeps one process, --kernel
// one kernel's operations.
TEST_F(CsvExport, FiltersNarrowTheTables) {
  auto processes = runGtap({"export", "--format=csv", "-o", "-", "--table", "processes", *ze_, *hsa_});
  ASSERT_EQ(processes.exitCode, 0) << processes.err;
  Csv all = parseCsv(processes.out);
  ASSERT_EQ(all.rows.size(), 3u);
  std::string hsaPid = all.rows[2][1];
  auto one = runGtap({"export", "--format=csv", "-o", "-", "--table", "processes", "--pid", hsaPid, *ze_, *hsa_});
  ASSERT_EQ(one.exitCode, 0) << one.err;
  Csv kept = parseCsv(one.out);
  ASSERT_EQ(kept.rows.size(), 2u);
  EXPECT_EQ(kept.rows[1][1], hsaPid);

  auto ops = runGtap({"export", "--format=csv", "-o", "-", "--table", "device_ops", *ze_});
  auto strings = runGtap({"export", "--format=csv", "-o", "-", "--table", "strings", *ze_});
  ASSERT_EQ(ops.exitCode, 0);
  std::map<std::string, std::string> names;
  for (const auto& r : parseCsv(strings.out).rows) names[r[0]] = r[1];
  std::map<std::string, int> kernels;
  for (const auto& r : parseCsv(ops.out).rows)
    if (r[2] == "kernel") ++kernels[names[r[3]]];
  ASSERT_GE(kernels.size(), 2u);
  std::string kernel = kernels.begin()->first;
  auto narrowed = runGtap({"export", "--format=csv", "-o", "-", "--table", "device_ops", "--kernel", kernel, *ze_});
  ASSERT_EQ(narrowed.exitCode, 0) << narrowed.err;
  Csv only = parseCsv(narrowed.out);
  EXPECT_EQ(static_cast<int>(only.rows.size()) - 1, kernels.begin()->second);
  EXPECT_EQ(runGtap({"export", "--format=csv", "-o", "-", "--table", "processes", "--pid", "1", *ze_}).exitCode, 2);
}

// Named ranges are rows of every record export: as many as gtap info counts,
// the same in JSON Lines, CSV and SQLite, the one left open marked.
TEST_F(CsvExport, RangesAreRowsOfEveryRecordExport) {
  std::string file = *dir_ + "/ranges.gtap", db = *dir_ + "/ranges.db";
  ASSERT_EQ(runGtap({"run", "--sim", "-q", "-m", "api,kernels", "-o", file, "--", workload("ze_ranges"),
                     "--leave-open"}).exitCode, 0);
  auto info = runGtap({"info", "--format=jsonl", file});
  ASSERT_EQ(info.exitCode, 0) << info.err;
  auto capture = nlohmann::json::parse(info.out.substr(0, info.out.find('\n')));
  int64_t ranges = capture["ranges"], open = capture["ranges_open_at_end"];
  ASSERT_GT(ranges, 2);
  ASSERT_EQ(open, 1);

  auto jsonl = runGtap({"export", "--format=jsonl", "-o", "-", file});
  ASSERT_EQ(jsonl.exitCode, 0) << jsonl.err;
  int64_t rows = 0, openRows = 0;
  std::set<std::string> names;
  Counts perName;
  std::istringstream lines(jsonl.out);
  for (std::string line; std::getline(lines, line);) {
    auto j = nlohmann::json::parse(line);
    if (j["type"] != "range") continue;
    ++rows;
    openRows += j["open_at_end"].get<bool>();
    names.insert(j["name"].get<std::string>());
    ++perName[j["name"].get<std::string>()];
    EXPECT_GE(j["end_ns"].get<int64_t>(), j["begin_ns"].get<int64_t>()) << line;
  }
  EXPECT_EQ(rows, ranges);
  EXPECT_EQ(openRows, open);
  EXPECT_TRUE(names.count("outer") && names.count("inner"));

  auto csv = runGtap({"export", "--format=csv", "-o", "-", "--table", "ranges", file});
  ASSERT_EQ(csv.exitCode, 0) << csv.err;
  Csv table = parseCsv(csv.out);
  ASSERT_FALSE(table.rows.empty());
  EXPECT_EQ(static_cast<int64_t>(table.rows.size()) - 1, ranges);
  ASSERT_EQ(runGtap({"export", "--format=sqlite", "-o", db, file}).exitCode, 0);
  Database database(db);
  EXPECT_EQ(queryInt(database.db, "SELECT COUNT(*) FROM ranges"), ranges);
  EXPECT_EQ(queryInt(database.db, "SELECT COUNT(*) FROM ranges WHERE open_at_end = 1"), open);
  // The same names as many times: each a string of the database.
  EXPECT_EQ(queryCounts(database.db, "SELECT s.string, COUNT(*) FROM ranges r JOIN strings s ON s.id = r.name_id "
                                     "GROUP BY s.string"),
            perName);
}

}  // namespace
}  // namespace gtap::test
