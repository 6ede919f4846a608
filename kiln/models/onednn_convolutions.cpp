#include "kiln/models/onednn_convolutions.h"

#include <ATen/Context.h>
#include <ATen/ops/mkldnn_convolution.h>
#include <ATen/ops/mkldnn_reorder_conv2d_weight.h>

#include <optional>
#include <vector>

#include "kiln/models/stack_rewrite.h"

namespace kiln::models {
namespace {

std::vector<int64_t> pair_of(const torch::ExpandingArray<2>& values) {
  return {(*values)[0], (*values)[1]};
}

// The padding's numbers, when given as numbers. LibTorch's options are c10::variants before 2.1
// and std::variants after: the using-directives let overload resolution pick the get_if that fits.
template <class Padding>
const torch::ExpandingArray<2>* explicit_padding(const Padding& padding) {
  using namespace std;  // NOLINT(build/namespaces)
  using namespace c10;  // NOLINT(build/namespaces)
  return get_if<torch::ExpandingArray<2>>(&padding);
}

// A convolution's explicit padding, or nothing for one oneDNN cannot run as it is (padding
// given as "same" or "valid", a padding mode other than zeros, not float32 on the CPU).
std::optional<std::vector<int64_t>> onednn_padding(const torch::nn::Conv2dImpl& conv) {
  const auto& options = conv.options;
  const torch::ExpandingArray<2>* padding = explicit_padding(options.padding());
  bool zeros = options.padding_mode().index() == 0;  // kZeros, the first of the modes
  if (!padding || !zeros || conv.weight.scalar_type() != torch::kFloat32 ||
      !conv.weight.device().is_cpu())
    return std::nullopt;
  return pair_of(*padding);
}

class OneDnnConv2dImpl : public torch::nn::Module {
 public:
  OneDnnConv2dImpl(const torch::nn::Conv2dImpl& conv, std::vector<int64_t> padding)
      : padding_(std::move(padding)),
        stride_(pair_of(conv.options.stride())),
        dilation_(pair_of(conv.options.dilation())),
        groups_(conv.options.groups()) {
    torch::NoGradGuard no_grad;
    weight_ = at::mkldnn_reorder_conv2d_weight(conv.weight.detach().to_mkldnn(), padding_, stride_,
                                               dilation_, groups_);
    if (conv.bias.defined()) bias_ = conv.bias.detach().clone();
  }
  torch::Tensor forward(const torch::Tensor& input) {
    torch::Tensor onednn = input.is_mkldnn() ? input : input.contiguous().to_mkldnn();
    return at::mkldnn_convolution(onednn, weight_,
                                  bias_.defined() ? c10::optional<at::Tensor>(bias_) : c10::nullopt,
                                  padding_, stride_, dilation_, groups_);
  }

 private:
  std::vector<int64_t> padding_, stride_, dilation_;
  int64_t groups_;
  torch::Tensor weight_, bias_;
};
TORCH_MODULE(OneDnnConv2d);

// The last layer of a run in oneDNN's layout, giving an ordinary tensor to what follows.
class DenseAfterImpl : public torch::nn::Module {
 public:
  explicit DenseAfterImpl(torch::nn::AnyModule inner) : inner_(std::move(inner)) {}
  torch::Tensor forward(const torch::Tensor& input) {
    torch::Tensor output = inner_.forward(input);
    return output.is_mkldnn() ? output.to_dense() : output;
  }

 private:
  torch::nn::AnyModule inner_;
};
TORCH_MODULE(DenseAfter);

// Layers that take and give oneDNN's layout as they are.
bool keeps_onednn_layout(const torch::nn::AnyModule& layer) {
  std::shared_ptr<torch::nn::Module> module = layer.ptr();
  return std::dynamic_pointer_cast<torch::nn::ReLUImpl>(module) ||
         std::dynamic_pointer_cast<torch::nn::MaxPool2dImpl>(module) ||
         std::dynamic_pointer_cast<torch::nn::IdentityImpl>(module);
}

int rewrite(torch::nn::SequentialImpl& stack) {
  int converted = 0;
  auto last_in_run = stack.end();  // the run's last layer, or end() outside a run
  auto close_run = [&] {
    if (last_in_run == stack.end()) return;
    *last_in_run = torch::nn::AnyModule(DenseAfter(*last_in_run));
    last_in_run = stack.end();
  };
  for (auto it = stack.begin(); it != stack.end(); ++it) {
    auto conv = std::dynamic_pointer_cast<torch::nn::Conv2dImpl>(it->ptr());
    std::optional<std::vector<int64_t>> padding;
    if (conv) padding = onednn_padding(*conv);
    if (padding) {
      *it = torch::nn::AnyModule(OneDnnConv2d(*conv, *padding));
      last_in_run = it;
      ++converted;
    } else if (last_in_run != stack.end() && keeps_onednn_layout(*it)) {
      last_in_run = it;
    } else {
      close_run();
    }
  }
  close_run();
  return converted;
}

}  // namespace

int run_convolutions_on_onednn(torch::nn::Module& model) {
  return at::hasMKLDNN() ? rewrite_stacks(model, rewrite) : 0;
}

}  // namespace kiln::models
