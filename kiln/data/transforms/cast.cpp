// cast: converts the input to another dtype, then multiplies by `scale` (e.g. uint8 pixels to
// float in [0, 1] with `dtype: float32, scale: 0.00392156862745098`).

#include "kiln/data/transform.h"

namespace kiln::data {
namespace {

const std::map<std::string, torch::ScalarType>& dtypes() {
  static const std::map<std::string, torch::ScalarType> table = {
      {"float32", torch::kFloat32},   {"float64", torch::kFloat64}, {"float16", torch::kFloat16},
      {"bfloat16", torch::kBFloat16}, {"uint8", torch::kUInt8},     {"int32", torch::kInt32},
      {"int64", torch::kInt64}};
  return table;
}

struct CastOptions {
  std::string dtype = "float32";
  double scale = 1.0;
  void describe(Schema& s) {
    s.field("dtype", dtype, "The dtype to convert to.")
        .one_of({"float32", "float64", "float16", "bfloat16", "uint8", "int32", "int64"});
    s.field("scale", scale, "A factor applied after the conversion (1 leaves values as they are).");
  }
};

class Cast : public Transform {
 public:
  explicit Cast(const CastOptions& o) : dtype_(dtypes().at(o.dtype)), scale_(o.scale) {}

  torch::Tensor apply(const torch::Tensor& batch, at::Generator&) const override {
    if (scale_ == 1.0) return batch.to(dtype_);
    // Scale in a wide type first so that uint8 -> float32 * (1/255) is not rounded twice.
    return (batch.to(torch::kFloat64) * scale_).to(dtype_);
  }

 private:
  torch::ScalarType dtype_;
  double scale_;
};

}  // namespace

KILN_REGISTER(transform_registry, "cast", Cast, CastOptions,
              "Converts the input to a dtype, then multiplies it by scale.");

}  // namespace kiln::data
