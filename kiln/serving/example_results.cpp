#include "kiln/serving/example_results.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kiln/serving/serving_error.h"

namespace kiln::serving {
namespace {

ServingError invalid(const std::string& message) {
  return ServingError(StatusCode::kInvalidArgument, message);
}

// How each API names the method, the signature's field and the method that takes any signature.
struct ApiWords {
  const char* classify;
  const char* regress;
  const char* signature_field;
  const char* predict;
};
ApiWords words_of(ExamplesApi api) {
  return api == ExamplesApi::kGrpc
             ? ApiWords{"Classify", "Regress", "model_spec.signature_name", "Predict"}
             : ApiWords{":classify", ":regress", "\"signature_name\"", ":predict"};
}

// The output `name` of the signature, or an error that says which signatures have one.
const SignatureOutput& output_named(const Signatures& signatures, const std::string& signature_name,
                                    const std::string& name, const char* method,
                                    const ApiWords& words, const std::string& why) {
  const Signature& signature = signatures.at(signature_name);
  auto found = signature.outputs.find(name);
  if (found != signature.outputs.end()) return found->second;
  std::vector<std::string> having;
  for (const auto& [other, candidate] : signatures)
    if (candidate.outputs.count(name)) having.push_back("\"" + other + "\"");
  throw invalid(fmt::format(
      "{} needs an output '{}' ({}); signature \"{}\" has none{}", method, name, why,
      signature_name,
      having.empty()
          ? fmt::format("; use {}", words.predict)
          : fmt::format(": give {} one of {}", words.signature_field, fmt::join(having, ", "))));
}

std::string label_of(int64_t id, const std::vector<std::string>& labels) {
  return id < static_cast<int64_t>(labels.size()) ? labels[id] : std::to_string(id);
}

// Examples and classes of a probabilities tensor: [n, k], or [n] as one column.
std::pair<int64_t, int64_t> rows_and_columns(const HostTensor& tensor) {
  int64_t rows = tensor.shape.empty() ? 1 : tensor.shape[0];
  int64_t columns = tensor.shape.size() < 2 ? 1 : tensor.size() / std::max<int64_t>(rows, 1);
  return {rows, columns};
}

}  // namespace

const SignatureOutput& classify_output(const Signatures& signatures,
                                       const std::string& signature_name, ExamplesApi api) {
  ApiWords words = words_of(api);
  return output_named(signatures, signature_name, "probabilities", words.classify, words,
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

const SignatureOutput& regress_output(const Signatures& signatures,
                                      const std::string& signature_name, ExamplesApi api) {
  ApiWords words = words_of(api);
  const SignatureOutput& output =
      output_named(signatures, signature_name, "predictions", words.regress, words,
                   "a model trained with a regression loss has it");
  const std::vector<int64_t>& shape = output.spec.shape;
  bool one_each = shape.size() == 1 || (shape.size() == 2 && shape[1] == 1);
  if (!one_each)
    throw invalid(
        fmt::format("{} answers one number per example; signature \"{}\" predicts [{}] (use {})",
                    words.regress, signature_name, fmt::join(shape, ", "), words.predict));
  return output;
}

Signatures shown_signatures(const Servable& servable) {
  Signatures shown = servable.signatures();
  const ExampleEncoder* encoder = servable.examples();
  if (!encoder) return shown;
  auto answers = [&shown](const std::string& name, auto output_of) {
    try {
      output_of(shown, name, ExamplesApi::kRest);
      return true;
    } catch (const ServingError&) {
      return false;
    }
  };
  for (auto& [name, signature] : shown) {
    if (!encoder->raw_inputs().empty()) signature.inputs = encoder->raw_inputs();
    signature.method = answers(name, classify_output)  ? kClassifyMethod
                       : answers(name, regress_output) ? kRegressMethod
                                                       : kPredictMethod;
  }
  return shown;
}

}  // namespace kiln::serving
