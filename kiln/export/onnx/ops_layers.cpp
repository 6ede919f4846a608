// ONNX forms of aten's layer operators: convolutions, batch norm, linear maps, pooling, layer
// norm and embeddings.

#include <algorithm>

#include "kiln/export/onnx/onnx_context.h"

namespace kiln::exports::onnx_export {
namespace {

using jit_node = torch::jit::Node;
using torch::jit::Value;

// ONNX's pads: every spatial dimension's start, then every end.
std::vector<int64_t> both_sides(const std::vector<int64_t>& padding, size_t spatial) {
  std::vector<int64_t> pads(spatial * 2, 0);
  for (size_t i = 0; i < spatial; ++i)
    pads[i] = pads[i + spatial] = padding.at(padding.size() == 1 ? 0 : i);
  return pads;
}

std::vector<int64_t> per_dimension(const std::vector<int64_t>& values, size_t spatial) {
  if (values.size() == spatial) return values;
  return std::vector<int64_t>(spatial, values.at(0));
}

// conv2d(x, w, b, stride, padding, dilation, groups) and convolution / _convolution(x, w, b,
// stride, padding, dilation, transposed, output_padding, groups, ...).
void convolution(const jit_node& node, Context& c, bool general) {
  at::Tensor weight = c.weight(node.input(1));
  size_t spatial = static_cast<size_t>(weight.dim() - 2);
  bool transposed = general && c.boolean(node.input(6));
  if (c.constant(node.input(4)).isString()) c.refuse("padding by name (\"same\") is not written");
  int64_t groups = c.integer(node.input(general ? 8 : 6));
  std::vector<int64_t> kernel(weight.sizes().begin() + 2, weight.sizes().end());
  std::vector<std::string> inputs = {c.tensor(node.input(0)), c.tensor(node.input(1))};
  if (!c.is_none(node.input(2))) inputs.push_back(c.tensor(node.input(2)));
  std::vector<onnx::Attribute> attributes = {
      {"kernel_shape", kernel},
      {"strides", per_dimension(c.integers(node.input(3)), spatial)},
      {"pads", both_sides(c.integers(node.input(4)), spatial)},
      {"dilations", per_dimension(c.integers(node.input(5)), spatial)},
      {"group", groups}};
  if (transposed)
    attributes.push_back({"output_padding", per_dimension(c.integers(node.input(7)), spatial)});
  c.emit(transposed ? "ConvTranspose" : "Conv", inputs, attributes);
}

// conv_transpose(x, w, b, stride, padding, output_padding, groups, dilation): ConvTranspose,
// whose weight layout [in, out / groups, kernel...] is PyTorch's.
void conv_transpose(const jit_node& node, Context& c) {
  at::Tensor weight = c.weight(node.input(1));
  size_t spatial = static_cast<size_t>(weight.dim() - 2);
  std::vector<int64_t> kernel(weight.sizes().begin() + 2, weight.sizes().end());
  std::vector<std::string> inputs = {c.tensor(node.input(0)), c.tensor(node.input(1))};
  if (!c.is_none(node.input(2))) inputs.push_back(c.tensor(node.input(2)));
  c.emit("ConvTranspose", inputs,
         {{"kernel_shape", kernel},
          {"strides", per_dimension(c.integers(node.input(3)), spatial)},
          {"pads", both_sides(c.integers(node.input(4)), spatial)},
          {"output_padding", per_dimension(c.integers(node.input(5)), spatial)},
          {"group", c.integer(node.input(6))},
          {"dilations", per_dimension(c.integers(node.input(7)), spatial)}});
}

// batch_norm(x, weight, bias, mean, var, training, momentum, eps, cudnn), in evaluation.
void batch_norm(const jit_node& node, Context& c) {
  if (c.boolean(node.input(5))) c.refuse("batch norm in training mode");
  at::Tensor mean = c.weight(node.input(3));
  auto or_filled = [&](const Value* value, double fill) {
    return c.is_none(value) ? c.initializer(at::full_like(mean, fill)) : c.tensor(value);
  };
  c.emit("BatchNormalization",
         {c.tensor(node.input(0)), or_filled(node.input(1), 1.0), or_filled(node.input(2), 0.0),
          c.tensor(node.input(3)), c.tensor(node.input(4))},
         {{"epsilon", static_cast<float>(c.number(node.input(7)))}});
}

// linear(x, w, b): Gemm for a batch of vectors, MatMul by the transposed weight otherwise.
void linear(const jit_node& node, Context& c) {
  at::Tensor weight = c.weight(node.input(1));
  bool bias = !c.is_none(node.input(2));
  if (c.shape(node.input(0)).size() == 2) {
    std::vector<std::string> inputs = {c.tensor(node.input(0)), c.tensor(node.input(1))};
    if (bias) inputs.push_back(c.tensor(node.input(2)));
    c.emit("Gemm", inputs, {{"transB", int64_t{1}}});
    return;
  }
  std::string product = c.add1("MatMul", {c.tensor(node.input(0)), c.initializer(weight.t())});
  if (bias)
    c.emit("Add", {product, c.tensor(node.input(2))});
  else
    c.bind(node.output(0), product);
}

// addmm(bias, x, w, beta, alpha) = beta * bias + alpha * x @ w. A linear layer's w is its weight
// transposed (aten::t): the Gemm takes the weight itself with transB, as runtimes expect (OpenCV
// reads a Gemm without transB wrongly).
void addmm(const jit_node& node, Context& c) {
  const jit_node& weight = Context::producer(node.input(2));
  bool of_weight = weight.kind() == c10::aten::t &&
                   Context::producer(weight.input(0)).kind() == c10::prim::Constant;
  std::string matrix = of_weight ? c.tensor(weight.input(0)) : c.tensor(node.input(2));
  c.emit("Gemm", {c.tensor(node.input(1)), matrix, c.tensor(node.input(0))},
         {{"beta", static_cast<float>(c.number(node.input(3)))},
          {"alpha", static_cast<float>(c.number(node.input(4)))},
          {"transB", int64_t{of_weight}}});
}

// max_pool(x, kernel, stride, padding, dilation, ceil_mode).
void max_pool(const jit_node& node, Context& c) {
  std::vector<int64_t> kernel = c.integers(node.input(1));
  size_t spatial = c.shape(node.input(0)).size() - 2;
  kernel = per_dimension(kernel, spatial);
  std::vector<int64_t> stride = c.integers(node.input(2));
  c.emit("MaxPool", {c.tensor(node.input(0))},
         {{"kernel_shape", kernel},
          {"strides", stride.empty() ? kernel : per_dimension(stride, spatial)},
          {"pads", both_sides(c.integers(node.input(3)), spatial)},
          {"dilations", per_dimension(c.integers(node.input(4)), spatial)},
          {"ceil_mode", int64_t{c.boolean(node.input(5))}}});
}

// avg_pool(x, kernel, stride, padding, ceil_mode, count_include_pad[, divisor_override]).
void avg_pool(const jit_node& node, Context& c) {
  if (node.inputs().size() > 6 && !c.is_none(node.input(6)))
    c.refuse("average pooling with a divisor of its own is not written");
  size_t spatial = c.shape(node.input(0)).size() - 2;
  std::vector<int64_t> kernel = per_dimension(c.integers(node.input(1)), spatial);
  std::vector<int64_t> stride = c.integers(node.input(2));
  c.emit("AveragePool", {c.tensor(node.input(0))},
         {{"kernel_shape", kernel},
          {"strides", stride.empty() ? kernel : per_dimension(stride, spatial)},
          {"pads", both_sides(c.integers(node.input(3)), spatial)},
          {"ceil_mode", int64_t{c.boolean(node.input(4))}},
          {"count_include_pad", int64_t{c.boolean(node.input(5))}}});
}

// adaptive_avg_pool(x, output_size): global pooling for an output of one, a fixed pooling when
// the input divides evenly.
void adaptive_avg_pool(const jit_node& node, Context& c) {
  std::vector<int64_t> shape = c.shape(node.input(0));
  size_t spatial = shape.size() - 2;
  std::vector<int64_t> out = per_dimension(c.integers(node.input(1)), spatial);
  std::vector<int64_t> kernel;
  for (size_t i = 0; i < spatial; ++i) {
    if (shape[i + 2] % out[i] != 0)
      c.refuse("adaptive pooling to a size that does not divide its input is not written");
    kernel.push_back(shape[i + 2] / out[i]);
  }
  if (std::all_of(out.begin(), out.end(), [](int64_t o) { return o == 1; })) {
    c.emit("GlobalAveragePool", {c.tensor(node.input(0))});
    return;
  }
  c.emit("AveragePool", {c.tensor(node.input(0))}, {{"kernel_shape", kernel}, {"strides", kernel}});
}

// mean(x, dims, keepdim, dtype): global pooling where it averages every spatial dimension (what
// every runtime fuses), ReduceMean otherwise.
void mean(const jit_node& node, Context& c) {
  if (node.inputs().size() < 3) c.refuse("a mean over every dimension is not written");
  std::vector<int64_t> shape = c.shape(node.input(0));
  std::vector<int64_t> dims = c.integers(node.input(1));
  for (auto& d : dims)
    if (d < 0) d += static_cast<int64_t>(shape.size());
  bool keep = c.boolean(node.input(2));
  std::vector<int64_t> spatial;
  for (int64_t d = 2; d < static_cast<int64_t>(shape.size()); ++d) spatial.push_back(d);
  if (shape.size() > 2 && dims == spatial) {
    std::string pooled = c.add1("GlobalAveragePool", {c.tensor(node.input(0))});
    if (keep)
      c.bind(node.output(0), pooled);
    else
      c.emit("Flatten", {pooled}, {{"axis", int64_t{1}}});
    return;
  }
  c.emit("ReduceMean", {c.tensor(node.input(0))}, {{"axes", dims}, {"keepdims", int64_t{keep}}});
}

// layer_norm(x, shape, weight, bias, eps, cudnn) over the last dimensions, as an
// InstanceNormalization of each row (LayerNormalization is opset 17's): x flattened to rows of
// [R, 1, D], normalised, scaled and shifted as [R, D], then given back its shape. Not written out
// as means and differences: OpenCV 4.6 broadcasts neither a computed mean nor a [D] constant
// along the last dimension of a tensor of three or more.
void layer_norm(const jit_node& node, Context& c) {
  std::vector<int64_t> shape = c.shape(node.input(0));
  int64_t rank = static_cast<int64_t>(shape.size());
  int64_t count = static_cast<int64_t>(c.integers(node.input(1)).size());
  if (count >= rank) c.refuse("a layer norm over the batch dimension too is not written");
  int64_t width = 1;
  for (int64_t d = rank - count; d < rank; ++d) width *= shape[static_cast<size_t>(d)];
  std::string rows = c.add1("Flatten", {c.tensor(node.input(0))}, {{"axis", rank - count}});
  rows = c.add1("Reshape", {rows, c.integers_initializer({0, 1, width})});
  std::string y = c.add1("InstanceNormalization",
                         {rows, c.initializer(at::ones({1})), c.initializer(at::zeros({1}))},
                         {{"epsilon", static_cast<float>(c.number(node.input(4)))}});
  y = c.add1("Reshape", {y, c.integers_initializer({0, width})});
  auto per_column = [&](const torch::jit::Value* value) {
    return count == 1 ? c.tensor(value) : c.initializer(c.weight(value).reshape({width}));
  };
  if (!c.is_none(node.input(2))) y = c.add1("Mul", {y, per_column(node.input(2))});
  if (!c.is_none(node.input(3))) y = c.add1("Add", {y, per_column(node.input(3))});
  if (rank != 2 || count != 1)
    y = c.add1("Reshape", {y, c.integers_initializer(c.reshape_target(node.output(0)))});
  c.bind(node.output(0), y);
}

// group_norm(x, groups, weight, bias, eps, cudnn), written as ONNX writers do before opset 18's
// GroupNormalization: the channels reshaped into [batch, groups, rest], normalised per group by
// InstanceNormalization, reshaped back, then scaled and shifted per channel.
void group_norm(const jit_node& node, Context& c) {
  std::vector<int64_t> shape = c.shape(node.input(0));
  int64_t groups = c.integer(node.input(1));
  std::string grouped =
      c.add1("Reshape", {c.tensor(node.input(0)), c.integers_initializer({0, groups, -1})});
  std::string normalised =
      c.add1("InstanceNormalization",
             {grouped, c.initializer(at::ones({groups})), c.initializer(at::zeros({groups}))},
             {{"epsilon", static_cast<float>(c.number(node.input(4)))}});
  std::vector<int64_t> back = shape;
  back[0] = 0;
  std::string y = c.add1("Reshape", {normalised, c.integers_initializer(back)});
  std::vector<int64_t> per_channel(shape.size() - 1, 1);
  per_channel[0] = shape.at(1);
  if (!c.is_none(node.input(2)))
    y = c.add1("Mul", {y, c.initializer(c.weight(node.input(2)).reshape(per_channel))});
  if (!c.is_none(node.input(3)))
    y = c.add1("Add", {y, c.initializer(c.weight(node.input(3)).reshape(per_channel))});
  c.bind(node.output(0), y);
}

// upsample_nearest / upsample_linear / upsample_bilinear (.vec and sized forms): Resize by the
// scales the trace shows (each output size over its input's), sampled as PyTorch samples: the
// nearest below ("asymmetric", "floor"), or linear between pixel centres ("pytorch_half_pixel";
// "align_corners" when asked).
void upsample(const jit_node& node, Context& c, bool linear) {
  std::vector<int64_t> in = c.shape(node.input(0)), out = c.shape(node.output(0));
  std::vector<float> scales = {1.0f, 1.0f};
  for (size_t d = 2; d < in.size(); ++d)
    scales.push_back(static_cast<float>(out[d]) / static_cast<float>(in[d]));
  std::vector<onnx::Attribute> attributes;
  if (linear) {
    bool corners = false;
    for (const auto* input : node.inputs())
      if (input->type()->kind() == c10::TypeKind::BoolType) corners = c.boolean(input);
    attributes = {{"mode", std::string("linear")},
                  {"coordinate_transformation_mode",
                   std::string(corners ? "align_corners" : "pytorch_half_pixel")}};
  } else {
    attributes = {{"mode", std::string("nearest")},
                  {"coordinate_transformation_mode", std::string("asymmetric")},
                  {"nearest_mode", std::string("floor")}};
  }
  // A signal ([batch, channels, length]) is resized as an image one pixel wide: OpenCV 4.6
  // resizes only four dimensions.
  std::string x = c.tensor(node.input(0));
  bool signal = in.size() == 3;
  if (signal) {
    x = c.reshape_unit_dims(x, {in[0], in[1], in[2], 1}, 3);
    scales.push_back(1.0f);
  }
  at::Tensor factors = at::tensor(c10::ArrayRef<float>(scales));
  std::string resized = c.add1("Resize", {x, "", c.initializer(factors)}, attributes);
  if (signal) resized = c.reshape_unit_dims(resized, out, 3);
  c.bind(node.output(0), resized);
}

// embedding(weight, indices, ...): rows of the weight. Portable (the indices held as floats): the
// product of each index's one-hot row, 1 - |Sign(index - k)| for every row k of the weight, with
// the weight: a Gemm of the indices as a column against ones with the bias -k gives index - k.
void embedding(const jit_node& node, Context& c) {
  if (!c.options().portable)
    return c.emit("Gather", {c.tensor(node.input(0)), c.tensor(node.input(1))},
                  {{"axis", int64_t{0}}});
  at::Tensor weight = c.weight(node.input(0));
  int64_t rows = weight.size(0);
  std::string column =
      c.add1("Reshape", {c.tensor(node.input(1)), c.integers_initializer({-1, 1})});
  std::string offsets =
      c.add1("Gemm",
             {column, c.initializer(at::ones({rows, 1})),
              c.initializer(-at::arange(rows, at::TensorOptions().dtype(at::kFloat)))},
             {{"transB", int64_t{1}}});
  std::string one_hot =
      c.add1("Sub", {c.initializer(at::ones({1})), c.add1("Abs", {c.add1("Sign", {offsets})})});
  std::string looked_up =
      c.add1("Gemm", {one_hot, c.initializer(weight.t().contiguous())}, {{"transB", int64_t{1}}});
  // One index per example: its rows are the batch's, kept (0) rather than inferred (-1), which
  // OpenCV 4.6 infers wrongly when it plans the graph.
  std::vector<int64_t> target = c.reshape_target(node.output(0));
  std::vector<int64_t> indices = c.reshape_target(node.input(1));
  if (!indices.empty() && indices[0] == -1 &&
      std::all_of(indices.begin() + 1, indices.end(), [](int64_t d) { return d == 1; }))
    target[0] = 0;
  c.emit("Reshape", {looked_up, c.integers_initializer(target)});
}

const RegisterOp conv1d_op("aten::conv1d", [](auto& n, auto& c) { convolution(n, c, false); });
const RegisterOp conv2d_op("aten::conv2d", [](auto& n, auto& c) { convolution(n, c, false); });
const RegisterOp convolution_op("aten::convolution",
                                [](auto& n, auto& c) { convolution(n, c, true); });
const RegisterOp underscore_convolution_op("aten::_convolution",
                                           [](auto& n, auto& c) { convolution(n, c, true); });
const RegisterOp conv_transpose1d_op("aten::conv_transpose1d", conv_transpose);
const RegisterOp conv_transpose2d_op("aten::conv_transpose2d", conv_transpose);
const RegisterOp batch_norm_op("aten::batch_norm", batch_norm);
const RegisterOp linear_op("aten::linear", linear);
const RegisterOp addmm_op("aten::addmm", addmm);
const RegisterOp matmul_op("aten::matmul", [](auto& n, auto& c) {
  c.emit("MatMul", {c.tensor(n.input(0)), c.tensor(n.input(1))});
});
const RegisterOp max_pool1d_op("aten::max_pool1d", max_pool);
const RegisterOp max_pool2d_op("aten::max_pool2d", max_pool);
const RegisterOp avg_pool1d_op("aten::avg_pool1d", avg_pool);
const RegisterOp avg_pool2d_op("aten::avg_pool2d", avg_pool);
const RegisterOp adaptive_avg_pool1d_op("aten::adaptive_avg_pool1d", adaptive_avg_pool);
const RegisterOp adaptive_avg_pool2d_op("aten::adaptive_avg_pool2d", adaptive_avg_pool);
const RegisterOp mean_op("aten::mean", mean);
const RegisterOp layer_norm_op("aten::layer_norm", layer_norm);
const RegisterOp group_norm_op("aten::group_norm", group_norm);
const RegisterOp embedding_op("aten::embedding", embedding);
const RegisterOp upsample_nearest1d_op("aten::upsample_nearest1d",
                                       [](auto& n, auto& c) { upsample(n, c, false); });
const RegisterOp upsample_nearest2d_op("aten::upsample_nearest2d",
                                       [](auto& n, auto& c) { upsample(n, c, false); });
const RegisterOp upsample_linear1d_op("aten::upsample_linear1d",
                                      [](auto& n, auto& c) { upsample(n, c, true); });
const RegisterOp upsample_bilinear2d_op("aten::upsample_bilinear2d",
                                        [](auto& n, auto& c) { upsample(n, c, true); });

}  // namespace
}  // namespace kiln::exports::onnx_export
