// gtap merge: one file for the captures of several processes, which every
// report reads as those captures: the same per-process kernels, API calls
// and exported rows as the files it was merged from; the output is written
// only when every input is a capture, and never replaces a file unasked.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "process.h"
#include "sqlite_query.h"

namespace gtap::test {
namespace {

ProcessResult gtap(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {gtapBinary()};
  argv.insert(argv.end(), args.begin(), args.end());
  return runProcess(argv);
}

TEST(Merge, AMergedFileReportsAsItsCaptures) {
  std::string dir = freshDirectory("merge");
  std::string ze = dir + "/rank-0.gtap", hsa = dir + "/rank-1.gtap", all = dir + "/all.gtap";
  ASSERT_EQ(gtap({"run", "--sim", "-q", "-m", "api,kernels,memory", "-o", ze, "--", workload("ze_pipeline")})
                .exitCode, 0);
  ASSERT_EQ(gtap({"run", "--sim", "-q", "-m", "api,kernels,memory", "-o", hsa, "--", workload("hsa_pipeline")})
                .exitCode, 0);
  auto merged = gtap({"merge", "-o", all, ze, hsa});
  ASSERT_EQ(merged.exitCode, 0) << merged.err;
  EXPECT_NE(merged.err.find("2 captures in " + all), std::string::npos) << merged.err;
  for (std::vector<std::string> report : {std::vector<std::string>{"kernels", "--per-process", "--format=csv"},
                                          {"api", "--format=csv"},
                                          {"memory", "--per-process", "--format=csv"},
                                          {"summary", "--format=jsonl"}}) {
    SCOPED_TRACE(report[0]);
    auto separate = report, together = report;
    separate.insert(separate.end(), {ze, hsa});
    together.push_back(all);
    auto a = gtap(separate), b = gtap(together);
    ASSERT_EQ(a.exitCode, 0) << a.err;
    ASSERT_EQ(b.exitCode, 0) << b.err;
    // The same rows; a merged member's file is named inside the merged file.
    std::string expected = std::regex_replace(a.out, std::regex(dir + "/(rank-[01]\\.gtap)"), all + "($1)");
    EXPECT_EQ(b.out, expected);
  }
  auto jsonl = gtap({"export", "--format=jsonl", "-o", "-", all});
  ASSERT_EQ(jsonl.exitCode, 0) << jsonl.err;
  size_t processes = 0;
  for (size_t at = jsonl.out.find("{\"type\":\"process\","); at != std::string::npos;
       at = jsonl.out.find("{\"type\":\"process\",", at + 1))
    ++processes;
  EXPECT_EQ(processes, 2u) << "ranks kept apart";
  // Replay takes one capture, and says why a merged file is not one.
  auto replay = gtap({"replay", all});
  EXPECT_NE(replay.exitCode, 0);
  EXPECT_NE(replay.err.find("a merged file of several captures"), std::string::npos) << replay.err;
}

TEST(Merge, NothingIsWrittenUnlessEveryInputIsACapture) {
  std::string dir = freshDirectory("merge-refused");
  std::string ze = dir + "/rank-0.gtap", all = dir + "/all.gtap";
  ASSERT_EQ(gtap({"run", "--sim", "-q", "-m", "api", "-o", ze, "--", workload("ze_vector_add"), "1", "64"}).exitCode, 0);
  std::string junk = dir + "/notes.txt";
  { std::ofstream(junk) << "not a capture"; }
  auto refused = gtap({"merge", "-o", all, ze, junk});
  EXPECT_EQ(refused.exitCode, 1) << refused.err;
  EXPECT_NE(refused.err.find(junk), std::string::npos) << refused.err;
  EXPECT_FALSE(std::filesystem::exists(all));
  ASSERT_EQ(gtap({"merge", "-o", all, ze}).exitCode, 0);
  auto again = gtap({"merge", "-o", all, ze});
  EXPECT_EQ(again.exitCode, 2) << again.err;
  EXPECT_EQ(gtap({"merge", "-o", all, "--force", ze, all}).exitCode, 2) << "an input is not the output";
  EXPECT_EQ(gtap({"merge", "-o", all, "--force", ze, ze}).exitCode, 0);
  EXPECT_EQ(gtap({"merge", ze}).exitCode, 2) << "-o is required";
}

}  // namespace
}  // namespace gtap::test

namespace gtap::test {
namespace {

// Captures of workloads on the simulated devices (API calls, kernels,
// memory and stacks) into one folder, in the order made.
struct Captures : std::vector<std::string> {
  explicit Captures(std::string dir) : dir(std::move(dir)) {}
  void add(const std::string& name, const std::vector<std::string>& program,
           const std::vector<std::string>& options = {}) {
    std::string f = dir + "/" + name + ".gtap";
    std::vector<std::string> argv = {"run", "--sim", "-q", "-m", "api,kernels,memory,stacks", "-o", f};
    argv.insert(argv.end(), options.begin(), options.end());
    argv.push_back("--");
    argv.insert(argv.end(), program.begin(), program.end());
    ASSERT_EQ(gtap(argv).exitCode, 0) << name;
    push_back(f);
  }
  std::string dir;
};

// Reports read their files several at once (gtap -j N) and merge what each
// gave in the order given: the output is the same whatever N is.
TEST(Batches, ReportsGiveTheSameOutputWhateverTheJobs) {
  std::string dir = freshDirectory("batches");
  Captures files(dir);
  files.add("ze-pipeline", {workload("ze_pipeline")});
  files.add("hsa-pipeline", {workload("hsa_pipeline")});
  for (int i = 1; i <= 4; ++i) files.add("ze-add-" + std::to_string(i), {workload("ze_vector_add"), std::to_string(i), "512"});
  // Counters in two files, their sets and columns joined by name.
  for (int i = 1; i <= 2; ++i)
    files.add("ze-counted-" + std::to_string(i), {workload("ze_vector_add"), std::to_string(i + 1), "1000"},
            {"--counters", "KernelsExecuted,WorkGroupsExecuted,GpuTime"});
  for (std::vector<std::string> report : {std::vector<std::string>{"summary"},
                                          {"summary", "--format=jsonl"},
                                          {"kernels", "--per-process"},
                                          {"kernels"},
                                          {"api", "--format=csv"},
                                          {"memory", "--per-process"},
                                          {"explain"},
                                          {"export", "--format=chrome", "-o", "-"},
                                          {"export", "--format=perfetto", "-o", "-"},
                                          {"export", "--format=jsonl", "-o", "-"},
                                          {"flame", "-o", "-"},
                                          {"queue", "--format=jsonl"},
                                          {"command"},
                                          {"flame", "--per-process", "--weight", "count", "-o", "-"},
                                          {"explain", "--format=jsonl", "--top", "5"},
                                          {"counters"},
                                          {"counters", "--per-process", "--format=jsonl"},
                                          {"counters", "--per-dispatch", "--format=csv"},
                                          {"export", "--format=csv", "--table", "strings", "-o", "-"},
                                          {"export", "--format=csv", "--table", "device_ops", "-o", "-"},
                                          {"export", "--format=csv", "--table", "frames", "-o", "-"},
                                          {"export", "--format=csv", "--table", "stack_frames", "-o", "-"},
                                          {"export", "--format=csv", "--table", "counters", "-o", "-"}}) {
    SCOPED_TRACE(report[0]);
    std::string first;
    for (const char* jobs : {"1", "2", "5"}) {
      std::vector<std::string> argv = {"-j", jobs};
      argv.insert(argv.end(), report.begin(), report.end());
      argv.insert(argv.end(), files.begin(), files.end());
      auto r = gtap(argv);
      ASSERT_EQ(r.exitCode, 0) << r.err;
      ASSERT_FALSE(r.out.empty());
      if (first.empty()) first = r.out;
      EXPECT_EQ(r.out, first) << "-j " << jobs;
    }
  }
  // diff reads its two sides at once.
  std::string first;
  for (const char* jobs : {"1", "2"}) {
    auto r = gtap({"-j", jobs, "diff", "--format=csv", files[2], files[5]});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("vector_add"), std::string::npos) << r.out;
    if (first.empty()) first = r.out;
    EXPECT_EQ(r.out, first) << "-j " << jobs;
  }
  EXPECT_EQ(gtap({"-j", "0", "summary", files[0]}).exitCode, 2);
  EXPECT_EQ(gtap({"summary", "-j", "2", files[0]}).exitCode, 0) << "after the verb too";
}

// Every row of a database, table by table, as text.
std::string databaseText(const std::string& path) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK) << path;
  std::string text;
  for (const auto& [table, n] :
       queryPairs(db, "SELECT name, 0 FROM sqlite_master WHERE type = 'table' ORDER BY name")) {
    text += "table " + table + "\n";
    sqlite3_stmt* stmt = nullptr;
    std::string sql = "SELECT * FROM " + table + " ORDER BY rowid";
    EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK) << sql;
    while (sqlite3_step(stmt) == SQLITE_ROW) {
      for (int c = 0; c < sqlite3_column_count(stmt); ++c) {
        auto* v = sqlite3_column_text(stmt, c);
        text += (c ? "," : "") + std::string(v ? reinterpret_cast<const char*>(v) : "NULL");
      }
      text += "\n";
    }
    sqlite3_finalize(stmt);
  }
  sqlite3_close(db);
  return text;
}

// What a database says of each process, by pid and names rather than ids:
// its calls per function, its device operations per name and queue, its
// stacks' frames and its counter values per kernel.
std::vector<std::pair<std::string, int64_t>> byName(const std::string& path) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK) << path;
  std::vector<std::pair<std::string, int64_t>> rows;
  for (const char* sql :
       {"SELECT p.pid || ' call ' || s.string, COUNT(*) FROM api_calls a JOIN processes p ON p.id = a.process_id "
        "JOIN strings s ON s.id = a.function_id GROUP BY 1",
        "SELECT p.pid || ' op ' || s.string || ' on ' || q.string, COUNT(*) FROM device_ops o JOIN processes p ON "
        "p.id = o.process_id JOIN strings s ON s.id = o.name_id JOIN strings q ON q.id = o.queue_id GROUP BY 1",
        "SELECT p.pid || ' alloc ' || s.string, COUNT(*) FROM allocations a JOIN processes p ON p.id = a.process_id "
        "JOIN strings s ON s.id = a.function_id GROUP BY 1",
        "SELECT p.pid || ' stack ' || sf.stack || ' ' || sf.depth || ' ' || f.name, 1 FROM stack_frames sf JOIN "
        "processes p ON p.id = sf.process_id JOIN frames f ON f.id = sf.frame_id",
        "SELECT p.pid || ' counter ' || s.string || ' ' || c.counter || ' ' || cs.set_id, SUM(c.value) FROM counters c "
        "JOIN device_ops o ON o.id = c.device_op_id JOIN processes p ON p.id = o.process_id JOIN strings s ON s.id "
        "= o.name_id JOIN counter_sets cs ON cs.id = c.counter_set_id AND cs.process_id = p.id GROUP BY 1"})
    for (auto& r : queryPairs(db, sql)) rows.push_back(std::move(r));
  sqlite3_close(db);
  std::sort(rows.begin(), rows.end());
  return rows;
}

// The SQLite export of many files, read several at once, numbers every row
// as one reader would: the same database whatever -j is, every reference
// resolving (foreign_key_check), each string and frame once, and each
// process's rows the same as its own file's export gives.
TEST(Batches, TheSqliteExportOfManyFilesIsTheSameWhateverTheJobs) {
  std::string dir = freshDirectory("batches-sqlite");
  Captures files(dir);
  files.add("ze-pipeline", {workload("ze_pipeline")});
  files.add("hsa-pipeline", {workload("hsa_pipeline")});
  for (int i = 1; i <= 3; ++i)
    files.add("ze-counted-" + std::to_string(i), {workload("ze_vector_add"), std::to_string(i), "1000"},
            {"--counters", "KernelsExecuted,WorkGroupsExecuted,GpuTime"});
  std::string first;
  for (const char* jobs : {"1", "2", "3"}) {
    std::string db = dir + "/all-" + jobs + ".sqlite";
    std::vector<std::string> argv = {"-j", jobs, "export", "--format=sqlite", "-o", db};
    argv.insert(argv.end(), files.begin(), files.end());
    auto r = gtap(argv);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    std::string text = databaseText(db);
    ASSERT_NE(text.find("vector_add"), std::string::npos);
    if (first.empty()) first = text;
    EXPECT_EQ(text, first) << "-j " << jobs;
  }
  std::string all = dir + "/all-2.sqlite";
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(all.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  EXPECT_TRUE(queryPairs(db, "SELECT \"table\", rowid FROM pragma_foreign_key_check").empty());
  EXPECT_EQ(queryInt(db, "SELECT COUNT(*) FROM processes"), 5);
  EXPECT_EQ(queryInt(db, "SELECT COUNT(*) - COUNT(DISTINCT name || '|' || IFNULL(function, '') || '|' || "
                         "IFNULL(module, '') || '|' || offset || '|' || IFNULL(file, '') || '|' || IFNULL(line, '') "
                         "|| '|' || inlined) FROM frames"),
            0)
      << "each frame once";
  EXPECT_GT(queryInt(db, "SELECT COUNT(*) FROM stack_frames"), 0);
  EXPECT_GT(queryInt(db, "SELECT COUNT(*) FROM counters"), 0);
  EXPECT_GT(queryInt(db, "SELECT COUNT(*) FROM device_ops WHERE hal_dispatch_id IS NULL"), 0);
  sqlite3_close(db);
  std::vector<std::pair<std::string, int64_t>> separate;
  for (size_t i = 0; i < files.size(); ++i) {
    std::string one = dir + "/one-" + std::to_string(i) + ".sqlite";
    ASSERT_EQ(gtap({"export", "--format=sqlite", "-o", one, files[i]}).exitCode, 0);
    for (auto& r : byName(one)) separate.push_back(std::move(r));
  }
  std::sort(separate.begin(), separate.end());
  EXPECT_EQ(byName(all), separate);
}

}  // namespace
}  // namespace gtap::test
