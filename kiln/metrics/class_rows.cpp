#include "kiln/metrics/class_rows.h"

#include "kiln/core/error.h"

namespace kiln::metrics {

ClassRows class_rows(const torch::Tensor& target, int64_t classes, const std::string& metric,
                     DeviceSum& outside) {
  torch::Tensor index = target.to(torch::kInt64);
  if (index.is_cpu()) {  // read element by element: no operator, no wait
    torch::Tensor values = index.contiguous();
    const int64_t* value = values.data_ptr<int64_t>();
    for (int64_t row = 0; row < values.numel(); ++row)
      KILN_CHECK(value[row] >= 0 && value[row] < classes,
                 "{}: target class {} is out of range for {} classes", metric, value[row], classes);
    return {values, torch::ones({values.numel()}, torch::kFloat64)};
  }
  torch::Tensor inside = (index >= 0) & (index < classes);
  outside.add((~inside).sum());
  return {index.masked_fill(~inside, 0), inside.to(torch::kFloat64)};
}

torch::Tensor counted(const torch::Tensor& index, const torch::Tensor& weight, int64_t bins) {
  return torch::zeros({bins}, weight.options()).index_add_(0, index, weight);
}

void refuse_outside(const DeviceSum& outside, int64_t classes, const std::string& metric) {
  double rows = outside.value();
  KILN_CHECK(rows == 0, "{}: {} target classes were out of range for {} classes", metric,
             static_cast<int64_t>(rows), classes);
}

}  // namespace kiln::metrics
