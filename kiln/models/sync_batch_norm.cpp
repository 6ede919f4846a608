#include "kiln/models/sync_batch_norm.h"

namespace torch::nn {

// As torch prints them.
template <>
void BatchNormImplBase<1, BatchNorm1dImpl>::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::BatchNorm1d(" << options.num_features() << ", eps=" << options.eps()
         << ", affine=" << options.affine() << ")";
}
template <>
void BatchNormImplBase<2, BatchNorm2dImpl>::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::BatchNorm2d(" << options.num_features() << ", eps=" << options.eps()
         << ", affine=" << options.affine() << ")";
}

}  // namespace torch::nn

namespace kiln::models {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// The sum over the ranks as a step of autograd: each rank's statistics enter every rank's
// normalization, so the gradient reaching them is the sum of every rank's.
class SumOverRanksFunction : public torch::autograd::Function<SumOverRanksFunction> {
 public:
  static torch::Tensor forward(AutogradContext* context, const torch::Tensor& local,
                               const SumOverRanks* sum) {
    // The sum outlives the backward pass: the modules hold it for as long as they train.
    context->saved_data["sum"] = reinterpret_cast<int64_t>(sum);
    return (*sum)(local);
  }
  static variable_list backward(AutogradContext* context, variable_list gradients) {
    const auto* sum = reinterpret_cast<const SumOverRanks*>(context->saved_data["sum"].toInt());
    return {(*sum)(gradients[0].contiguous()), torch::Tensor()};
  }
};

// [1, C, 1, ...] for per-channel values against an input of `rank` dimensions.
torch::Tensor per_channel(const torch::Tensor& values, int64_t rank) {
  std::vector<int64_t> shape(size_t(rank), 1);
  shape[1] = values.size(0);
  return values.view(shape);
}

}  // namespace

torch::Tensor synchronized_batch_norm(const torch::Tensor& input,
                                      torch::nn::BatchNormOptions const& options,
                                      const torch::Tensor& weight, const torch::Tensor& bias,
                                      torch::Tensor& running_mean, torch::Tensor& running_var,
                                      torch::Tensor& batches_tracked, const SumOverRanks& sum) {
  int64_t channels = input.size(1);
  std::vector<int64_t> over = {0};
  for (int64_t d = 2; d < input.dim(); ++d) over.push_back(d);
  torch::Tensor x = input.to(torch::kFloat64);
  torch::Tensor count =
      torch::full({1}, double(input.numel() / channels),
                  torch::TensorOptions().dtype(torch::kFloat64).device(x.device()));
  torch::Tensor local = torch::cat({x.sum(over), (x * x).sum(over), count});
  torch::Tensor total = SumOverRanksFunction::apply(local, &sum);
  torch::Tensor n = total.narrow(0, 2 * channels, 1);
  torch::Tensor mean = total.narrow(0, 0, channels) / n;
  torch::Tensor variance = (total.narrow(0, channels, channels) / n - mean * mean).clamp_min(0);
  torch::Tensor normalized = (x - per_channel(mean, input.dim())) *
                             per_channel((variance + options.eps()).rsqrt(), input.dim());
  torch::Tensor output = normalized.to(input.scalar_type());
  if (options.affine())
    output = output * per_channel(weight, input.dim()) + per_channel(bias, input.dim());
  if (options.track_running_stats()) {
    torch::NoGradGuard no_grad;
    batches_tracked += 1;
    double examples = n.item<double>();
    double momentum =
        options.momentum() ? *options.momentum() : 1.0 / double(batches_tracked.item<int64_t>());
    // The running variance is the unbiased one, as torch keeps it.
    torch::Tensor unbiased = variance * (examples / std::max(examples - 1, 1.0));
    running_mean.mul_(1 - momentum).add_(mean.to(running_mean.scalar_type()), momentum);
    running_var.mul_(1 - momentum).add_(unbiased.to(running_var.scalar_type()), momentum);
  }
  return output;
}

int synchronize_batch_norms(torch::nn::Module& model, SumOverRanks sum) {
  auto shared = std::make_shared<const SumOverRanks>(std::move(sum));
  int synchronized = 0;
  for (const auto& module : model.modules(/*include_self=*/true)) {
    if (auto one = std::dynamic_pointer_cast<BatchNorm1dImpl>(module)) {
      one->synchronize(shared);
      ++synchronized;
    } else if (auto two = std::dynamic_pointer_cast<BatchNorm2dImpl>(module)) {
      two->synchronize(shared);
      ++synchronized;
    }
  }
  return synchronized;
}

}  // namespace kiln::models
