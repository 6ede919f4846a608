#include "kiln/serving/rest/responses.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string>

#include "kiln/core/json_text.h"
#include "kiln/serving/example_results.h"
#include "kiln/serving/rest/json_tensor.h"

namespace kiln::serving {
namespace {

std::string pair_text(const std::string& label, double score) {
  return fmt::format("[{}, {}]", Json(label).dump(-1, ' ', false, Json::error_handler_t::replace),
                     format_float(score, true));
}

// A TensorInfo: the dtype by TensorFlow's name, each dimension's size as text (int64 in proto3
// JSON), and a tensor name as a graph's would read (`input:0`).
Json tensor_info(const std::string& name, const TensorSpec& spec) {
  Json dims = Json::array();
  for (int64_t size : spec.shape) dims.push_back({{"size", std::to_string(size)}, {"name", ""}});
  return {{"dtype", tf_dtype_name(spec.dtype)},
          {"tensor_shape", {{"dim", dims}, {"unknown_rank", false}}},
          {"name", name + ":0"}};
}

}  // namespace

Json model_status_response(const std::vector<int64_t>& versions) {
  Json statuses = Json::array();
  for (int64_t version : versions)
    statuses.push_back({{"version", std::to_string(version)},
                        {"state", "AVAILABLE"},
                        {"status", {{"error_code", "OK"}, {"error_message", ""}}}});
  return {{"model_version_status", statuses}};
}

Json model_metadata_response(const std::string& model, int64_t version,
                             const Signatures& signatures) {
  Json defs = Json::object();
  for (const auto& [name, signature] : signatures) {
    // Maps' keys, each new: appended, not searched for (a signature may have thousands).
    Json inputs = Json::object(), outputs = Json::object();
    for (const auto& [input, spec] : signature.inputs)
      append_new_key(inputs, input, tensor_info(input, spec));
    for (const auto& [output, out] : signature.outputs)
      append_new_key(outputs, output, tensor_info(output, out.spec));
    append_new_key(defs, name,
                   {{"inputs", inputs},
                    {"outputs", outputs},
                    {"method_name", method_of(signature)},
                    {"defaults", Json::object()}});
  }
  return {{"model_spec",
           {{"name", model}, {"signature_name", ""}, {"version", std::to_string(version)}}},
          {"metadata", {{"signature_def", {{"signature_def", defs}}}}}};
}

std::string classify_response(const SignatureOutput& output, const HostTensor& probabilities,
                              const std::vector<std::string>& labels) {
  std::vector<std::string> results;
  for (const std::vector<ScoredClass>& classes : classify_results(output, probabilities, labels)) {
    std::vector<std::string> pairs;
    for (const ScoredClass& scored : classes)
      pairs.push_back(pair_text(scored.label, scored.score));
    results.push_back(fmt::format("[{}]", fmt::join(pairs, ", ")));
  }
  return fmt::format("{{\"results\": [{}]}}", fmt::join(results, ", "));
}

std::string regress_response(const HostTensor& predictions) {
  std::vector<std::string> values;
  for (double value : predictions.numbers)
    values.push_back(format_float(value, predictions.dtype == DType::kFloat32));
  return fmt::format("{{\"results\": [{}]}}", fmt::join(values, ", "));
}

}  // namespace kiln::serving
