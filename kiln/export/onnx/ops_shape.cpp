// ONNX forms of aten's operators that move, reshape, cast or pick elements, and of those that
// change nothing at inference (dropout, contiguous, detach).

#include <fmt/format.h>

#include "kiln/export/onnx/onnx_context.h"

namespace kiln::exports::onnx_export {
namespace {

using jit_node = torch::jit::Node;

int64_t axis(int64_t dim, size_t rank) { return dim < 0 ? dim + static_cast<int64_t>(rank) : dim; }

// view / reshape(x, shape): a size that is the batch becomes 0 (ONNX: "as the input's") where
// the input has the batch there, so the exported graph takes any batch.
void reshape(const jit_node& node, Context& c) {
  std::vector<int64_t> shape = c.integers(node.input(1));
  std::vector<int64_t> batch = c.batch_multiples(node.input(1));
  std::vector<int64_t> input = c.shape(node.input(0));
  bool free = std::find(shape.begin(), shape.end(), -1) == shape.end();
  for (size_t i = 0; i < shape.size(); ++i) {
    if (batch[i] == 0) continue;
    if (i < input.size() && input[i] == shape[i]) {
      shape[i] = 0;
    } else if (free) {
      shape[i] = -1;
      free = false;
    } else {
      c.refuse(
          fmt::format("it reshapes to a size of {} times the batch at dimension {}, which "
                      "ONNX cannot keep dynamic here",
                      batch[i], i));
    }
  }
  c.emit("Reshape", {c.tensor(node.input(0)), c.integers_initializer(shape)});
}

// flatten(x, start, end): ONNX's Flatten where it is the same (from 1 to the end), else Reshape.
void flatten(const jit_node& node, Context& c) {
  std::vector<int64_t> input = c.shape(node.input(0));
  int64_t start = axis(c.integer(node.input(1)), input.size());
  int64_t end = axis(c.integer(node.input(2)), input.size());
  if (start == 1 && end == static_cast<int64_t>(input.size()) - 1) {
    c.emit("Flatten", {c.tensor(node.input(0))}, {{"axis", int64_t{1}}});
    return;
  }
  std::vector<int64_t> shape;
  for (int64_t d = 0; d < start; ++d) shape.push_back(0);
  shape.push_back(-1);
  for (int64_t d = end + 1; d < static_cast<int64_t>(input.size()); ++d)
    shape.push_back(input[static_cast<size_t>(d)]);
  c.emit("Reshape", {c.tensor(node.input(0)), c.integers_initializer(shape)});
}

// A weight's transpose is a transposed weight: runtimes such as OpenCV take a Gemm's or
// MatMul's weights only as initializers.
// It is made only if something takes it: a Gemm takes the weight as it was, transposed by its
// attribute (aten::addmm).
bool transposed_weight(const jit_node& node, Context& c, const std::vector<int64_t>& perm) {
  if (Context::producer(node.input(0)).kind() != c10::prim::Constant) return false;
  at::Tensor weight = c.weight(node.input(0));
  c.defer(node.output(0), [&c, weight, perm] { return c.initializer(weight.permute(perm)); });
  return true;
}

void transpose(const jit_node& node, Context& c) {
  size_t rank = c.shape(node.input(0)).size();
  std::vector<int64_t> perm;
  for (size_t d = 0; d < rank; ++d) perm.push_back(static_cast<int64_t>(d));
  std::swap(perm[static_cast<size_t>(axis(c.integer(node.input(1)), rank))],
            perm[static_cast<size_t>(axis(c.integer(node.input(2)), rank))]);
  if (transposed_weight(node, c, perm)) return;
  c.emit("Transpose", {c.tensor(node.input(0))}, {{"perm", perm}});
}

void permute(const jit_node& node, Context& c) {
  size_t rank = c.shape(node.input(0)).size();
  std::vector<int64_t> perm = c.integers(node.input(1));
  for (auto& d : perm) d = axis(d, rank);
  if (transposed_weight(node, c, perm)) return;
  c.emit("Transpose", {c.tensor(node.input(0))}, {{"perm", perm}});
}

// A portable cast keeps floats (WriteOptions::portable): to an integer it truncates towards zero,
// Sign(x) * Floor(|x|); to a boolean it is whether x is not zero, |Sign(x)|; else x as it is.
void portable_cast(const jit_node& node, Context& c, at::ScalarType from, at::ScalarType to) {
  std::string x = c.tensor(node.input(0));
  if (to == at::kBool && from != at::kBool) return c.emit("Abs", {c.add1("Sign", {x})});
  c10::Symbol made = Context::producer(node.input(0)).kind();
  bool whole = made == c10::aten::round || made == c10::aten::floor || made == c10::aten::ceil;
  if (at::isFloatingType(from) && !at::isFloatingType(to) && to != at::kBool && !whole)
    return c.emit("Mul", {c.add1("Sign", {x}), c.add1("Floor", {c.add1("Abs", {x})})});
  c.pass_through(node.input(0));
}

// to(...): a cast where the element type changes; a move between devices is nothing here.
void cast(const jit_node& node, Context& c) {
  at::ScalarType from = c.traced_dtype(node.input(0)), to = c.traced_dtype(node.output(0));
  if (c.options().portable) return portable_cast(node, c, from, to);
  if (from == to) return c.pass_through(node.input(0));
  c.emit("Cast", {c.tensor(node.input(0))},
         {{"to", static_cast<int64_t>(element_type(to, "a cast"))}});
}

void argmax(const jit_node& node, Context& c) {
  if (c.is_none(node.input(1))) c.refuse("an argmax over every element is not written");
  size_t rank = c.shape(node.input(0)).size();
  std::string index = c.add1("ArgMax", {c.tensor(node.input(0))},
                             {{"axis", axis(c.integer(node.input(1)), rank)},
                              {"keepdims", int64_t{c.boolean(node.input(2))}}});
  if (c.options().portable)  // held as a float, as every portable integer
    index = c.add1("Cast", {index}, {{"to", static_cast<int64_t>(onnx::ElementType::kFloat)}});
  c.bind(node.output(0), index);
}

// cat(tensors, dim).
void concat(const jit_node& node, Context& c) {
  std::vector<std::string> parts = c.list(node.input(0));
  if (parts.size() == 1) return c.bind(node.output(0), parts.front());
  size_t rank = c.shape(node.output(0)).size();
  c.emit("Concat", parts, {{"axis", axis(c.integer(node.input(1)), rank)}});
}

// chunk(x, chunks, dim): equal parts, as ONNX's Split without sizes makes them (the form OpenCV
// reads); the last part may not be shorter.
void chunk(const jit_node& node, Context& c) {
  std::vector<int64_t> shape = c.shape(node.input(0));
  int64_t dim = axis(c.integer(node.input(2)), shape.size());
  int64_t chunks = c.integer(node.input(1));
  if (shape.at(static_cast<size_t>(dim)) % chunks != 0)
    c.refuse("chunks of unequal sizes are not written");
  c.bind_list(node.output(0),
              c.add("Split", {c.tensor(node.input(0))}, {{"axis", dim}}, static_cast<int>(chunks)));
}

void unpack(const jit_node& node, Context& c) {
  std::vector<std::string> items = c.list(node.input(0));
  if (items.size() != node.outputs().size()) c.refuse("the list has another length than traced");
  for (size_t i = 0; i < items.size(); ++i) c.bind(node.output(i), items[i]);
}

// slice(x, dim, start, end, step).
void slice(const jit_node& node, Context& c) {
  size_t rank = c.shape(node.input(0)).size();
  int64_t start = c.is_none(node.input(2)) ? 0 : c.integer(node.input(2));
  int64_t end = c.is_none(node.input(3)) ? INT64_MAX : c.integer(node.input(3));
  if (!c.is_none(node.input(3)) && c.batch_multiples(node.input(3)).front() != 0)
    c.refuse("it slices up to the batch size, which ONNX cannot keep dynamic here");
  c.emit("Slice",
         {c.tensor(node.input(0)), c.integers_initializer({start}), c.integers_initializer({end}),
          c.integers_initializer({axis(c.integer(node.input(1)), rank)}),
          c.integers_initializer({c.integer(node.input(4))})});
}

// narrow(x, dim, start, length).
void narrow(const jit_node& node, Context& c) {
  std::vector<int64_t> shape = c.shape(node.input(0));
  size_t rank = shape.size();
  int64_t dim = axis(c.integer(node.input(1)), rank);
  int64_t start = c.integer(node.input(2));
  if (start < 0) start += shape.at(static_cast<size_t>(dim));  // counted from the end
  if (c.batch_multiples(node.input(3)).front() != 0)
    c.refuse("it narrows to the batch size, which ONNX cannot keep dynamic here");
  c.emit("Slice", {c.tensor(node.input(0)), c.integers_initializer({start}),
                   c.integers_initializer({start + c.integer(node.input(3))}),
                   c.integers_initializer({dim})});
}

// select(x, dim, index): a Slice of the one index, then the dimension dropped. Not a Gather of
// a constant index, which OpenCV 4.6 reads only for tensors of up to two dimensions.
void select(const jit_node& node, Context& c) {
  size_t rank = c.shape(node.input(0)).size();
  int64_t dim = axis(c.integer(node.input(1)), rank);
  int64_t index = c.integer(node.input(2));
  std::string one = c.add1("Slice", {c.tensor(node.input(0)), c.integers_initializer({index}),
                                     c.integers_initializer({index == -1 ? INT64_MAX : index + 1}),
                                     c.integers_initializer({dim})});
  std::string dropped = c.reshape_unit_dims(one, c.shape(node.output(0)), static_cast<size_t>(dim));
  if (dropped.empty()) dropped = c.add1("Squeeze", {one, c.integers_initializer({dim})});
  c.bind(node.output(0), dropped);
}

// index_select(x, dim, indices) by constant indices (feature columns picking their inputs): a
// Slice of each run of consecutive indices, joined by a Concat; all of them in order is x
// itself. OpenCV 4.6 gathers only one index at a time.
bool select_runs(const jit_node& node, Context& c, int64_t dim) {
  at::Tensor indices = c.weight(node.input(2)).to(at::kLong).contiguous();
  int64_t size = c.shape(node.input(0)).at(static_cast<size_t>(dim));
  std::vector<int64_t> picked(indices.data_ptr<int64_t>(),
                              indices.data_ptr<int64_t>() + indices.numel());
  if (picked.empty() || indices.dim() != 1) return false;
  for (auto& index : picked) index = index < 0 ? index + size : index;
  std::vector<std::string> runs;
  for (size_t start = 0; start < picked.size();) {
    size_t end = start + 1;
    while (end < picked.size() && picked[end] == picked[end - 1] + 1) ++end;
    if (start == 0 && end == picked.size() && picked.front() == 0 && picked.back() == size - 1) {
      c.pass_through(node.input(0));
      return true;
    }
    runs.push_back(c.add1(
        "Slice", {c.tensor(node.input(0)), c.integers_initializer({picked[start]}),
                  c.integers_initializer({picked[end - 1] + 1}), c.integers_initializer({dim})}));
    start = end;
  }
  if (runs.size() == 1) c.bind(node.output(0), runs.front());
  if (runs.size() > 1) c.emit("Concat", runs, {{"axis", dim}});
  return true;
}

void index_select(const jit_node& node, Context& c) {
  int64_t dim = axis(c.integer(node.input(1)), c.shape(node.input(0)).size());
  if (Context::producer(node.input(2)).kind() == c10::prim::Constant && select_runs(node, c, dim))
    return;
  if (c.options().portable) c.refuse("a portable graph selects only by constant indices");
  c.emit("Gather", {c.tensor(node.input(0)), c.tensor(node.input(2))}, {{"axis", dim}});
}

// expand(x, size, implicit): ONNX's Expand broadcasts as PyTorch's does, with 1 where PyTorch
// writes -1 (keep the size). A size that is the batch becomes 1 too: the expanded tensor then
// broadcasts against the batch where it is used, which is where the trace used it.
void expand(const jit_node& node, Context& c) {
  std::vector<int64_t> size = c.integers(node.input(1));
  std::vector<int64_t> batch = c.batch_multiples(node.input(1));
  for (size_t i = 0; i < size.size(); ++i)
    if (size[i] == -1 || batch[i] != 0) size[i] = 1;
  // A constant expanded (a linear layer's bias) is written expanded, as ONNX broadcasts it.
  if (Context::producer(node.input(0)).kind() == c10::prim::Constant) {
    at::Tensor weight = c.weight(node.input(0));
    return c.bind(node.output(0), c.initializer(weight * at::ones(size, weight.options())));
  }
  c.emit("Expand", {c.tensor(node.input(0)), c.integers_initializer(size)});
}

// unsqueeze and squeeze as a Reshape where OpenCV 4.6 reads that (Context::reshape_unit_dims).
void unsqueeze(const jit_node& node, Context& c) {
  size_t rank = c.shape(node.input(0)).size() + 1;
  int64_t dim = axis(c.integer(node.input(1)), rank);
  std::string x = c.tensor(node.input(0));
  std::string added = c.reshape_unit_dims(x, c.shape(node.output(0)), static_cast<size_t>(dim));
  if (added.empty()) added = c.add1("Unsqueeze", {x, c.integers_initializer({dim})});
  c.bind(node.output(0), added);
}

void squeeze(const jit_node& node, Context& c) {
  if (node.inputs().size() < 2) c.refuse("a squeeze of every dimension of one is not written");
  size_t rank = c.shape(node.input(0)).size();
  int64_t dim = axis(c.integer(node.input(1)), rank);
  if (c.shape(node.input(0)).at(static_cast<size_t>(dim)) != 1)
    return c.pass_through(node.input(0));
  std::string x = c.tensor(node.input(0));
  std::string dropped = c.reshape_unit_dims(x, c.shape(node.output(0)), static_cast<size_t>(dim));
  if (dropped.empty()) dropped = c.add1("Squeeze", {x, c.integers_initializer({dim})});
  c.bind(node.output(0), dropped);
}

// constant_pad_nd(x, pad, value): PyTorch's pad lists (begin, end) pairs from the last dimension
// backwards, ONNX's Pad every begin, then every end.
void pad(const jit_node& node, Context& c) {
  size_t rank = c.shape(node.input(0)).size();
  std::vector<int64_t> torch_pads = c.integers(node.input(1));
  std::vector<int64_t> pads(rank * 2, 0);
  for (size_t i = 0; i * 2 + 1 < torch_pads.size(); ++i) {
    size_t dim = rank - 1 - i;
    pads[dim] = torch_pads[i * 2];
    pads[dim + rank] = torch_pads[i * 2 + 1];
  }
  std::string value = c.initializer(at::full({}, c.number(node.input(2)), c.dtype(node.input(0))));
  c.emit("Pad", {c.tensor(node.input(0)), c.integers_initializer(pads), value});
}

void nothing(const jit_node& node, Context& c) { c.pass_through(node.input(0)); }

const RegisterOp view_op("aten::view", reshape);
const RegisterOp reshape_op("aten::reshape", reshape);
const RegisterOp flatten_op("aten::flatten", flatten);
const RegisterOp transpose_op("aten::transpose", transpose);
const RegisterOp t_op("aten::t", [](auto& n, auto& c) {
  std::vector<int64_t> perm = {1, 0};
  if (!transposed_weight(n, c, perm)) c.emit("Transpose", {c.tensor(n.input(0))}, {{"perm", perm}});
});
const RegisterOp permute_op("aten::permute", permute);
const RegisterOp to_op("aten::to", cast);
const RegisterOp type_as_op("aten::type_as", cast);
const RegisterOp argmax_op("aten::argmax", argmax);
const RegisterOp cat_op("aten::cat", concat);
const RegisterOp chunk_op("aten::chunk", chunk);
const RegisterOp unsafe_chunk_op("aten::unsafe_chunk", chunk);
const RegisterOp list_unpack_op("prim::ListUnpack", unpack);
const RegisterOp slice_op("aten::slice", slice);
const RegisterOp select_op("aten::select", select);
const RegisterOp narrow_op("aten::narrow", narrow);
const RegisterOp unsqueeze_op("aten::unsqueeze", unsqueeze);
const RegisterOp index_select_op("aten::index_select", index_select);
const RegisterOp expand_op("aten::expand", expand);
const RegisterOp squeeze_op("aten::squeeze", squeeze);
const RegisterOp pad_op("aten::constant_pad_nd", pad);
const RegisterOp contiguous_op("aten::contiguous", nothing);
const RegisterOp detach_op("aten::detach", nothing);
const RegisterOp clone_op("aten::clone", nothing);
const RegisterOp dropout_op("aten::dropout", nothing);
const RegisterOp feature_dropout_op("aten::feature_dropout", nothing);
const RegisterOp alpha_dropout_op("aten::alpha_dropout", nothing);

}  // namespace
}  // namespace kiln::exports::onnx_export
