#include "kiln/serving/rest_handler.h"

#include <fmt/format.h>

#include <chrono>
#include <future>

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

RestHandler::~RestHandler() {
  std::unique_lock<std::mutex> lock(mutex_);
  idle_.wait(lock, [this] { return in_flight_ == 0; });
}

void RestHandler::handle_async(const std::string& method, const std::string& path,
                               const std::string& body, ReplyDone done) const {
  auto start = std::chrono::steady_clock::now();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (draining_) {
      done({http_status(StatusCode::kUnavailable), error_body("the server is shutting down"), {}});
      return;
    }
    ++in_flight_;
  }
  Finish finish = [this, start, done = std::move(done)](const Route& route, HttpReply reply) {
    finished(route, start, std::move(reply), done);
  };
  Route route;  // stays without a model when the URL is none of the API's
  try {
    route = parse_route(method, path);
    if (route.kind == RouteKind::kPredict) return start_predict(route, body, finish);
    finish(route, answer_now(route));
  } catch (const ServingError& e) {
    finish(route, {e.http_status(), error_body(e.what()), {}});
  } catch (const std::exception& e) {
    finish(route, {http_status(StatusCode::kInternal), error_body(e.what()), {}});
  }
}

HttpReply RestHandler::handle(const std::string& method, const std::string& path,
                              const std::string& body) const {
  std::promise<HttpReply> reply;
  std::future<HttpReply> replied = reply.get_future();
  handle_async(method, path, body,
               [&reply](HttpReply answer) { reply.set_value(std::move(answer)); });
  return replied.get();
}

void RestHandler::finished(const Route& route, std::chrono::steady_clock::time_point start,
                           HttpReply reply, const ReplyDone& done) const {
  // Counted before the client has its answer, so that it finds its request in the metrics.
  if (metrics_)
    metrics_->request(
        route.model, route.model.empty() ? "" : api_name(route.kind), reply.status,
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  done(std::move(reply));
  std::lock_guard<std::mutex> lock(mutex_);  // notified under the lock: ~RestHandler may follow
  if (--in_flight_ == 0) idle_.notify_all();
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

HttpReply RestHandler::answer_now(const Route& route) const {
  switch (route.kind) {
    case RouteKind::kStatus:
      return {200, model_status_response(table_.status_versions(route)).dump(1), {}};
    case RouteKind::kMetadata: {
      FoundVersion found = table_.find(route);
      return {
          200,
          model_metadata_response(route.model, found.version, found.servable->signatures()).dump(1),
          {}};
    }
    default:
      throw ServingError(StatusCode::kUnimplemented,
                         "kiln serves :predict; :classify and :regress need tf.Example "
                         "signatures, which kiln exports do not have");
  }
}

void RestHandler::start_predict(const Route& route, const std::string& body,
                                const Finish& finish) const {
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
  Servable& servable = *found.servable;
  servable.predict_async(request.signature_name, std::move(request.inputs),
                         [route, format = request.format, finish, hold = std::move(found.servable)](
                             HostTensors outputs, std::exception_ptr error) mutable {
                           HttpReply reply;
                           try {
                             if (error) std::rethrow_exception(error);
                             reply = {200, predict_response(outputs, format), {}};
                           } catch (const ServingError& e) {
                             reply = {e.http_status(), error_body(e.what()), {}};
                           } catch (const std::exception& e) {
                             reply = {http_status(StatusCode::kInternal), error_body(e.what()), {}};
                           }
                           reply.servable = std::move(hold);
                           finish(route, std::move(reply));
                         });
}

}  // namespace kiln::serving
