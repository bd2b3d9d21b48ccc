// The record exporters (JSON Lines, SQLite) on a crafted capture whose every
// call and operation is known: each line and row is read back and compared
// with what the capture holds, field by field.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <memory>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "../integration/sqlite_query.h"
#include "gtap/readers/capture.h"
#include "gtap/readers/device_work.h"
#include "gtap/readers/parallel.h"
#include "gtap/readers/record_export.h"
#include "hostile_captures.h"

namespace {

using gtap::readers::Capture;
using gtap::readers::LoadedCapture;
using nlohmann::json;

// The crafted capture (two API calls, a timed kernel, an untimed
// device-to-host copy), opened from memory.
struct Fixture {
  std::vector<uint8_t> bytes = gtap::test::hostile::build(false, {}, std::vector<uint8_t>(64, 0x5a), false);
  Capture capture{bytes, "crafted.gtap"};
  std::vector<LoadedCapture> loaded{{&capture, gtap::readers::loadDeviceWork(capture)}};
};

std::vector<json> lines(const std::string& text) {
  std::vector<json> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(json::parse(line));
  return out;
}

TEST(RecordExport, JsonLinesHoldEveryCallAndOperationOfTheCapture) {
  Fixture f;
  std::ostringstream out;
  gtap::readers::writeJsonLines(f.loaded, out);
  auto all = lines(out.str());
  ASSERT_EQ(all.size(), 11u) << out.str();
  // The schema line, then the process the rows after it are of.
  EXPECT_EQ(all[0]["type"], "schema");
  EXPECT_EQ(all[0]["version"], gtap::readers::kJsonLinesSchemaVersion);
  EXPECT_NE(std::find(all[0]["types"].begin(), all[0]["types"].end(), "memory"), all[0]["types"].end());
  EXPECT_EQ(all[1]["type"], "process");
  EXPECT_EQ(all[1]["pid"], 4242);
  EXPECT_EQ(all[1]["executable"], "/bin/hostile");
  EXPECT_EQ(all[1]["file"], "crafted.gtap");
  const json types = all[0]["types"];
  all.erase(all.begin(), all.begin() + 2);
  // Every type a row has is one the schema line names.
  for (const json& l : all) EXPECT_NE(std::find(types.begin(), types.end(), l["type"]), types.end()) << l;

  // The calls, in the capture's order, with its function names and times.
  std::vector<gtap::readers::ApiCall> calls;
  f.capture.forEachCall([&](const gtap::readers::ApiCall& c) { calls.push_back(c); });
  ASSERT_EQ(calls.size(), 2u);
  for (size_t i = 0; i < calls.size(); ++i) {
    const json& l = all[i];
    EXPECT_EQ(l["type"], "api");
    EXPECT_EQ(l["pid"], 4242);
    EXPECT_EQ(l["function"], f.capture.functionName(calls[i].function));
    EXPECT_EQ(l["begin_ns"], calls[i].beginNs);
    EXPECT_EQ(l["end_ns"], calls[i].endNs);
  }
  EXPECT_EQ(all[0]["function"], "zeMemAllocShared");
  EXPECT_EQ(all[1]["function"], "zeCommandListAppendLaunchKernel");

  const json& kernel = all[2];
  EXPECT_EQ(kernel["type"], "device");
  EXPECT_EQ(kernel["index"], 0);
  EXPECT_EQ(kernel["kind"], "kernel");
  EXPECT_EQ(kernel["name"], "vector_add");
  EXPECT_EQ(kernel["groups"], json::array({4, 1, 1}));
  EXPECT_EQ(kernel["group_size"], json::array({64, 1, 1}));
  EXPECT_EQ(kernel["level"], "device");
  EXPECT_FALSE(kernel.contains("direction"));
  // Launched from stack 1: two frames in a module without symbols, root first.
  EXPECT_EQ(kernel["stack"], 1);
  // What each level and copy direction add up to: the kernel timed, the
  // copy not.
  EXPECT_EQ(all[4]["type"], "level");
  EXPECT_EQ(all[4]["level"], "device");
  EXPECT_EQ(all[4]["operations"], 2);
  EXPECT_EQ(all[4]["timed"], 1);
  EXPECT_EQ(all[4]["device_ns"], 100);
  EXPECT_EQ(all[5]["type"], "copy_direction");
  EXPECT_EQ(all[5]["direction"], "device-to-host");
  EXPECT_EQ(all[5]["copies"], 1);
  EXPECT_EQ(all[5]["bytes"], 1024);
  // The allocation and the free, in time order, each with the call it was
  // recorded inside and the allocation with its stack.
  EXPECT_EQ(all[6]["type"], "memory");
  EXPECT_EQ(all[6]["event"], "allocate");
  EXPECT_EQ(all[6]["kind"], "shared");
  EXPECT_EQ(all[6]["size"], 1024);
  EXPECT_EQ(all[6]["function"], "zeMemAllocShared");
  EXPECT_EQ(all[6]["stack"], 1);
  EXPECT_EQ(all[7]["event"], "free");
  EXPECT_EQ(all[7]["address"], all[6]["address"]);
  EXPECT_EQ(all[7]["time_ns"], 1060);
  const json& stack = all[8];
  EXPECT_EQ(stack["type"], "stack");
  EXPECT_EQ(stack["id"], 1);
  ASSERT_EQ(stack["frames"].size(), 2u) << stack;
  EXPECT_EQ(stack["frames"][0]["name"], "hostile+0x402000");
  EXPECT_EQ(stack["frames"][1]["module"], "hostile");
  EXPECT_EQ(stack["frames"][1]["offset"], 0x401000);
  EXPECT_FALSE(stack["frames"][0].contains("function"));
  // 100 ticks at 1 GHz.
  EXPECT_EQ(kernel["end_ns"].get<int64_t>() - kernel["start_ns"].get<int64_t>(), 100);

  const json& copy = all[3];
  EXPECT_EQ(copy["index"], 1);
  EXPECT_EQ(copy["kind"], "copy");
  EXPECT_EQ(copy["bytes"], gtap::test::hostile::kBytes);
  EXPECT_EQ(copy["direction"], gtap::readers::directionName(gtap::schema::CopyDirection::DEVICE_TO_HOST));
  EXPECT_FALSE(copy.contains("start_ns"));
  EXPECT_TRUE(copy.contains("untimed"));
}

TEST(RecordExport, SqliteRowsMatchTheCaptureAndTheViewSumsThem) {
  Fixture f;
  auto dir = std::filesystem::temp_directory_path() / ("gtap-record-export-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::string path = (dir / "out.db").string();
  {
    gtap::readers::OutputFile out(path, false);
    gtap::readers::writeSqlite(f.loaded, out);
    out.commit();
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  using gtap::test::queryCounts;
  using gtap::test::queryInt;
  EXPECT_EQ(queryInt(db, "SELECT COUNT(*) FROM processes WHERE pid = 4242"), 1);
  EXPECT_EQ(queryInt(db, "SELECT COUNT(*) FROM threads WHERE os_tid = 4242 AND name = 'main'"), 1);
  auto functions = queryCounts(db, "SELECT function, count FROM api_summary");
  EXPECT_EQ(functions, (gtap::test::Counts{{"zeCommandListAppendLaunchKernel", 1}, {"zeMemAllocShared", 1}}));
  std::vector<gtap::readers::ApiCall> calls;
  f.capture.forEachCall([&](const gtap::readers::ApiCall& c) { calls.push_back(c); });
  int64_t total = 0;
  for (const auto& c : calls) total += c.endNs - c.beginNs;
  EXPECT_EQ(queryInt(db, "SELECT SUM(total_ns) FROM api_summary"), total);

  auto kinds = queryCounts(db, "SELECT kind || ':' || s.string, COUNT(*) FROM device_ops d JOIN strings s ON s.id = d.name_id GROUP BY 1");
  EXPECT_EQ(kinds.at("kernel:vector_add"), 1);
  EXPECT_EQ(queryInt(db, "SELECT end_ns - start_ns FROM device_ops WHERE kind = 'kernel'"), 100);
  EXPECT_EQ(queryInt(db, "SELECT groups_x * group_size_x FROM device_ops WHERE kind = 'kernel'"), 256);
  // The copy: its direction, its size, and no device times.
  auto copies = queryCounts(db, "SELECT direction, bytes FROM device_ops WHERE kind = 'copy' AND start_ns IS NULL");
  EXPECT_EQ(copies, (gtap::test::Counts{{gtap::readers::directionName(gtap::schema::CopyDirection::DEVICE_TO_HOST),
                                         static_cast<int64_t>(gtap::test::hostile::kBytes)}}));
  EXPECT_EQ(queryInt(db, "SELECT COUNT(*) FROM device_ops WHERE kind = 'kernel' AND direction IS NULL"), 1);
  sqlite3_close(db);
  std::filesystem::remove_all(dir);
}

TEST(RecordExport, SqliteFailureIsSqlitesOwnMessageAndLeavesNoFile) {
  Fixture f;
  auto dir = std::filesystem::temp_directory_path() / ("gtap-record-export-fail-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::string path = (dir / "out.db").string();
  {
    gtap::readers::OutputFile out(path, false);
    // A temporary file that is not a database: SQLite says so.
    out.stream() << "not a database, not empty either" << std::string(4096, 'x');
    out.stream().flush();
    EXPECT_THROW(
        {
          try {
            gtap::readers::writeSqlite(f.loaded, out);
          } catch (const gtap::readers::SqliteError& e) {
            EXPECT_NE(std::string(e.what()).find("SQLite: "), std::string::npos) << e.what();
            throw;
          }
        },
        gtap::readers::SqliteError);
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_TRUE(std::filesystem::is_empty(dir));
  std::filesystem::remove_all(dir);
}

// Several captures' rows made on reading threads and numbered into one set
// of tables: the same bytes whatever the number of threads, each string once,
// the ids of every table running on across captures.
TEST(RecordExport, ManyCapturesGiveTheSameTablesWhateverTheThreads) {
  std::vector<uint8_t> bytes = gtap::test::hostile::build(false, {}, std::vector<uint8_t>(64, 0x5a), false);
  std::vector<std::unique_ptr<Capture>> owned;
  std::vector<const Capture*> captures;
  for (int i = 0; i < 5; ++i) {
    owned.push_back(std::make_unique<Capture>(bytes, "crafted-" + std::to_string(i) + ".gtap"));
    captures.push_back(owned.back().get());
  }
  auto tables = [&](unsigned jobs) {
    gtap::readers::setReadJobs(jobs);
    std::map<std::string, std::ostringstream> files;
    std::vector<std::string> notes;
    gtap::readers::writeCsv(
        captures, [&](std::string_view table) -> std::ostream* { return &files[std::string(table)]; }, notes);
    gtap::readers::setReadJobs(0);
    std::map<std::string, std::string> out;
    for (auto& [name, text] : files) out[name] = text.str();
    return out;
  };
  auto one = tables(1), three = tables(3);
  EXPECT_EQ(one, three);
  // strings: a header and each name once, though five captures name them.
  std::istringstream strings(one["strings"]);
  std::vector<std::string> rows;
  for (std::string line; std::getline(strings, line);) rows.push_back(line);
  ASSERT_GE(rows.size(), 2u);
  std::vector<std::string> texts;
  for (size_t i = 1; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].substr(0, rows[i].find(',')), std::to_string(i)) << "ids from 1, in order";
    texts.push_back(rows[i].substr(rows[i].find(',') + 1));
  }
  std::sort(texts.begin(), texts.end());
  EXPECT_EQ(std::adjacent_find(texts.begin(), texts.end()), texts.end());
  // api_calls: two calls a capture, ids 1 to 10, each capture's under its
  // own process id.
  std::istringstream calls(one["api_calls"]);
  std::string line;
  std::getline(calls, line);
  int64_t id = 0;
  while (std::getline(calls, line)) {
    ++id;
    EXPECT_EQ(line.substr(0, line.find(',')), std::to_string(id));
    std::string rest = line.substr(line.find(',') + 1);
    EXPECT_EQ(rest.substr(0, rest.find(',')), std::to_string((id + 1) / 2)) << line;
  }
  EXPECT_EQ(id, 10);
}

}  // namespace
