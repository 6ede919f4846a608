#pragma once
// What one request may make the server hold once it is expanded, over both APIs, checked from
// what the request declares before anything is allocated: a small message may claim far more
// than its size (a repeated field's last value filled out to a shape, a context copied into each
// example, one string repeated for each image). Requests over them are refused with
// RESOURCE_EXHAUSTED naming the limit. docs/serving.md lists them.

#include <cstddef>
#include <cstdint>
#include <string>

namespace kiln::serving {

/// The values all of one request's tensors may be expanded to. A 110-byte gRPC request once
/// claimed 2^24 values in each of ten features (3.7 GB).
constexpr int64_t kMaxRequestValues = int64_t(1) << 24;

/// The bytes that copies made for one request may come to: one tensor's strings with the last one
/// repeated (a 512 KiB string for 1,024 images was half a gigabyte), or a context copied into each
/// example (1.1 MB of context for 1,024 examples was a gigabyte).
constexpr size_t kMaxRequestCopyBytes = size_t(64) << 20;

/// The row limit of both APIs (--max-request-rows): ServingError (kInvalidArgument) when `what`
/// ("the request", "input x") holds more than `max_rows` examples.
void check_request_rows(const std::string& what, int64_t rows, int64_t max_rows);

}  // namespace kiln::serving
