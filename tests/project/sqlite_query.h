// What a test reads straight from a SQLite store file, not through the
// store, to look at what the store wrote.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>

#include <gtest/gtest.h>

namespace toolvfs {

// The single integer answer of `sql` on `file`, opened read-only; -1 and a
// test failure naming the query when it has none.
inline int64_t QueryInt(const std::string& file, const char* sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* statement = nullptr;
  int64_t value = -1;
  if (sqlite3_prepare_v2(db, sql, -1, &statement, nullptr) == SQLITE_OK && sqlite3_step(statement) == SQLITE_ROW) {
    value = sqlite3_column_int64(statement, 0);
  } else {
    ADD_FAILURE() << sql << ": " << sqlite3_errmsg(db);
  }
  sqlite3_finalize(statement);
  sqlite3_close(db);
  return value;
}

}  // namespace toolvfs
