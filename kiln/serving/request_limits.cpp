#include "kiln/serving/request_limits.h"

#include <fmt/format.h>

#include "kiln/serving/serving_error.h"

namespace kiln::serving {

void check_request_rows(const std::string& what, int64_t rows, int64_t max_rows) {
  if (rows > max_rows)
    throw ServingError(StatusCode::kInvalidArgument,
                       fmt::format("{} has {} examples; this server takes at most {} in one "
                                   "request (--max-request-rows)",
                                   what, rows, max_rows));
}

}  // namespace kiln::serving
