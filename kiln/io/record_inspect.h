#pragma once
// What `kiln data inspect` reports about a TFRecord file: record count, compression, whether it
// holds Examples or SequenceExamples, the schema (each feature's type and length range over all
// records) and the first record's values. Thread-safety: pure functions.

#include <optional>
#include <string>

#include "kiln/core/json.h"
#include "kiln/io/byte_stream.h"

namespace kiln::io {

/// Reads every record of `path`. The result is
/// `{"records": N, "compression": ..., "kind": "example|sequence_example",
///   "features": {NAME: {"type": ..., "min_len": A, "max_len": B, "records_with": C}},
///   "first": {NAME: [values]}}`; sequence examples add `"feature_lists"` (lengths in steps) and
///   `"first_feature_lists"`.
/// Bytes values are strings when valid UTF-8, else `{"b64": ...}`. Throws DataError naming the
/// file, the record and the offset of the first bad record.
Json inspect_tfrecord(const std::string& path, std::optional<Compression> compression = {});

/// True when the serialized record has a top-level field 2 (SequenceExample.feature_lists), which
/// an Example never has.
bool looks_like_sequence_example(const std::string& record);

}  // namespace kiln::io
