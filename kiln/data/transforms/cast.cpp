// cast: converts the input to another dtype, then multiplies by `scale` (e.g. uint8 pixels to
// float in [0, 1] with `dtype: float32, scale: 0.00392156862745098`).

#include "kiln/data/dtype_names.h"
#include "kiln/data/transform.h"

namespace kiln::data {
namespace {

// The dtypes cast converts to, by their names (dtype_names.h).
enum class CastDtype { kFloat32, kFloat64, kFloat16, kBfloat16, kUint8, kInt32, kInt64 };
EnumNameList<CastDtype> enum_names(CastDtype) {
  return {{CastDtype::kFloat32, "float32"}, {CastDtype::kFloat64, "float64"},
          {CastDtype::kFloat16, "float16"}, {CastDtype::kBfloat16, "bfloat16"},
          {CastDtype::kUint8, "uint8"},     {CastDtype::kInt32, "int32"},
          {CastDtype::kInt64, "int64"}};
}

struct CastOptions {
  CastDtype dtype = CastDtype::kFloat32;
  double scale = 1.0;
  void describe(Schema& s) {
    s.field("dtype", dtype, "The dtype to convert to.");
    s.field("scale", scale, "A factor applied after the conversion (1 leaves values as they are).");
  }
};

class Cast : public Transform {
 public:
  explicit Cast(const CastOptions& o) : dtype_(*dtype_named(enum_name(o.dtype))), scale_(o.scale) {}

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
