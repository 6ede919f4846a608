#pragma once
// Pieces the convolutional zoo networks (resnet, wide_resnet, vgg, mobilenet_v2) share: their
// classifier base (classifier.h), padded convolutions and torchvision's initialisation.

#include <torch/torch.h>

#include "kiln/models/networks/classifier.h"

namespace kiln::models {

/// A square convolution padded to keep the size at stride 1 (kernel / 2 zeros per side).
inline torch::nn::Conv2d padded_conv(int64_t in, int64_t out, int64_t kernel, int64_t stride = 1,
                                     bool bias = false, int64_t groups = 1) {
  return torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, kernel)
                               .stride(stride)
                               .padding(kernel / 2)
                               .groups(groups)
                               .bias(bias));
}

/// torchvision's initialisation of its classifiers: convolutions He-normal over fan-out, batch
/// norms scale 1 and shift 0; linear layers keep torch's default unless `linear_std` > 0 (then
/// normal(0, std) with zero bias, as VGG and MobileNetV2 do).
void init_like_torchvision(torch::nn::Module& network, double linear_std = 0.0);

/// Fails naming `network` unless `input` is an image [channels, height, width].
void check_image_input(const std::vector<int64_t>& input, const char* network);

}  // namespace kiln::models
