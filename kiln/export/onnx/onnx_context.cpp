#include "kiln/export/onnx/onnx_context.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <optional>

#include "kiln/core/error.h"

namespace kiln::exports::onnx_export {

onnx::ElementType element_type(at::ScalarType type, const std::string& what) {
  switch (type) {
    case at::kFloat:
      return onnx::ElementType::kFloat;
    case at::kDouble:
      return onnx::ElementType::kDouble;
    case at::kHalf:
      return onnx::ElementType::kFloat16;
    case at::kByte:
      return onnx::ElementType::kUint8;
    case at::kChar:
      return onnx::ElementType::kInt8;
    case at::kShort:
      return onnx::ElementType::kInt16;
    case at::kInt:
      return onnx::ElementType::kInt32;
    case at::kLong:
      return onnx::ElementType::kInt64;
    case at::kBool:
      return onnx::ElementType::kBool;
    default:
      throw Error(fmt::format("{}: ONNX export takes no {} tensors", what, c10::toString(type)));
  }
}

std::map<std::string, OpConverter>& op_converters() {
  static std::map<std::string, OpConverter> converters;
  return converters;
}

Context::Context(onnx::ModelBuilder& builder, BatchConstants batch_constants,
                 BatchDimensions batch_dimensions, WriteOptions options)
    : builder_(builder),
      batch_constants_(std::move(batch_constants)),
      batch_dimensions_(std::move(batch_dimensions)),
      options_(options) {}

void Context::begin(const torch::jit::Node& node) { node_ = &node; }

std::string Context::layer_of(const torch::jit::Node& node) const {
  // Node::scope() is not const in LibTorch, though it changes nothing.
  auto scope_of = const_cast<torch::jit::Node&>(node).scope();
  std::string scope = scope_of && !scope_of->isRoot() ? scope_of->name().toUnqualString() : "";
  return scope.empty() ? "outside the model's layers (its eval transforms or outputs)"
                       : "layer " + scope;
}

void Context::refuse(const std::string& why) const {
  throw Error(fmt::format("cannot export to ONNX: {} ({}): {}", layer_of(*node_),
                          node_->kind().toQualString(), why));
}

const torch::jit::Node& Context::producer(const torch::jit::Value* value) { return *value->node(); }

std::string Context::fresh(const std::string& hint) {
  std::string name = hint;
  while (name.empty() || used_.count(name)) name = fmt::format("{}_{}", hint, ++counter_);
  used_.insert(name);
  return name;
}

void Context::bind(const torch::jit::Value* value, const std::string& name) {
  names_[value] = name;
  used_.insert(name);
}

void Context::bind_list(const torch::jit::Value* list, std::vector<std::string> items) {
  lists_[list] = std::move(items);
}

std::vector<std::string> Context::list(const torch::jit::Value* list) {
  if (auto found = lists_.find(list); found != lists_.end()) return found->second;
  const torch::jit::Node& made = producer(list);
  if (made.kind() != c10::prim::ListConstruct)
    refuse(fmt::format("it takes a list made by {}, which has no ONNX form here",
                       made.kind().toQualString()));
  std::vector<std::string> items;
  for (const auto* item : made.inputs()) items.push_back(tensor(item));
  return items;
}

void Context::defer(const torch::jit::Value* value, std::function<std::string()> make) {
  deferred_[value] = std::move(make);
}

std::string Context::tensor(const torch::jit::Value* value) {
  if (auto found = names_.find(value); found != names_.end()) return found->second;
  if (auto later = deferred_.find(value); later != deferred_.end()) {
    std::string name = later->second();
    bind(value, name);
    return name;
  }
  const torch::jit::Node& made = producer(value);
  if (made.kind() == c10::prim::Constant && value->type()->kind() == c10::TypeKind::TensorType) {
    at::Tensor constant = made.t(c10::attr::value);
    if (options_.portable && !at::isFloatingType(constant.scalar_type()))
      constant = constant.to(at::kFloat);
    std::string name = initializer(constant);
    bind(value, name);
    return name;
  }
  refuse(fmt::format("it takes a value made by {}, which has no ONNX form here",
                     made.kind().toQualString()));
}

std::string Context::operand(const torch::jit::Value* value, const torch::jit::Value* like) {
  if (value->type()->kind() == c10::TypeKind::TensorType) return tensor(value);
  return initializer(at::full({1}, number(value), at::TensorOptions().dtype(dtype(like))));
}

at::Tensor Context::weight(const torch::jit::Value* value) const {
  const torch::jit::Node& made = producer(value);
  if (made.kind() != c10::prim::Constant || !made.hasAttribute(c10::attr::value) ||
      made.kindOf(c10::attr::value) != torch::jit::AttributeKind::t)
    refuse("a weight it takes is computed while the model runs, not a constant");
  return made.t(c10::attr::value);
}

void Context::pass_through(const torch::jit::Value* value) {
  bind(node_->output(0), tensor(value));
}

bool Context::is_none(const torch::jit::Value* value) const {
  return value->type()->kind() == c10::TypeKind::NoneType ||
         (producer(value).kind() == c10::prim::Constant &&
          !producer(value).hasAttribute(c10::attr::value));
}

c10::IValue Context::constant(const torch::jit::Value* value) const {
  // The trace writes a list of constant integers as a list made of constants.
  const torch::jit::Node& made = producer(value);
  if (made.kind() == c10::prim::ListConstruct &&
      value->type()->isSubtypeOf(*c10::ListType::ofInts())) {
    std::vector<int64_t> items;
    for (const auto* item : made.inputs()) items.push_back(integer(item));
    return c10::IValue(items);
  }
  c10::optional<c10::IValue> known = torch::jit::toIValue(value);
  if (!known)
    refuse(
        fmt::format("its argument {} is computed while the model runs, and kiln exports only "
                    "constant arguments here",
                    value->debugName()));
  return *known;
}

int64_t Context::integer(const torch::jit::Value* value) const {
  c10::IValue known = constant(value);
  if (!known.isInt()) refuse("an argument that should be an integer is not");
  return known.toInt();
}

double Context::number(const torch::jit::Value* value) const {
  c10::IValue known = constant(value);
  if (known.isDouble()) return known.toDouble();
  if (known.isInt()) return static_cast<double>(known.toInt());
  if (known.isBool()) return known.toBool() ? 1.0 : 0.0;
  refuse("an argument that should be a number is not");
}

bool Context::boolean(const torch::jit::Value* value) const {
  c10::IValue known = constant(value);
  if (known.isBool()) return known.toBool();
  if (known.isInt()) return known.toInt() != 0;
  refuse("an argument that should be true or false is not");
}

std::vector<int64_t> Context::integers(const torch::jit::Value* value) const {
  c10::IValue known = constant(value);
  if (known.isInt()) return {known.toInt()};
  if (!known.isIntList()) refuse("an argument that should be a list of integers is not");
  return known.toIntVector();
}

std::vector<int64_t> Context::batch_multiples(const torch::jit::Value* value) const {
  const torch::jit::Node& made = producer(value);
  if (made.kind() == c10::prim::ListConstruct) {
    std::vector<int64_t> multiples;
    for (const auto* item : made.inputs()) multiples.push_back(batch_multiples(item).at(0));
    return multiples;
  }
  auto found = batch_constants_.find(value);
  if (found != batch_constants_.end()) return found->second;
  return std::vector<int64_t>(integers(value).size(), 0);
}

std::vector<int64_t> Context::shape(const torch::jit::Value* value) const {
  auto type = value->type()->cast<c10::TensorType>();
  c10::optional<std::vector<int64_t>> sizes;
  if (type) sizes = type->sizes().concrete_sizes();
  if (!sizes) refuse("the trace recorded no shape for its input");
  return *sizes;
}

std::vector<int64_t> Context::reshape_target(const torch::jit::Value* value) const {
  std::vector<int64_t> target = shape(value);
  auto found = batch_dimensions_.find(value);
  if (found == batch_dimensions_.end()) return target;
  if (std::count(found->second.begin(), found->second.end(), true) > 1)
    refuse("more than one dimension of its result is the batch's, which ONNX cannot keep dynamic");
  for (size_t d = 0; d < target.size() && d < found->second.size(); ++d)
    if (found->second[d]) target[d] = -1;
  return target;
}

at::ScalarType Context::dtype(const torch::jit::Value* value) const {
  at::ScalarType traced = traced_dtype(value);
  return options_.portable && !at::isFloatingType(traced) ? at::kFloat : traced;
}

at::ScalarType Context::traced_dtype(const torch::jit::Value* value) const {
  auto type = value->type()->cast<c10::TensorType>();
  if (!type || !type->scalarType()) refuse("the trace recorded no element type for its input");
  return *type->scalarType();
}

std::vector<std::string> Context::add(const std::string& op_type,
                                      const std::vector<std::string>& inputs,
                                      const std::vector<onnx::Attribute>& attributes, int outputs) {
  std::vector<std::string> names;
  for (int i = 0; i < outputs; ++i) names.push_back(fresh(op_type));
  builder_.add_node(op_type, inputs, names, attributes, names.front());
  return names;
}

std::string Context::add1(const std::string& op_type, const std::vector<std::string>& inputs,
                          const std::vector<onnx::Attribute>& attributes) {
  return add(op_type, inputs, attributes).front();
}

void Context::emit(const std::string& op_type, const std::vector<std::string>& inputs,
                   const std::vector<onnx::Attribute>& attributes) {
  bind(node_->output(0), add1(op_type, inputs, attributes));
}

std::string Context::reshape_unit_dims(const std::string& x, const std::vector<int64_t>& to,
                                       size_t first) {
  std::vector<int64_t> target(to.size(), 0);
  int free_dims = 0;
  for (size_t d = first; d < to.size(); ++d) {
    target[d] = to[d] == 1 ? 1 : -1;
    free_dims += to[d] == 1 ? 0 : 1;
  }
  if (free_dims > 1) return "";
  return add1("Reshape", {x, integers_initializer(target)});
}

std::string Context::initializer(const at::Tensor& value) {
  at::Tensor flat = value.detach().to(at::kCPU).contiguous();
  onnx::ElementType type = element_type(flat.scalar_type(), "a constant");
  std::string bytes(static_cast<size_t>(flat.numel() * onnx::element_size(type)), '\0');
  if (!bytes.empty()) std::memcpy(bytes.data(), flat.data_ptr(), bytes.size());
  std::string name = fresh("constant");
  builder_.add_initializer(name, type, flat.sizes().vec(), std::move(bytes));
  return name;
}

std::string Context::integers_initializer(const std::vector<int64_t>& values) {
  return initializer(at::tensor(c10::ArrayRef<int64_t>(values)).to(at::kLong));
}

}  // namespace kiln::exports::onnx_export
