// ONNX forms of aten's recurrent layers (lstm, gru): one ONNX LSTM or GRU per layer, its weights
// with the gates in ONNX's order, and the layout moved between PyTorch's [batch, steps, ...] or
// [steps, batch, ...] and ONNX's [steps, directions, batch, hidden]. Initial states of zeros
// (what kiln's layers start from) are left out: ONNX starts from zeros too.

#include <fmt/format.h>

#include "kiln/export/onnx/onnx_context.h"
#include "kiln/export/onnx/unrolled_recurrent.h"

namespace kiln::exports::onnx_export {
namespace {

using jit_node = torch::jit::Node;
using torch::jit::Value;

struct Cell {
  const char* op;
  int64_t gates;
  std::vector<int64_t> order;  // ONNX's gates as indices of PyTorch's
};
// PyTorch's LSTM gates are i f g o, ONNX's i o f c; GRU's r z n, ONNX's z r h.
const Cell kLstm = {"LSTM", 4, {0, 3, 1, 2}};
const Cell kGru = {"GRU", 3, {1, 0, 2}};

at::Tensor gates_reordered(const at::Tensor& weight, const Cell& cell) {
  std::vector<at::Tensor> parts = weight.chunk(cell.gates, 0), ordered;
  for (int64_t i : cell.order) ordered.push_back(parts[static_cast<size_t>(i)]);
  return at::cat(ordered, 0);
}

// A zeros initial state: aten::zeros, or the list of them an LSTM takes.
bool starts_from_zeros(const Value* state) {
  const jit_node& made = Context::producer(state);
  if (made.kind() == c10::aten::zeros) return true;
  if (made.kind() != c10::prim::ListConstruct) return false;
  for (const auto* item : made.inputs())
    if (Context::producer(item).kind() != c10::aten::zeros) return false;
  return true;
}

// One layer's W, R and B stacked over its directions, from PyTorch's per-direction w_ih, w_hh,
// b_ih, b_hh.
std::vector<std::string> layer_weights(Context& c, const Cell& cell,
                                       const std::vector<at::Tensor>& params, int64_t layer,
                                       int64_t directions, bool biases) {
  int64_t per_direction = biases ? 4 : 2;
  std::vector<at::Tensor> w, r, b;
  for (int64_t d = 0; d < directions; ++d) {
    size_t at = static_cast<size_t>((layer * directions + d) * per_direction);
    w.push_back(gates_reordered(params[at], cell));
    r.push_back(gates_reordered(params[at + 1], cell));
    at::Tensor input_bias = biases ? gates_reordered(params[at + 2], cell)
                                   : at::zeros({params[at].size(0)}, params[at].options());
    at::Tensor hidden_bias = biases ? gates_reordered(params[at + 3], cell) : input_bias;
    b.push_back(at::cat({input_bias, hidden_bias}));
  }
  return {c.initializer(at::stack(w)), c.initializer(at::stack(r)), c.initializer(at::stack(b))};
}

// The layers as their steps (WriteOptions::portable), in PyTorch's layout; the last
// hidden states [layers * directions, batch, hidden] are made only if something takes them.
void unrolled(const jit_node& node, Context& c, const RecurrentLayers& layers, bool batch_first,
              int64_t hidden) {
  std::string x = c.tensor(node.input(0));
  std::vector<int64_t> shape = c.shape(node.input(0));
  const std::vector<int64_t> swap = {1, 0, 2};
  if (!batch_first) {
    x = c.add1("Transpose", {x}, {{"perm", swap}});
    std::swap(shape[0], shape[1]);
  }
  UnrolledOutputs out = write_unrolled(c, layers, x, shape);
  c.bind(node.output(0),
         batch_first ? out.output : c.add1("Transpose", {out.output}, {{"perm", swap}}));
  c.defer(node.output(1), [&c, states = out.last_states, hidden] {
    std::vector<std::string> parts;
    for (const auto& state : states)
      parts.push_back(c.add1("Reshape", {state, c.integers_initializer({1, -1, hidden})}));
    return parts.size() == 1 ? parts.front() : c.add1("Concat", parts, {{"axis", int64_t{0}}});
  });
  if (node.outputs().size() > 2)
    c.defer(node.output(2),
            [&c]() -> std::string { c.refuse("an LSTM's last cell state is not written"); });
}

// lstm(x, hx, params, has_biases, layers, dropout, train, bidirectional, batch_first) and
// gru(x, hx, ...): the same arguments.
void recurrent(const jit_node& node, Context& c, const Cell& cell) {
  if (!starts_from_zeros(node.input(1)))
    c.refuse("a recurrent layer is written only when it starts from zeros");
  if (c.boolean(node.input(6))) c.refuse("a recurrent layer in training mode");
  const jit_node& list = Context::producer(node.input(2));
  if (list.kind() != c10::prim::ListConstruct) c.refuse("its weights are not a list of constants");
  std::vector<at::Tensor> params;
  for (const auto* p : list.inputs()) params.push_back(c.weight(p));
  bool biases = c.boolean(node.input(3)), batch_first = c.boolean(node.input(8));
  int64_t layers = c.integer(node.input(4));
  int64_t directions = c.boolean(node.input(7)) ? 2 : 1;
  int64_t hidden = params.at(1).size(1);
  if (c.options().portable)
    return unrolled(node, c, {cell.gates == 4, layers, directions, biases, params}, batch_first,
                    hidden);

  std::string x = c.tensor(node.input(0));
  if (batch_first) x = c.add1("Transpose", {x}, {{"perm", std::vector<int64_t>{1, 0, 2}}});
  std::vector<std::string> last_states;
  for (int64_t layer = 0; layer < layers; ++layer) {
    std::vector<std::string> inputs = {x};
    for (auto& w : layer_weights(c, cell, params, layer, directions, biases)) inputs.push_back(w);
    std::vector<onnx::Attribute> attributes = {
        {"hidden_size", hidden},
        {"direction", std::string(directions == 2 ? "bidirectional" : "forward")}};
    if (cell.gates == 3) attributes.push_back({"linear_before_reset", int64_t{1}});
    std::vector<std::string> out = c.add(cell.op, inputs, attributes, 2);
    last_states.push_back(out[1]);
    // Y [steps, directions, batch, hidden] -> [steps, batch, directions * hidden].
    std::string steps_first =
        c.add1("Transpose", {out[0]}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}});
    x = c.add1("Reshape", {steps_first, c.integers_initializer({0, 0, -1})});
  }
  if (batch_first) x = c.add1("Transpose", {x}, {{"perm", std::vector<int64_t>{1, 0, 2}}});
  c.bind(node.output(0), x);
  c.bind(node.output(1), last_states.size() == 1
                             ? last_states.front()
                             : c.add1("Concat", last_states, {{"axis", int64_t{0}}}));
  if (node.outputs().size() > 2)
    c.defer(node.output(2),
            [&c]() -> std::string { c.refuse("an LSTM's last cell state is not written"); });
}

// zeros(size, ...): a constant, made only if something other than a recurrent layer takes it.
void zeros(const jit_node& node, Context& c) {
  std::vector<int64_t> size = c.integers(node.input(0));
  std::vector<int64_t> batch = c.batch_multiples(node.input(0));
  bool by_batch = std::any_of(batch.begin(), batch.end(), [](int64_t k) { return k != 0; });
  at::ScalarType type = c.dtype(node.output(0));
  c.defer(node.output(0), [&c, size, by_batch, type]() -> std::string {
    if (by_batch)
      c.refuse("it makes zeros as many as the batch, which ONNX cannot keep dynamic here");
    return c.initializer(at::zeros(size, at::TensorOptions().dtype(type)));
  });
}

const RegisterOp lstm_op("aten::lstm", [](auto& n, auto& c) { recurrent(n, c, kLstm); });
const RegisterOp gru_op("aten::gru", [](auto& n, auto& c) { recurrent(n, c, kGru); });
const RegisterOp zeros_op("aten::zeros", zeros);

}  // namespace
}  // namespace kiln::exports::onnx_export
