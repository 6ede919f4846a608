#pragma once
// What a request of the serving API asks for, whichever protocol carried it: the method (status,
// metadata, predict, classify, regress), the model, and a version by number or label. The REST
// front end reads it from the URL (rest_route.h), the gRPC one from the ModelSpec
// (grpc/grpc_messages.h); the model table finds the version it names.
// Thread-safety: a value.

#include <cstdint>
#include <optional>
#include <string>

namespace kiln::serving {

enum class RouteKind { kStatus, kMetadata, kPredict, kClassify, kRegress };

struct Route {
  RouteKind kind = RouteKind::kStatus;
  std::string model;
  std::optional<int64_t> version;    // none: every version (status) or the latest (the others)
  std::optional<std::string> label;  // a version by its label, instead of its number
};

}  // namespace kiln::serving
