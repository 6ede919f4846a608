#pragma once
// What the regression metrics share: outputs and targets of the same shape, every non-batch
// element an output of its own (a [batch] target fits a [batch, 1] output), and for mse and mae
// the mean over all elements of a function of the error. With the same number of examples
// per output, that mean is also scikit-learn's uniform average of the per-output means.
// Thread-safety: as Metric.

#include <utility>

#include "kiln/metrics/device_sum.h"
#include "kiln/metrics/metric.h"

namespace kiln::metrics {

/// `output` and `target` as [batch, outputs] float64 tensors; a kiln::Error naming `metric` and
/// both shapes when the shapes differ.
std::pair<torch::Tensor, torch::Tensor> as_outputs(const char* metric, const torch::Tensor& output,
                                                   const torch::Tensor& target);

class MeanErrorMetric : public Metric {
 public:
  explicit MeanErrorMetric(const char* name) : name_(name) {}
  void reset() override {
    total_.reset();
    count_ = 0;
  }
  void update(const torch::Tensor& output, const torch::Tensor& target) override;
  std::vector<double> sums() const override { return {total_.value(), count_}; }
  void set_sums(const std::vector<double>& sums) override;
  double value() const override { return count_ > 0 ? total_.value() / count_ : 0.0; }

 protected:
  /// The per-element quantity averaged: the squared or absolute error.
  virtual torch::Tensor per_element(const torch::Tensor& error) const = 0;

 private:
  const char* name_;
  DeviceSum total_;
  double count_ = 0;
};

}  // namespace kiln::metrics
