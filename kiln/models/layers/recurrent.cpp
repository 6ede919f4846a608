#include "kiln/models/layers/recurrent.h"

#include <fmt/format.h>

#include <cmath>

namespace kiln::models {

void RecurrentOptions::describe(Schema& s) {
  s.field("hidden", hidden, "Size of the hidden state.").min(1).require();
  s.field("layers", layers, "Recurrent layers stacked, each reading the one below.").min(1);
  s.field("bidirectional", bidirectional,
          "Also read each sequence backwards; outputs join both directions.");
  s.field("dropout", dropout, "Dropout between stacked layers while training.").in_range(0, 1);
  s.field("output", output,
          "last: the final state of the top layer ([hidden], both directions joined); sequence: "
          "the top layer's output at every step ([steps, hidden]).");
}

namespace {

class RecurrentImpl : public torch::nn::Module, public CountsMultiplyAccumulates {
 public:
  RecurrentImpl(int64_t features, const RecurrentOptions& o, RecurrentCell cell)
      : o_(o), cell_(cell) {
    int64_t gates = cell == RecurrentCell::kLstm ? 4 : 3;
    int64_t directions = o.bidirectional ? 2 : 1;
    // torch.nn.RNNBase's initialisation: U(-1/sqrt(hidden), 1/sqrt(hidden)) for every tensor.
    double bound = 1.0 / std::sqrt(double(o.hidden));
    auto make = [&](const std::string& name, std::vector<int64_t> shape) {
      params_.push_back(register_parameter(name, torch::empty(shape).uniform_(-bound, bound)));
    };
    // The order torch's kernels take them in: per layer, per direction, w_ih w_hh b_ih b_hh.
    for (int64_t layer = 0; layer < o.layers; ++layer) {
      int64_t in = layer == 0 ? features : o.hidden * directions;
      for (int64_t d = 0; d < directions; ++d) {
        std::string suffix = fmt::format("_l{}{}", layer, d == 1 ? "_reverse" : "");
        make("weight_ih" + suffix, {gates * o.hidden, in});
        make("weight_hh" + suffix, {gates * o.hidden, o.hidden});
        make("bias_ih" + suffix, {gates * o.hidden});
        make("bias_hh" + suffix, {gates * o.hidden});
      }
    }
  }

  // Each step multiplies the input and the state by every weight matrix once.
  int64_t multiply_accumulates(const ModuleCall& call) const override {
    int64_t per_step = 0;
    for (const auto& p : params_)
      if (p.dim() == 2) per_step += p.numel();
    return call.input[1] * per_step;
  }

  torch::Tensor forward(const torch::Tensor& x) {
    int64_t directions = o_.bidirectional ? 2 : 1;
    torch::Tensor h0 = torch::zeros({o_.layers * directions, x.size(0), o_.hidden}, x.options());
    torch::Tensor output, last_states;
    if (cell_ == RecurrentCell::kLstm) {
      auto result = torch::lstm(x, {h0, h0}, params_, true, o_.layers, o_.dropout, is_training(),
                                o_.bidirectional, /*batch_first=*/true);
      output = std::get<0>(result);
      last_states = std::get<1>(result);
    } else {
      std::tie(output, last_states) = torch::gru(x, h0, params_, true, o_.layers, o_.dropout,
                                                 is_training(), o_.bidirectional, true);
    }
    if (o_.output == RecurrentOutput::kSequence) return output;
    // The top layer's final states, forward then backward: [batch, hidden * directions].
    return last_states.slice(0, -directions).transpose(0, 1).reshape({x.size(0), -1});
  }

 private:
  RecurrentOptions o_;
  RecurrentCell cell_;
  std::vector<torch::Tensor> params_;
};
TORCH_MODULE(Recurrent);

}  // namespace

BuiltLayer build_recurrent(const Shape& input, const RecurrentOptions& o, RecurrentCell cell) {
  std::string name = enum_name(cell);
  KILN_CHECK(input.size() == 2,
             "{} expects sequences [steps, features], got {}; a 1-D signal [channels, length] "
             "needs its axes swapped",
             name, shape_text(input));
  KILN_CHECK(o.layers > 1 || o.dropout == 0.0,
             "{} dropout applies between stacked layers; with layers: 1 it must be 0", name);
  int64_t width = o.hidden * (o.bidirectional ? 2 : 1);
  Shape output = o.output == RecurrentOutput::kSequence ? Shape{input[0], width} : Shape{width};
  return {torch::nn::AnyModule(Recurrent(input[1], o, cell)), output};
}

}  // namespace kiln::models
