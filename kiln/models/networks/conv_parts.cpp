#include "kiln/models/networks/conv_parts.h"

#include "kiln/core/error.h"
#include "kiln/models/layer.h"

namespace kiln::models {

void init_like_torchvision(torch::nn::Module& network, double linear_std) {
  torch::NoGradGuard no_grad;
  for (auto& module : network.modules(/*include_self=*/false)) {
    if (auto* conv = module->as<torch::nn::Conv2d>()) {
      torch::nn::init::kaiming_normal_(conv->weight, 0.0, torch::kFanOut, torch::kReLU);
      if (conv->bias.defined()) conv->bias.zero_();
    } else if (auto* norm = module->as<torch::nn::BatchNorm2d>()) {
      norm->weight.fill_(1);
      norm->bias.zero_();
    } else if (auto* linear = module->as<torch::nn::Linear>(); linear && linear_std > 0) {
      linear->weight.normal_(0, linear_std);
      linear->bias.zero_();
    }
  }
}

void check_image_input(const std::vector<int64_t>& input, const char* network) {
  KILN_CHECK(input.size() == 3, "{} expects images [channels, height, width], got {}", network,
             shape_text(input));
}

}  // namespace kiln::models
