#include "kiln/metrics/regression.h"

#include "kiln/core/error.h"

namespace kiln::metrics {

std::pair<torch::Tensor, torch::Tensor> as_outputs(const char* metric, const torch::Tensor& output,
                                                   const torch::Tensor& target) {
  torch::Tensor matched = target;
  if (output.dim() == 2 && output.size(1) == 1 && target.dim() == 1) matched = target.unsqueeze(1);
  // torch would broadcast [batch, 1] against [batch] into [batch, batch]: a silent wrong value.
  KILN_CHECK(output.dim() >= 1 && output.sizes() == matched.sizes(),
             "{} expects outputs and targets of the same shape, got outputs {} and targets {}",
             metric, shape_of(output), shape_of(target));
  int64_t batch = output.size(0);
  return {output.reshape({batch, -1}).to(torch::kDouble),
          matched.reshape({batch, -1}).to(torch::kDouble)};
}

void MeanErrorMetric::update(const torch::Tensor& output, const torch::Tensor& target) {
  auto [predicted, truth] = as_outputs(name_, output, target);
  total_.add(per_element(predicted - truth).sum());
  count_ += double(predicted.numel());
}

void MeanErrorMetric::set_sums(const std::vector<double>& sums) {
  KILN_ASSERT(sums.size() == 2);
  total_.set(sums[0]);
  count_ = sums[1];
}

}  // namespace kiln::metrics
