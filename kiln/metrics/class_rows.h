#pragma once
// Class-index targets counted into per-class bins without reading the device, for the metrics
// that count by class (precision, recall, f1, confusion_matrix). In host memory a class out of
// range is refused at its batch; on a device that would mean a wait, so such a row is counted
// nowhere and the metric refuses the counts when they are read (the losses check the targets in
// host memory before the metrics see them, so in training this is a second guard).
// Thread-safety: functions of their arguments.

#include <torch/torch.h>

#include <string>

#include "kiln/metrics/device_sum.h"

namespace kiln::metrics {

struct ClassRows {
  torch::Tensor index;   // int64 [batch]: each row's class, 0 where out of range
  torch::Tensor weight;  // float64 [batch]: 1, or 0 for a row out of range
};

/// The rows of class-index `target` for `classes` classes; throws an Error naming `metric` for a
/// class out of range in host memory, and adds those on a device to `outside`.
ClassRows class_rows(const torch::Tensor& target, int64_t classes, const std::string& metric,
                     DeviceSum& outside);

/// `weight` summed into `bins` bins by `index`: a bincount that needs no read of the largest
/// index, so it queues on a GPU like any other operation.
torch::Tensor counted(const torch::Tensor& index, const torch::Tensor& weight, int64_t bins);

/// Throws an Error naming `metric` when `outside` counted any row.
void refuse_outside(const DeviceSum& outside, int64_t classes, const std::string& metric);

}  // namespace kiln::metrics
