#include "kiln/serving/rest/rest_handler.h"

#include <fmt/format.h>

#include <chrono>
#include <future>
#include <optional>
#include <set>

#include "kiln/core/json_text.h"
#include "kiln/serving/example_results.h"
#include "kiln/serving/prediction_api.h"
#include "kiln/serving/request_limits.h"
#include "kiln/serving/rest/example_request.h"
#include "kiln/serving/rest/json_tensor.h"
#include "kiln/serving/rest/responses.h"
#include "kiln/serving/rest/rest_route.h"
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

void RestHandler::handle_async(const std::string& method, const std::string& path,
                               const std::string& body, ReplyDone done,
                               net::Abandoned abandoned) const {
  auto start = std::chrono::steady_clock::now();
  if (!gate_.enter()) {
    done({http_status(StatusCode::kUnavailable), error_body("the server is shutting down"), {}});
    return;
  }
  Finish finish{[this, start, done = std::move(done)](const Route& route, HttpReply reply) {
                  finished(route, start, std::move(reply), done);
                },
                std::move(abandoned)};
  Route route;  // stays without a model when the URL is none of the API's
  try {
    route = parse_route(method, path);
    bool predicts = route.kind == RouteKind::kPredict || route.kind == RouteKind::kClassify ||
                    route.kind == RouteKind::kRegress;
    if (predicts) refuse_without_room(options_.held);
    if (route.kind == RouteKind::kPredict) return start_predict(route, body, finish);
    if (route.kind == RouteKind::kClassify || route.kind == RouteKind::kRegress)
      return start_examples(route, body, finish);
    finish(route, answer_now(route));
  } catch (const ServingError& e) {
    finish(route, {e.http_status(), error_body(e.message()), {}});
  } catch (const std::exception& e) {
    finish(route, {http_status(StatusCode::kInternal), error_body(e.what()), {}});
  }
}

bool RestHandler::reads_examples(const std::string& method, const std::string& path) const {
  try {
    Route route = parse_route(method, path);
    if (route.kind == RouteKind::kClassify || route.kind == RouteKind::kRegress) return true;
    return route.kind == RouteKind::kPredict && table_.find(route).servable->examples();
  } catch (const ServingError&) {
    return false;  // answered as such by handle_async, wherever it runs
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
  // Counted before the client has its answer, so that it finds its request in the metrics. A
  // model the server does not serve is counted with the requests that named none: a series per
  // name a client makes up would let random names grow the server and /metrics without bound.
  if (metrics_) {
    bool served = !route.model.empty() && table_.serves(route.model);
    metrics_->request(
        served ? route.model : "", served ? api_name(route.kind) : "", reply.status,
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  done(std::move(reply));
  gate_.leave();
}

std::string RestHandler::metrics_text() const {
  return metrics_ ? metrics_->text(table_.models(), in_flight()) : "";
}

HttpReply RestHandler::answer_now(const Route& route) const {
  switch (route.kind) {
    case RouteKind::kStatus:
      return {200, dump_json(model_status_response(table_.status_versions(route)), 1), {}};
    case RouteKind::kMetadata: {
      FoundVersion found = table_.find(route);
      return {200,
              dump_json(model_metadata_response(route.model, found.version,
                                                shown_signatures(*found.servable)),
                        1),
              {}};
    }
    default:  // the others are answered when their model has run
      throw ServingError(StatusCode::kInternal, "not a status or metadata request");
  }
}

const std::map<std::string, TensorSpec>& RestHandler::signature_inputs(const Signatures& signatures,
                                                                       const std::string& name) {
  auto signature = signatures.find(name);
  if (signature == signatures.end())
    throw ServingError(StatusCode::kFailedPrecondition,
                       fmt::format("Serving signature key \"{}\" not found.", name));
  return signature->second.inputs;
}

void RestHandler::check_rows(const std::string& input, int64_t rows) const {
  check_request_rows(input, rows, options_.max_rows);
}

void RestHandler::start_predict(const Route& route, const std::string& body,
                                const Finish& finish) const {
  FoundVersion found = table_.find(route);
  const Signatures& signatures = found.servable->signatures();
  const ExampleEncoder* encoder = found.servable->examples();
  if (encoder && !signatures.empty()) {
    std::set<std::string> tensors;
    for (const auto& [name, spec] : signatures.begin()->second.inputs) tensors.insert(name);
    if (std::optional<ExamplesRequest> raw =
            parse_feature_predict_request(body, encoder->features(), tensors))
      return start_examples(route, std::move(found), std::move(*raw), finish);
  }
  PredictRequest request = parse_predict_request(
      body, [&](const std::string& name) -> const std::map<std::string, TensorSpec>& {
        return signature_inputs(signatures, name);
      });
  for (const auto& [name, tensor] : request.inputs)
    if (!tensor.shape.empty()) check_rows("input " + name, tensor.shape.front());
  submit(
      route, std::move(found), request.signature_name, std::move(request.inputs),
      [format = request.format](const HostTensors& outputs) {
        return predict_response(outputs, format);
      },
      finish);
}

void RestHandler::start_examples(const Route& route, const std::string& body,
                                 const Finish& finish) const {
  FoundVersion found = table_.find(route);
  examples_encoder(found, route.model, ExamplesApi::kRest);
  start_examples(route, std::move(found), parse_examples_request(body), finish);
}

void RestHandler::start_examples(const Route& route, FoundVersion found, ExamplesRequest request,
                                 const Finish& finish) const {
  const Signatures& signatures = found.servable->signatures();
  signature_inputs(signatures, request.signature_name);
  check_rows("the request", static_cast<int64_t>(request.examples.size()));
  Respond respond;
  if (route.kind == RouteKind::kClassify) {
    const SignatureOutput& output = classify_output(signatures, request.signature_name);
    respond = [&output, &labels = found.servable->labels()](const HostTensors& outputs) {
      return classify_response(output, outputs.at("probabilities"), labels);
    };
  } else if (route.kind == RouteKind::kRegress) {
    regress_output(signatures, request.signature_name);
    respond = [](const HostTensors& outputs) {
      return regress_response(outputs.at("predictions"));
    };
  } else {
    respond = [format = request.format](const HostTensors& outputs) {
      return predict_response(outputs, format);
    };
  }
  HostTensors inputs = found.servable->examples()->encode(request.examples);
  submit(route, std::move(found), request.signature_name, std::move(inputs), respond, finish);
}

void RestHandler::submit(const Route& route, FoundVersion found, const std::string& signature,
                         HostTensors inputs, Respond respond, const Finish& finish) const {
  serving::submit(
      std::move(found), signature, std::move(inputs), finish.abandoned,
      [route, respond = std::move(respond), finish](HostTensors outputs, std::exception_ptr error,
                                                    std::shared_ptr<const void> servable) {
        HttpReply reply;
        try {
          if (error) std::rethrow_exception(error);
          reply = {200, respond(outputs), {}};
        } catch (const ServingError& e) {
          reply = {e.http_status(), error_body(e.message()), {}};
        } catch (const std::exception& e) {
          reply = {http_status(StatusCode::kInternal), error_body(e.what()), {}};
        }
        reply.servable = std::move(servable);
        finish(route, std::move(reply));
      });
}

}  // namespace kiln::serving
