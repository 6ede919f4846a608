#include "kiln/export/onnx/unrolled_recurrent.h"

#include <fmt/format.h>

namespace kiln::exports::onnx_export {
namespace {

// One direction of one layer: its PyTorch weights (w_ih, w_hh and the biases, or undefined).
struct DirectionWeights {
  at::Tensor input, hidden, input_bias, hidden_bias;
};

DirectionWeights direction_weights(const RecurrentLayers& layers, int64_t layer, int64_t d) {
  int64_t per_direction = layers.biases ? 4 : 2;
  size_t at = static_cast<size_t>((layer * layers.directions + d) * per_direction);
  DirectionWeights w{layers.params.at(at), layers.params.at(at + 1), {}, {}};
  if (layers.biases) {
    w.input_bias = layers.params.at(at + 2);
    w.hidden_bias = layers.params.at(at + 3);
  }
  return w;
}

// x W^T + bias as a Gemm over the weight as trained (transB), the bias left out when undefined.
std::string gemm(Context& c, const std::string& x, const at::Tensor& weight,
                 const at::Tensor& bias) {
  std::vector<std::string> inputs = {x, c.initializer(weight)};
  if (bias.defined()) inputs.push_back(c.initializer(bias));
  return c.add1("Gemm", inputs, {{"transB", int64_t{1}}});
}

std::string plus_bias(Context& c, const std::string& x, const at::Tensor& bias) {
  return bias.defined() ? c.add1("Add", {x, c.initializer(bias)}) : x;
}

// One LSTM step (gates i f g o, as PyTorch orders them); `h` and `cell` are "" at the first step,
// when both are zeros.
std::string lstm_step(Context& c, const DirectionWeights& w, const std::string& x, std::string h,
                      std::string* cell) {
  at::Tensor bias;
  if (w.input_bias.defined()) bias = w.input_bias + w.hidden_bias;
  std::string gates = gemm(c, x, w.input, bias);
  if (!h.empty()) gates = c.add1("Add", {gates, gemm(c, h, w.hidden, {})});
  std::vector<std::string> g = c.add("Split", {gates}, {{"axis", int64_t{1}}}, 4);
  std::string in = c.add1("Sigmoid", {g[0]}), forget = c.add1("Sigmoid", {g[1]});
  std::string candidate = c.add1("Tanh", {g[2]}), out = c.add1("Sigmoid", {g[3]});
  std::string added = c.add1("Mul", {in, candidate});
  *cell = cell->empty() ? added : c.add1("Add", {c.add1("Mul", {forget, *cell}), added});
  return c.add1("Mul", {out, c.add1("Tanh", {*cell})});
}

// One GRU step (gates r z n, as PyTorch orders them): h' = n + z (h - n), which is
// (1 - z) n + z h; at the first step h is zeros and h' = n - z n.
std::string gru_step(Context& c, const DirectionWeights& w, const std::string& x,
                     const std::string& h) {
  std::vector<std::string> gx =
      c.add("Split", {gemm(c, x, w.input, w.input_bias)}, {{"axis", int64_t{1}}}, 3);
  std::vector<at::Tensor> hidden_biases;
  if (w.hidden_bias.defined()) hidden_biases = w.hidden_bias.chunk(3);
  std::string r, z, hn;
  if (h.empty()) {
    auto bias = [&](size_t i) { return hidden_biases.empty() ? at::Tensor() : hidden_biases[i]; };
    r = c.add1("Sigmoid", {plus_bias(c, gx[0], bias(0))});
    z = c.add1("Sigmoid", {plus_bias(c, gx[1], bias(1))});
    hn = hidden_biases.empty() ? "" : c.initializer(bias(2));
  } else {
    std::vector<std::string> gh =
        c.add("Split", {gemm(c, h, w.hidden, w.hidden_bias)}, {{"axis", int64_t{1}}}, 3);
    r = c.add1("Sigmoid", {c.add1("Add", {gx[0], gh[0]})});
    z = c.add1("Sigmoid", {c.add1("Add", {gx[1], gh[1]})});
    hn = gh[2];
  }
  std::string n =
      c.add1("Tanh", {hn.empty() ? gx[2] : c.add1("Add", {gx[2], c.add1("Mul", {r, hn})})});
  if (h.empty()) return c.add1("Sub", {n, c.add1("Mul", {z, n})});
  return c.add1("Add", {n, c.add1("Mul", {z, c.add1("Sub", {h, n})})});
}

// One direction over every step: its hidden state at each step, in the steps' order.
std::vector<std::string> run_direction(Context& c, const RecurrentLayers& layers,
                                       const DirectionWeights& w,
                                       const std::vector<std::string>& steps, bool backwards) {
  std::vector<std::string> states(steps.size());
  std::string h, cell;
  for (size_t k = 0; k < steps.size(); ++k) {
    size_t t = backwards ? steps.size() - 1 - k : k;
    h = layers.lstm ? lstm_step(c, w, steps[t], h, &cell) : gru_step(c, w, steps[t], h);
    states[t] = h;
  }
  return states;
}

}  // namespace

UnrolledOutputs write_unrolled(Context& c, const RecurrentLayers& layers, const std::string& x,
                               std::vector<int64_t> batch_first_shape) {
  // Each step's input [batch, features]: a Slice of the step, its dimension dropped.
  std::vector<std::string> steps;
  int64_t count = batch_first_shape.at(1);
  for (int64_t t = 0; t < count; ++t) {
    std::string step =
        c.add1("Slice", {x, c.integers_initializer({t}), c.integers_initializer({t + 1}),
                         c.integers_initializer({1})});
    steps.push_back(c.add1("Reshape", {step, c.integers_initializer({0, -1})}));
  }
  UnrolledOutputs out;
  for (int64_t layer = 0; layer < layers.layers; ++layer) {
    std::vector<std::vector<std::string>> directions;
    for (int64_t d = 0; d < layers.directions; ++d) {
      directions.push_back(
          run_direction(c, layers, direction_weights(layers, layer, d), steps, d == 1));
      out.last_states.push_back(d == 1 ? directions.back().front() : directions.back().back());
    }
    for (size_t t = 0; t < steps.size(); ++t)
      steps[t] = directions.size() == 1 ? directions[0][t]
                                        : c.add1("Concat", {directions[0][t], directions[1][t]},
                                                 {{"axis", int64_t{1}}});
  }
  // [batch, steps, directions * hidden]: each step's [batch, 1, features], joined.
  std::vector<std::string> expanded;
  for (const auto& step : steps)
    expanded.push_back(c.add1("Reshape", {step, c.integers_initializer({0, 1, -1})}));
  out.output =
      expanded.size() == 1 ? expanded.front() : c.add1("Concat", expanded, {{"axis", int64_t{1}}});
  return out;
}

}  // namespace kiln::exports::onnx_export
