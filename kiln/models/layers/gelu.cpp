// gelu: x * Phi(x), Phi the standard normal CDF, exact or by its tanh approximation.

#include "kiln/models/layer.h"

namespace kiln::models {
namespace {

// Exact gelu or its tanh approximation; the names are torch's.
enum class GeluApproximation { kNone, kTanh };
EnumNameList<GeluApproximation> enum_names(GeluApproximation) {
  return {{GeluApproximation::kNone, "none"}, {GeluApproximation::kTanh, "tanh"}};
}

struct GeluOptions {
  GeluApproximation approximate = GeluApproximation::kNone;
  void describe(Schema& s) {
    s.field("approximate", approximate, "none (exact, with erf) or tanh.");
  }
};

class Gelu : public Layer {
 public:
  explicit Gelu(const GeluOptions& options) : approximate_(options.approximate) {}
  BuiltLayer build(const Shape& input) const override {
    // torch::nn::GELUOptions takes the approximation by its name.
    auto options = torch::nn::GELUOptions().approximate(enum_name(approximate_));
    return {torch::nn::AnyModule(torch::nn::GELU(options)), input};
  }

 private:
  GeluApproximation approximate_;
};

}  // namespace

KILN_REGISTER(layer_registry, "gelu", Gelu, GeluOptions,
              "Gaussian error linear unit x * Phi(x), exact or tanh-approximated.");

}  // namespace kiln::models
