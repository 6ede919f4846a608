#pragma once
// JSON text from outside kiln (request bodies, files kiln reads back, study rows), parsed with its
// nesting bounded. nlohmann's parser itself keeps its own stack, but every walk of the tree after
// it (dumping it, reading a tensor from nested lists, destroying it in older releases) recurses
// once per level: a 60 KB body of 30,000 `[` would overflow the stack there. The depth is checked
// by a scan of the text before the parser builds anything.

#include <cstddef>
#include <stdexcept>
#include <string>

#include "kiln/core/json.h"

namespace kiln {

/// How deep JSON from outside may nest: objects and arrays, the outermost counting one. A tensor
/// of rank 8 in a TF Serving request sits 10 levels deep.
constexpr size_t kMaxJsonDepth = 64;

/// How many values and keys JSON from outside may hold (counted by a scan of the text before the
/// parser builds anything): nlohmann takes 16 bytes a value and more for each string, array and
/// object, so 100 MB of `"",` became 3.6 GB. A request's tensors may hold 2^24 values
/// (kMaxRequestValues); files kiln reads back and study rows hold fewer.
constexpr size_t kMaxJsonValues = size_t{1} << 25;
constexpr size_t kMaxJsonFileValues = size_t{1} << 23;

/// JSON text refused: not JSON, nested too deep, or a number beyond a double. `byte` is the
/// offset of the problem in the text when known, else -1.
class JsonTextError : public std::runtime_error {
 public:
  JsonTextError(const std::string& message, int64_t byte)
      : std::runtime_error(message), byte_(byte) {}
  int64_t byte() const { return byte_; }

 private:
  int64_t byte_;
};

/// The first byte of `text` at which objects and arrays nest deeper than `max_depth` (brackets in
/// strings do not count), or std::string::npos.
size_t json_depth_exceeded_at(const std::string& text, size_t max_depth = kMaxJsonDepth);

/// The first byte of `text` past which it holds more than `max_values` values and keys (counted
/// by the brackets, commas and colons outside strings), or std::string::npos.
size_t json_values_exceeded_at(const std::string& text, size_t max_values);

/// Parses `text`, refusing nesting deeper than `max_depth` and more than `max_values` values and
/// keys. Throws JsonTextError, whose message names the line and column.
Json parse_json_text(const std::string& text, size_t max_depth = kMaxJsonDepth,
                     size_t max_values = kMaxJsonValues);

/// JSON text that may hold comments (`//` and `/* */`, as JSON configs may): the same tree and
/// checks as parse_json_text but for the NUL scan, the depth checked as the tree is built.
Json parse_json_with_comments(const std::string& text, size_t max_depth = kMaxJsonDepth);

/// Adds `key`, which the caller knows `object` (a JSON object) does not hold, with `value`;
/// returns the value's place. Why: an ordered object searches its keys one by one on every
/// operator[] and emplace, so filling one of n keys that way costs n^2 / 2 comparisons.
Json& append_new_key(Json& object, std::string key, Json value);

/// JSON that kiln writes for people and other programs to read (--json outputs, the board, the
/// report): bytes that are not UTF-8 in a string are shown as U+FFFD, never an exception. Text
/// that must read back exactly (a vocabulary, a class name) is refused where it enters instead.
std::string dump_json(const Json& value, int indent = -1);

/// Reads and parses a JSON file kiln reads back (read_text_file's limits, then parse_json_text
/// with at most `max_values` values and keys). Throws DataError naming the file and the byte
/// offset, or IoError.
Json read_json_file(const std::string& path, size_t max_values = kMaxJsonFileValues);

}  // namespace kiln
