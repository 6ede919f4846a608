// reshape: gives each example a new shape with the same number of elements; one entry may be -1
// (inferred).

#include <algorithm>

#include "kiln/models/layer.h"

namespace kiln::models {
namespace {

struct ReshapeOptions {
  std::vector<int64_t> shape;
  void describe(Schema& s) {
    s.field("shape", shape, "The new shape of one example, e.g. [1, 28, 28]; -1 once to infer.")
        .check(
            [](const std::vector<int64_t>& v) {
              int64_t inferred = std::count(v.begin(), v.end(), -1);
              return !v.empty() && inferred <= 1 &&
                     std::all_of(v.begin(), v.end(), [](int64_t d) { return d == -1 || d >= 1; });
            },
            "of sizes >= 1, with at most one -1")
        .require();
  }
};

class Reshape : public Layer {
 public:
  explicit Reshape(const ReshapeOptions& options) : shape_(options.shape) {}
  BuiltLayer build(const Shape& input) const override {
    Shape output = shape_;
    int64_t known = -element_count(output);  // the -1 makes the product negative
    auto inferred = std::find(output.begin(), output.end(), -1);
    if (inferred != output.end()) {
      KILN_CHECK(element_count(input) % known == 0, "reshape: inputs {} do not fit shape {}",
                 shape_text(input), shape_text(shape_));
      *inferred = element_count(input) / known;
    }
    KILN_CHECK(element_count(output) == element_count(input),
               "reshape: inputs {} ({} values) do not fit {}", shape_text(input),
               element_count(input), shape_text(shape_));
    Shape batched = output;
    batched.insert(batched.begin(), -1);
    auto reshape = [batched](const torch::Tensor& x) { return x.reshape(batched); };
    return {torch::nn::AnyModule(torch::nn::Functional(reshape)), output};
  }

 private:
  Shape shape_;
};

}  // namespace

KILN_REGISTER(layer_registry, "reshape", Reshape, ReshapeOptions,
              "Gives each example a new shape with as many elements (-1 once: inferred).");

}  // namespace kiln::models
