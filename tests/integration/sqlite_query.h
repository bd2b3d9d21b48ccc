// Queries on the SQLite databases `gtap export --format=sqlite` writes, for
// the integration tests: a failed query fails the test.
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace gtap::test {

using Counts = std::map<std::string, int64_t>;

// Rows of (text, integer) a query yields, in order; a failed query fails the test.
inline std::vector<std::pair<std::string, int64_t>> queryPairs(sqlite3* db, const std::string& sql) {
  std::vector<std::pair<std::string, int64_t>> rows;
  sqlite3_stmt* stmt = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK) << sql << ": " << sqlite3_errmsg(db);
  int rc;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    auto* text = sqlite3_column_text(stmt, 0);
    rows.emplace_back(text ? reinterpret_cast<const char*>(text) : "", sqlite3_column_int64(stmt, 1));
  }
  EXPECT_EQ(rc, SQLITE_DONE) << sql << ": " << sqlite3_errmsg(db);
  sqlite3_finalize(stmt);
  return rows;
}

// A query's (text, count) rows as a map; a text seen twice fails the test.
inline Counts queryCounts(sqlite3* db, const std::string& sql) {
  Counts counts;
  for (const auto& [text, n] : queryPairs(db, sql)) EXPECT_TRUE(counts.emplace(text, n).second) << text;
  return counts;
}

inline int64_t queryInt(sqlite3* db, const std::string& sql) {
  auto rows = queryPairs(db, "SELECT '', (" + sql + ")");
  return rows.empty() ? -1 : rows.front().second;
}

}  // namespace gtap::test
