#include "kiln/serving/rest_handler.h"

#include <fmt/format.h>

#include <chrono>

#include "kiln/serving/responses.h"
#include "kiln/serving/serving_error.h"

namespace kiln::serving {

namespace {

const char* api_name(RouteKind kind) {
  switch (kind) {
    case RouteKind::kStatus:
      return "status";
    case RouteKind::kMetadata:
      return "metadata";
    case RouteKind::kPredict:
      return "predict";
    case RouteKind::kClassify:
      return "classify";
    case RouteKind::kRegress:
      return "regress";
  }
  return "";
}

}  // namespace

HttpReply RestHandler::handle(const std::string& method, const std::string& path,
                              const std::string& body) const {
  auto start = std::chrono::steady_clock::now();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (draining_)
      return {http_status(StatusCode::kUnavailable), error_body("the server is shutting down")};
    ++in_flight_;
  }
  Route route;  // stays without a model when the URL is none of the API's
  HttpReply reply = answer(method, path, body, route);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (--in_flight_ == 0) idle_.notify_all();
  }
  if (metrics_)
    metrics_->request(
        route.model, route.model.empty() ? "" : api_name(route.kind), reply.status,
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return reply;
}

std::string RestHandler::metrics_text() const {
  return metrics_ ? metrics_->text(table_.models(), in_flight()) : "";
}

int64_t RestHandler::drain(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  draining_ = true;
  idle_.wait_for(lock, timeout, [this] { return in_flight_ == 0; });
  return in_flight_;
}

int64_t RestHandler::in_flight() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return in_flight_;
}

HttpReply RestHandler::answer(const std::string& method, const std::string& path,
                              const std::string& body, Route& route) const {
  try {
    route = parse_route(method, path);
    switch (route.kind) {
      case RouteKind::kStatus:
        return {200, model_status_response(table_.status_versions(route)).dump(1)};
      case RouteKind::kMetadata: {
        FoundVersion found = table_.find(route);
        return {200,
                model_metadata_response(route.model, found.version, found.servable->signatures())
                    .dump(1)};
      }
      case RouteKind::kPredict:
        return {200, predict(route, body)};
      default:
        throw ServingError(StatusCode::kUnimplemented,
                           "kiln serves :predict; :classify and :regress need tf.Example "
                           "signatures, which kiln exports do not have");
    }
  } catch (const ServingError& e) {
    return {e.http_status(), error_body(e.what())};
  } catch (const std::exception& e) {
    return {http_status(StatusCode::kInternal), error_body(e.what())};
  }
}

std::string RestHandler::predict(const Route& route, const std::string& body) const {
  FoundVersion found = table_.find(route);
  const Signatures& signatures = found.servable->signatures();
  PredictRequest request = parse_predict_request(
      body, [&](const std::string& name) -> const std::map<std::string, TensorSpec>& {
        auto signature = signatures.find(name);
        if (signature == signatures.end())
          throw ServingError(StatusCode::kFailedPrecondition,
                             fmt::format("Serving signature key \"{}\" not found.", name));
        return signature->second.inputs;
      });
  for (const auto& [name, tensor] : request.inputs)
    if (!tensor.shape.empty() && tensor.shape.front() > options_.max_rows)
      throw ServingError(StatusCode::kInvalidArgument,
                         fmt::format("input {} has {} examples; this server takes at most {} in "
                                     "one request (--max-request-rows)",
                                     name, tensor.shape.front(), options_.max_rows));
  return predict_response(found.servable->predict(request.signature_name, request.inputs),
                          request.format);
}

}  // namespace kiln::serving
