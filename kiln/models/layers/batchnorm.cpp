// batchnorm: batch normalisation, 1-D or 2-D by the rank of its input; torch's modules, which a
// data-parallel job can synchronize across its ranks (sync_batch_norm.h).

#include "kiln/models/layer.h"
#include "kiln/models/sync_batch_norm.h"

namespace kiln::models {
namespace {

struct BatchNormOptions {
  double momentum = 0.1;
  double eps = 1e-5;
  void describe(Schema& s) {
    s.field("momentum", momentum, "Weight of each batch in the running statistics.").in_range(0, 1);
    s.field("eps", eps, "Added to the variance for numerical stability.").min(0);
  }
};

class BatchNorm : public Layer {
 public:
  explicit BatchNorm(const BatchNormOptions& options) : o_(options) {}
  BuiltLayer build(const Shape& input) const override {
    KILN_CHECK(input.size() >= 1 && input.size() <= 3,
               "batchnorm expects inputs [features], [channels, length] or [channels, height, "
               "width], got {}",
               shape_text(input));
    if (input.size() == 3) {
      auto options = torch::nn::BatchNorm2dOptions(input[0]).momentum(o_.momentum).eps(o_.eps);
      return {torch::nn::AnyModule(BatchNorm2d(options)), input};
    }
    auto options = torch::nn::BatchNorm1dOptions(input[0]).momentum(o_.momentum).eps(o_.eps);
    return {torch::nn::AnyModule(BatchNorm1d(options)), input};
  }

 private:
  BatchNormOptions o_;
};

}  // namespace

KILN_REGISTER(layer_registry, "batchnorm", BatchNorm, BatchNormOptions,
              "Batch normalisation over the channel (first) dimension, 1-D or 2-D by input rank.");

}  // namespace kiln::models
