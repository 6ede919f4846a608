// gelu: x * Phi(x), Phi the standard normal CDF, exact or by its tanh approximation.

#include "kiln/models/layer.h"

namespace kiln::models {
namespace {

struct GeluOptions {
  std::string approximate = "none";
  void describe(Schema& s) {
    s.field("approximate", approximate, "none (exact, with erf) or tanh.").one_of({"none", "tanh"});
  }
};

class Gelu : public Layer {
 public:
  explicit Gelu(const GeluOptions& options) : approximate_(options.approximate) {}
  BuiltLayer build(const Shape& input) const override {
    auto options = torch::nn::GELUOptions().approximate(approximate_);
    return {torch::nn::AnyModule(torch::nn::GELU(options)), input};
  }

 private:
  std::string approximate_;
};

}  // namespace

KILN_REGISTER(layer_registry, "gelu", Gelu, GeluOptions,
              "Gaussian error linear unit x * Phi(x), exact or tanh-approximated.");

}  // namespace kiln::models
