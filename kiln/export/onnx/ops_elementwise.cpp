// ONNX forms of aten's element-wise operators: arithmetic, comparisons and activations.

#include <algorithm>
#include <cmath>
#include <optional>

#include "kiln/export/onnx/onnx_context.h"

namespace kiln::exports::onnx_export {
namespace {

using jit_node = torch::jit::Node;

// An operand in the element type of the node's result: PyTorch promotes (an integer tensor
// times 0.5 is a float tensor), ONNX's arithmetic takes one type.
std::string promoted(const jit_node& node, Context& c, const torch::jit::Value* value) {
  std::string name = c.operand(value, node.output(0));
  at::ScalarType out = c.dtype(node.output(0));
  if (value->type()->kind() == c10::TypeKind::TensorType && c.dtype(value) != out)
    name = c.add1("Cast", {name}, {{"to", static_cast<int64_t>(element_type(out, "a cast"))}});
  return name;
}

// a OP b, b scaled by `alpha` where aten takes one (add, sub).
void binary(const jit_node& node, Context& c, const char* op) {
  std::string right = promoted(node, c, node.input(1));
  if (node.inputs().size() > 2 && !c.is_none(node.input(2)) && c.number(node.input(2)) != 1.0)
    right = c.add1("Mul", {right, promoted(node, c, node.input(2))});
  c.emit(op, {promoted(node, c, node.input(0)), right});
}

void unary(const jit_node& node, Context& c, const char* op) {
  c.emit(op, {c.tensor(node.input(0))});
}

// PyTorch's common type of a comparison's operands (an integer tensor against 0.5 compares as
// floats).
at::ScalarType common_type(const jit_node& node, Context& c) {
  at::ScalarType left = c.dtype(node.input(0));
  const torch::jit::Value* right = node.input(1);
  if (right->type()->kind() == c10::TypeKind::TensorType)
    return at::promote_types(left, c.dtype(right));
  if (!at::isFloatingType(left) && c.constant(right).isDouble()) return at::kFloat;
  return left;
}

// a and b in `common`.
std::pair<std::string, std::string> in_common_type(const jit_node& node, Context& c,
                                                   at::ScalarType common) {
  auto as_common = [&](const std::string& name, at::ScalarType type) {
    if (type == common) return name;
    return c.add1("Cast", {name}, {{"to", static_cast<int64_t>(element_type(common, "a cast"))}});
  };
  const torch::jit::Value* right = node.input(1);
  std::string b = right->type()->kind() == c10::TypeKind::TensorType
                      ? as_common(c.tensor(right), c.dtype(right))
                      : c.initializer(at::full({1}, c.number(right), common));
  return {as_common(c.tensor(node.input(0)), c.dtype(node.input(0))), b};
}

std::string compared(const jit_node& node, Context& c, const char* op) {
  auto [a, b] = in_common_type(node, c, common_type(node, c));
  return c.add1(op, {a, b});
}

// Whether the comparison's result is only cast to numbers (a multi-label head's class ids).
bool only_cast(const jit_node& node, const Context& c) {
  const auto& uses = node.output(0)->uses();
  return !uses.empty() && std::all_of(uses.begin(), uses.end(), [&](const torch::jit::Use& use) {
    return use.user->kind() == c10::aten::to && c.dtype(use.user->output(0)) != at::kBool;
  });
}

// a > b (or <, >=, <=) where only a cast to numbers takes it, or in a portable graph, of floats:
// 1 where it holds and 0 where not, as Relu(Sign(a - b)) (a >= b: 1 - Relu(Sign(b - a))).
// OpenCV 4.6 has no comparison layers; the cast reads the numbers as it would the booleans. Not
// NaN's result (it stays NaN).
bool compare_by_sign(const jit_node& node, Context& c, bool greater, bool or_equal) {
  if (!c.options().portable && !only_cast(node, c)) return false;
  at::ScalarType common = common_type(node, c);
  if (!at::isFloatingType(common)) return false;  // Relu takes no integers before opset 14
  auto [a, b] = in_common_type(node, c, common);
  bool a_minus_b = greater != or_equal;
  std::string holds =
      c.add1("Relu", {c.add1("Sign", {c.add1("Sub", {a_minus_b ? a : b, a_minus_b ? b : a})})});
  if (or_equal) holds = c.add1("Sub", {c.initializer(at::ones({1}, common)), holds});
  c.bind(node.output(0), holds);
  return true;
}

void compare(const jit_node& node, Context& c, const char* op) {
  c.bind(node.output(0), compared(node, c, op));
}

void ordered(const jit_node& node, Context& c, const char* op, bool greater, bool or_equal) {
  if (!compare_by_sign(node, c, greater, or_equal)) compare(node, c, op);
}

// a == b (a != b when `negated`); portable: 1 - |Sign(a - b)| (|Sign(a - b)|).
void equal(const jit_node& node, Context& c, bool negated) {
  if (!c.options().portable) {
    std::string equal = compared(node, c, "Equal");
    return c.bind(node.output(0), negated ? c.add1("Not", {equal}) : equal);
  }
  auto [a, b] = in_common_type(node, c, common_type(node, c));
  std::string differs = c.add1("Abs", {c.add1("Sign", {c.add1("Sub", {a, b})})});
  c.bind(node.output(0),
         negated ? differs : c.add1("Sub", {c.initializer(at::ones({1})), differs}));
}

// and, or, not; portable, of 0 and 1 as floats: a b, a + b - a b, 1 - a.
void logical(const jit_node& node, Context& c, const char* op) {
  std::string a = c.tensor(node.input(0));
  std::string b = std::string(op) == "Not" ? "" : c.tensor(node.input(1));
  if (!c.options().portable)
    return c.emit(op, b.empty() ? std::vector<std::string>{a} : std::vector<std::string>{a, b});
  std::string op_name = op;
  if (op_name == "And") return c.emit("Mul", {a, b});
  if (op_name == "Or") return c.emit("Sub", {c.add1("Add", {a, b}), c.add1("Mul", {a, b})});
  c.emit("Sub", {c.initializer(at::ones({1})), a});
}

// min(max(x, low), high): relu6, hardtanh and clamp, written as low + relu(x - low) -
// relu(x - high) rather than as Clip: OpenCV (4.6, Debian's) reads only the Clip of opsets
// before 11, whose bounds are attributes. Exact between the bounds; above them within half a
// unit in the last place of x. Integers (category indices) take Max and Min.
void clip_between(const jit_node& node, Context& c, std::optional<double> low,
                  std::optional<double> high) {
  std::string x = c.tensor(node.input(0));
  auto scalar = [&](double v) { return c.initializer(at::full({1}, v, c.dtype(node.input(0)))); };
  std::string y = x;
  if (!at::isFloatingType(c.dtype(node.input(0)))) {  // Relu takes no integers before opset 14
    if (low) y = c.add1("Max", {y, scalar(*low)});
    if (high) y = c.add1("Min", {y, scalar(*high)});
    return c.bind(node.output(0), y);
  }
  if (low) {
    std::string above = c.add1("Relu", {*low == 0 ? x : c.add1("Sub", {x, scalar(*low)})});
    y = *low == 0 ? above : c.add1("Add", {above, scalar(*low)});
  }
  if (high) {
    std::string over = c.add1("Relu", {c.add1("Sub", {x, scalar(*high)})});
    y = c.add1("Sub", {y, over});
  }
  c.bind(node.output(0), y);
}

void clip(const jit_node& node, Context& c) {
  auto bound = [&](size_t i) -> std::optional<double> {
    if (c.is_none(node.input(i))) return std::nullopt;
    return c.number(node.input(i));
  };
  clip_between(node, c, bound(1), bound(2));
}

// x * sigmoid(x).
void silu(const jit_node& node, Context& c) {
  std::string x = c.tensor(node.input(0));
  c.emit("Mul", {x, c.add1("Sigmoid", {x})});
}

// The exact GELU, x * (1 + erf(x / sqrt 2)) / 2, or its tanh approximation.
void gelu(const jit_node& node, Context& c) {
  std::string x = c.tensor(node.input(0));
  auto scalar = [&](double v) { return c.initializer(at::full({1}, v, at::kFloat)); };
  bool tanh = node.inputs().size() > 1 && c.constant(node.input(1)).isString() &&
              c.constant(node.input(1)).toStringRef() == "tanh";
  std::string inner;
  if (tanh) {
    std::string cube = c.add1("Mul", {c.add1("Mul", {x, x}), x});
    std::string sum = c.add1("Add", {x, c.add1("Mul", {cube, scalar(0.044715)})});
    inner = c.add1("Tanh", {c.add1("Mul", {sum, scalar(std::sqrt(2.0 / M_PI))})});
  } else {
    inner = c.add1("Erf", {c.add1("Div", {x, scalar(std::sqrt(2.0))})});
  }
  std::string half = c.add1("Mul", {x, scalar(0.5)});
  c.emit("Mul", {half, c.add1("Add", {inner, scalar(1.0)})});
}

void leaky_relu(const jit_node& node, Context& c) {
  c.emit("LeakyRelu", {c.tensor(node.input(0))},
         {{"alpha", static_cast<float>(c.number(node.input(1)))}});
}

void elu(const jit_node& node, Context& c) {
  if (c.number(node.input(2)) != 1.0 || c.number(node.input(3)) != 1.0)
    c.refuse("an ELU with a scale is not written");
  c.emit("Elu", {c.tensor(node.input(0))},
         {{"alpha", static_cast<float>(c.number(node.input(1)))}});
}

void softmax(const jit_node& node, Context& c, const char* op) {
  c.emit(op, {c.tensor(node.input(0))}, {{"axis", c.integer(node.input(1))}});
}

const RegisterOp add_op("aten::add", [](auto& n, auto& c) { binary(n, c, "Add"); });
const RegisterOp add_inplace_op("aten::add_", [](auto& n, auto& c) { binary(n, c, "Add"); });
const RegisterOp sub_op("aten::sub", [](auto& n, auto& c) { binary(n, c, "Sub"); });
const RegisterOp mul_op("aten::mul", [](auto& n, auto& c) { binary(n, c, "Mul"); });
const RegisterOp div_op("aten::div", [](auto& n, auto& c) { binary(n, c, "Div"); });
const RegisterOp rsub_op("aten::rsub", [](auto& n, auto& c) {
  c.emit("Sub", {promoted(n, c, n.input(1)), promoted(n, c, n.input(0))});
});
const RegisterOp gt_op("aten::gt", [](auto& n, auto& c) { ordered(n, c, "Greater", true, false); });
const RegisterOp lt_op("aten::lt", [](auto& n, auto& c) { ordered(n, c, "Less", false, false); });
const RegisterOp eq_op("aten::eq", [](auto& n, auto& c) { equal(n, c, false); });
const RegisterOp ge_op("aten::ge",
                       [](auto& n, auto& c) { ordered(n, c, "GreaterOrEqual", true, true); });
const RegisterOp le_op("aten::le",
                       [](auto& n, auto& c) { ordered(n, c, "LessOrEqual", false, true); });
const RegisterOp ne_op("aten::ne", [](auto& n, auto& c) { equal(n, c, true); });
const RegisterOp and_op("aten::logical_and", [](auto& n, auto& c) { logical(n, c, "And"); });
const RegisterOp or_op("aten::logical_or", [](auto& n, auto& c) { logical(n, c, "Or"); });
const RegisterOp not_op("aten::logical_not", [](auto& n, auto& c) { logical(n, c, "Not"); });
const RegisterOp relu_op("aten::relu", [](auto& n, auto& c) { unary(n, c, "Relu"); });
const RegisterOp relu_inplace_op("aten::relu_", [](auto& n, auto& c) { unary(n, c, "Relu"); });
const RegisterOp sigmoid_op("aten::sigmoid", [](auto& n, auto& c) { unary(n, c, "Sigmoid"); });
const RegisterOp tanh_op("aten::tanh", [](auto& n, auto& c) { unary(n, c, "Tanh"); });
const RegisterOp exp_op("aten::exp", [](auto& n, auto& c) { unary(n, c, "Exp"); });
const RegisterOp log_op("aten::log", [](auto& n, auto& c) { unary(n, c, "Log"); });
const RegisterOp sqrt_op("aten::sqrt", [](auto& n, auto& c) { unary(n, c, "Sqrt"); });
const RegisterOp neg_op("aten::neg", [](auto& n, auto& c) { unary(n, c, "Neg"); });
const RegisterOp abs_op("aten::abs", [](auto& n, auto& c) { unary(n, c, "Abs"); });
const RegisterOp round_op("aten::round", [](auto& n, auto& c) { unary(n, c, "Round"); });
const RegisterOp floor_op("aten::floor", [](auto& n, auto& c) { unary(n, c, "Floor"); });
const RegisterOp ceil_op("aten::ceil", [](auto& n, auto& c) { unary(n, c, "Ceil"); });
const RegisterOp hardtanh_op("aten::hardtanh", clip);
const RegisterOp hardtanh_inplace_op("aten::hardtanh_", clip);
const RegisterOp clamp_op("aten::clamp", clip);
const RegisterOp relu6_op("aten::relu6", [](auto& n, auto& c) { clip_between(n, c, 0.0, 6.0); });
const RegisterOp silu_op("aten::silu", silu);
const RegisterOp gelu_op("aten::gelu", gelu);
const RegisterOp leaky_relu_op("aten::leaky_relu", leaky_relu);
const RegisterOp elu_op("aten::elu", elu);
const RegisterOp softmax_op("aten::softmax", [](auto& n, auto& c) { softmax(n, c, "Softmax"); });
const RegisterOp log_softmax_op("aten::log_softmax",
                                [](auto& n, auto& c) { softmax(n, c, "LogSoftmax"); });

}  // namespace
}  // namespace kiln::exports::onnx_export
