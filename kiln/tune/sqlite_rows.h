#pragma once
// SQLite as study.db uses it: a prepared statement with its parameters bound in order, a
// connection that waits for other writers, and the checked reading of a row (every column's type
// as the schema gives it) that keeps a hand-edited database from being used unseen.
// Thread-safety: one connection per thread, as SQLite's.

#include <sqlite3.h>

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

#include "kiln/core/error.h"
#include "kiln/core/json.h"
#include "kiln/core/json_text.h"

namespace kiln::tune {

// One prepared statement, its parameters bound in order.
class Statement {
 public:
  Statement(sqlite3* db, const std::string& path, const char* sql) : db_(db), path_(path) {
    check(sqlite3_prepare_v2(db, sql, -1, &statement_, nullptr));
  }
  ~Statement() { sqlite3_finalize(statement_); }
  Statement& bind(int64_t value) {
    return checked(sqlite3_bind_int64(statement_, ++bound_, value));
  }
  Statement& bind(double value) {
    return checked(sqlite3_bind_double(statement_, ++bound_, value));
  }
  Statement& bind(const std::string& text) {
    return checked(
        sqlite3_bind_text(statement_, ++bound_, text.c_str(), int(text.size()), SQLITE_TRANSIENT));
  }
  Statement& bind(std::optional<double> value) {
    if (value) return bind(*value);
    return checked(sqlite3_bind_null(statement_, ++bound_));
  }
  /// True while a row is there to read.
  bool step() {
    int rc = sqlite3_step(statement_);
    if (rc == SQLITE_ROW) return true;
    check(rc == SQLITE_DONE ? SQLITE_OK : rc);
    return false;
  }
  int64_t integer(int column) const { return sqlite3_column_int64(statement_, column); }
  double real(int column) const { return sqlite3_column_double(statement_, column); }
  bool null(int column) const { return sqlite3_column_type(statement_, column) == SQLITE_NULL; }
  int type(int column) const { return sqlite3_column_type(statement_, column); }
  const char* column_name(int column) const { return sqlite3_column_name(statement_, column); }
  /// The whole text, NUL bytes included (a C string would end at the first).
  std::string text(int column) const {
    const unsigned char* at = sqlite3_column_text(statement_, column);
    if (!at) return "";
    return std::string(reinterpret_cast<const char*>(at),
                       static_cast<size_t>(sqlite3_column_bytes(statement_, column)));
  }

 private:
  Statement& checked(int rc) {
    check(rc);
    return *this;
  }
  void check(int rc) const {
    if (rc != SQLITE_OK)
      throw Error(fmt::format("study database {}: {}", path_, sqlite3_errmsg(db_)));
  }

  sqlite3* db_;
  const std::string& path_;
  sqlite3_stmt* statement_ = nullptr;
  int bound_ = 0;
};

/// Opens the database at `path` with `flags`; a writer in another process is waited for up to
/// `busy_seconds`. Error naming the file when it cannot be opened.
sqlite3* open_database(const std::string& path, int flags, double busy_seconds);

// The columns of one row a query read, each checked for the type the schema gives it before it is
// used: SQLite keeps whatever a hand edit stored (text in a REAL column reads as 0 otherwise, and
// a made-up trial number indexes past the trials). A problem is a DataError naming the file, the
// table and the row.
/// The most values and keys a JSON column may hold: a 50 MB config of empty objects once took
/// the board 2 GB on every request for the studies.
constexpr size_t kMaxRowJsonValues = size_t{1} << 20;

class CheckedRow {
 public:
  /// `rowid_column`: where the query selected the row's rowid, which names the row in messages.
  CheckedRow(const Statement& row, const std::string& path, const char* table, int rowid_column)
      : row_(row), path_(path), table_(table), rowid_(row.integer(rowid_column)) {}

  [[noreturn]] void fail(const std::string& problem) const {
    throw DataError(path_, -1, -1,
                    fmt::format("table {}, rowid {}: {}; the study was left as it is", table_,
                                rowid_, problem));
  }
  int64_t integer(int column) const {
    expect(column, row_.type(column) == SQLITE_INTEGER, "a whole number");
    return row_.integer(column);
  }
  double number(int column) const {
    int type = row_.type(column);
    expect(column, type == SQLITE_INTEGER || type == SQLITE_FLOAT, "a number");
    double value = row_.real(column);
    if (!std::isfinite(value))
      fail(fmt::format("{} is {}, not a finite number", name(column), value));
    return value;
  }
  std::optional<double> number_or_null(int column) const {
    if (row_.null(column)) return std::nullopt;
    return number(column);
  }
  std::string text(int column) const {
    expect(column, row_.type(column) == SQLITE_TEXT, "text");
    std::string text = row_.text(column);
    // kiln writes no NUL; text read as a C string would drop what follows one unseen.
    if (text.find('\0') != std::string::npos)
      fail(fmt::format("{} holds a NUL byte at {}", name(column), text.find('\0')));
    return text;
  }
  /// A column of JSON kiln wrote: a study's config (which, like any config, holds no more than
  /// some hundreds of thousands of values) or a trial's values.
  Json json(int column) const {
    try {
      return parse_json_text(text(column), kMaxJsonDepth, kMaxRowJsonValues);
    } catch (const JsonTextError& e) {
      fail(fmt::format("{} is not JSON: {}", name(column), e.what()));
    }
  }
  /// A trial number naming one of the `count` trials read before.
  size_t trial(int column, size_t count) const {
    int64_t number = integer(column);
    if (number < 0 || uint64_t(number) >= count)
      fail(fmt::format("{} {} names no trial of the study (it has {})", name(column), number,
                       count));
    return size_t(number);
  }

 private:
  std::string name(int column) const { return fmt::format("column {}", row_.column_name(column)); }
  void expect(int column, bool holds, const char* what) const {
    static const char* const kTypes[] = {"?",    "a whole number", "a number",
                                         "text", "bytes",          "NULL"};
    int type = row_.type(column);
    if (!holds)
      fail(fmt::format("{} holds {} where {} goes", name(column),
                       kTypes[type >= 1 && type <= 5 ? type : 0], what));
  }

  const Statement& row_;
  const std::string& path_;
  const char* table_;
  int64_t rowid_;
};

}  // namespace kiln::tune
