#pragma once
// The error a compressed input stream throws when its bytes break (byte_stream.cpp), with the
// problem kept apart from the file and offset, so that a record reader can say which record it
// was reading when the stream broke. Thread-safety: a value.

#include <string>

#include "kiln/core/error.h"

namespace kiln::io {

class CompressedStreamError : public DataError {
 public:
  /// `compressed_offset`: where in the compressed file the stream broke.
  CompressedStreamError(const std::string& file, int64_t compressed_offset, std::string problem)
      : DataError(file, -1, compressed_offset, problem), problem_(std::move(problem)) {}
  const std::string& problem() const { return problem_; }

 private:
  std::string problem_;
};

}  // namespace kiln::io
