// Bodies of raw-feature examples as `kiln serve` reads them for a model trained on feature columns
// (serving/rest/example_request.h): :classify and :regress examples with their context, and
// :predict instances or columns of features. Any bytes give examples or a ServingError, never a
// crash; the first byte picks the reader. Every feature read holds values of its one kind only
// (none for a missing value), and a :predict of features names only the features the model reads.

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "kiln/serving/rest/example_request.h"
#include "kiln/serving/serving_error.h"

namespace {

using kiln::io::Feature;

const std::vector<std::string> kFeatures = {"color", "size", "tags"};

void check_feature(const Feature& feature) {
  size_t bytes = feature.bytes.size(), floats = feature.floats.size(), ints = feature.ints.size();
  bool consistent = feature.kind == Feature::Kind::kNone    ? bytes + floats + ints == 0
                    : feature.kind == Feature::Kind::kBytes ? floats + ints == 0 && bytes > 0
                    : feature.kind == Feature::Kind::kFloat ? bytes + ints == 0 && floats > 0
                                                            : bytes + floats == 0 && ints > 0;
  if (!consistent) std::abort();
}

void check(const kiln::serving::ExamplesRequest& request, bool only_known) {
  for (const kiln::io::Features& example : request.examples)
    for (const auto& [name, feature] : example) {
      check_feature(feature);
      if (only_known && name != "color" && name != "size" && name != "tags") std::abort();
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string body(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    if (data[0] & 1) {
      check(kiln::serving::parse_examples_request(body), false);
    } else if (auto request =
                   kiln::serving::parse_feature_predict_request(body, kFeatures, {"input"})) {
      check(*request, true);
    }
  } catch (const kiln::serving::ServingError&) {
  }
  return 0;
}
