#include "kiln/tune/sqlite_rows.h"

namespace kiln::tune {

sqlite3* open_database(const std::string& path, int flags, double busy_seconds) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string problem = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close_v2(db);
    throw Error(fmt::format("study database {}: {}", path, problem));
  }
  // Trials report from their own processes: wait for a writer rather than fail.
  sqlite3_busy_timeout(db, int(busy_seconds * 1000));
  return db;
}

}  // namespace kiln::tune
