#include "kiln/serving/example_results.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kiln/serving/serving_error.h"

namespace kiln::serving {
namespace {

ServingError invalid(const std::string& message) {
  return ServingError(StatusCode::kInvalidArgument, message);
}

// The output `name` of the signature, or an error that says which signatures have one.
const SignatureOutput& output_named(const Signatures& signatures, const std::string& signature_name,
                                    const std::string& name, const std::string& api,
                                    const std::string& why) {
  const Signature& signature = signatures.at(signature_name);
  auto found = signature.outputs.find(name);
  if (found != signature.outputs.end()) return found->second;
  std::vector<std::string> having;
  for (const auto& [other, candidate] : signatures)
    if (candidate.outputs.count(name)) having.push_back("\"" + other + "\"");
  throw invalid(fmt::format(
      "{} needs an output '{}' ({}); signature \"{}\" has none{}", api, name, why, signature_name,
      having.empty()
          ? "; use :predict"
          : fmt::format(": give \"signature_name\" one of {}", fmt::join(having, ", "))));
}

std::string label_of(int64_t id, const std::vector<std::string>& labels) {
  return id < static_cast<int64_t>(labels.size()) ? labels[id] : std::to_string(id);
}

std::string pair_text(const std::string& label, double score) {
  return fmt::format("[{}, {}]", Json(label).dump(-1, ' ', false, Json::error_handler_t::replace),
                     format_float(score, true));
}

// Examples and classes of a probabilities tensor: [n, k], or [n] as one column.
std::pair<int64_t, int64_t> rows_and_columns(const HostTensor& tensor) {
  int64_t rows = tensor.shape.empty() ? 1 : tensor.shape[0];
  int64_t columns = tensor.shape.size() < 2 ? 1 : tensor.size() / std::max<int64_t>(rows, 1);
  return {rows, columns};
}

}  // namespace

const SignatureOutput& classify_output(const Signatures& signatures,
                                       const std::string& signature_name) {
  return output_named(signatures, signature_name, "probabilities", ":classify",
                      "a classifier trained with cross_entropy or binary_cross_entropy has it");
}

std::vector<std::vector<ScoredClass>> classify_results(const SignatureOutput& output,
                                                       const HostTensor& probabilities,
                                                       const std::vector<std::string>& labels) {
  auto [rows, columns] = rows_and_columns(probabilities);
  bool binary = output.op == OutputOp::kSigmoid && columns == 1;
  std::vector<std::vector<ScoredClass>> results(rows);
  for (int64_t row = 0; row < rows; ++row) {
    const double* score = probabilities.numbers.data() + row * columns;
    if (binary) {
      results[row].push_back({label_of(0, labels), 1.0f - static_cast<float>(score[0])});
      results[row].push_back({label_of(1, labels), score[0]});
    } else {
      for (int64_t c = 0; c < columns; ++c) results[row].push_back({label_of(c, labels), score[c]});
    }
  }
  return results;
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

const SignatureOutput& regress_output(const Signatures& signatures,
                                      const std::string& signature_name) {
  const SignatureOutput& output =
      output_named(signatures, signature_name, "predictions", ":regress",
                   "a model trained with a regression loss has it");
  const std::vector<int64_t>& shape = output.spec.shape;
  bool one_each = shape.size() == 1 || (shape.size() == 2 && shape[1] == 1);
  if (!one_each)
    throw invalid(fmt::format(
        ":regress answers one number per example; signature \"{}\" predicts [{}] (use :predict)",
        signature_name, fmt::join(shape, ", ")));
  return output;
}

std::string regress_response(const HostTensor& predictions) {
  std::vector<std::string> values;
  for (double value : predictions.numbers)
    values.push_back(format_float(value, predictions.dtype == DType::kFloat32));
  return fmt::format("{{\"results\": [{}]}}", fmt::join(values, ", "));
}

}  // namespace kiln::serving
