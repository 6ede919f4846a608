#pragma once
// Options shared by adam and adamw, which differ only in how weight decay is applied.

#include <vector>

#include "kiln/core/schema.h"

namespace kiln::optim {

struct AdamOptionsBase {
  double lr = 1e-3;
  std::vector<double> betas = {0.9, 0.999};
  double eps = 1e-8;
  double weight_decay;
  bool amsgrad = false;

  explicit AdamOptionsBase(double default_weight_decay) : weight_decay(default_weight_decay) {}
  void describe(Schema& s, const char* decay_doc) {
    s.field("lr", lr, "Learning rate.").min(0);
    s.field("betas", betas, "Decay rates of the first and second moment estimates.")
        .check(
            [](const std::vector<double>& b) {
              return b.size() == 2 && b[0] >= 0 && b[0] < 1 && b[1] >= 0 && b[1] < 1;
            },
            "of two items in [0, 1)");
    s.field("eps", eps, "Added to the denominator for numerical stability.").min(0);
    s.field("weight_decay", weight_decay, decay_doc).min(0);
    s.field("amsgrad", amsgrad, "Use the AMSGrad variant (maximum of past second moments).");
  }
};

}  // namespace kiln::optim
