#include "kiln/models/layer_graph.h"

#include <algorithm>
#include <deque>
#include <map>
#include <set>

#include "kiln/models/observe.h"
#include "kiln/models/summary.h"

namespace kiln::models {
namespace {

using torch::autograd::Node;

// A branch of autograd functions between two observed calls longer than this (tensor
// arithmetic inside one block) is not followed further: no layer of the zoo comes near.
constexpr size_t kMostFunctionsWalked = 100000;

std::string dtype_name(torch::Dtype dtype) {
  switch (dtype) {
    case torch::kFloat32:
      return "float32";
    case torch::kFloat64:
      return "float64";
    case torch::kFloat16:
      return "float16";
    case torch::kBFloat16:
      return "bfloat16";
    case torch::kInt64:
      return "int64";
    case torch::kInt32:
      return "int32";
    case torch::kUInt8:
      return "uint8";
    case torch::kBool:
      return "bool";
    default:
      return "";
  }
}

Shape batch_free(const torch::Tensor& tensor) {
  Shape shape = tensor.sizes().vec();
  if (!shape.empty()) shape.front() = -1;
  return shape;
}

// "AddBackward0" -> "Add".
std::string operation_of(const Node& function) {
  std::string name = function.name();
  auto colons = name.rfind("::");
  if (colons != std::string::npos) name = name.substr(colons + 2);
  auto backward = name.find("Backward");
  return backward == std::string::npos || backward == 0 ? name : name.substr(0, backward);
}

// Listens to every observed call of one forward pass and builds the graph as the calls end,
// while each input still has the autograd function it had when the layer read it (an in-place
// layer later replaces it).
class GraphTracer : public CallListener {
 public:
  GraphTracer(const torch::nn::Module& model, const torch::Tensor& input) : model_(model) {
    for (const auto& item : model.named_modules("", /*include_self=*/true))
      scopes_[item.value().get()] = scope_of(item.key());
    add_node({"input", "Placeholder", {}, batch_free(input), dtype_name(input.scalar_type())},
             input);
    if (input.requires_grad()) {
      input_accumulator_ = torch::autograd::impl::grad_accumulator(input);
      by_function_[input_accumulator_.get()] = "input";
    }
  }

  void call_begins(const torch::nn::Module&) override {}

  void call_ends(const torch::nn::Module& module, const torch::Tensor& input,
                 const torch::Tensor& output) override {
    auto known = scopes_.find(&module);  // a module the model does not register: by its type
    std::string scope = known == scopes_.end() ? module_type(module) : known->second;
    if (module.children().empty()) {
      add_call(module, scope, module_type(module), producers_of(input), output);
    } else if (producer_of(output).empty() && output.grad_fn()) {
      // The block's output is no child's: the block made it from its children's outputs.
      add_call(module, scope, operation_of(*output.grad_fn()), walk_from(output.grad_fn()), output);
    }
  }

  /// A node per named output of the model, after the node of the model's own arithmetic that
  /// made it, if any.
  void add_outputs(const NamedOutputs& outputs) {
    for (const auto& item : outputs) {
      const torch::Tensor& output = item.value();
      if (producer_of(output).empty() && output.grad_fn())
        add_call(model_, "", operation_of(*output.grad_fn()), walk_from(output.grad_fn()), output);
      std::string name = item.key();
      while (used_.count(name) || used_scope(name)) name += "_output";
      add_node({name, "Identity", producers_of(output), batch_free(output),
                dtype_name(output.scalar_type())},
               torch::Tensor());
    }
  }

  std::vector<LayerNode> take() { return std::move(nodes_); }

 private:
  static std::string scope_of(std::string path) {
    std::replace(path.begin(), path.end(), '.', '/');
    return path;
  }

  bool used_scope(const std::string& name) const {
    for (const std::string& used : used_)
      if (used.rfind(name + "/", 0) == 0) return true;
    return false;
  }

  std::string unique(const std::string& name) {
    std::string candidate = name;
    for (int i = 1; used_.count(candidate); ++i) candidate = name + "_" + std::to_string(i);
    return candidate;
  }

  void add_call(const torch::nn::Module& module, const std::string& scope, const std::string& op,
                std::vector<std::string> inputs, const torch::Tensor& output) {
    std::string prefix = scope.empty() ? "" : scope + "/";
    std::string name = unique(prefix + op);
    for (const auto& parameter : module.named_parameters(/*recurse=*/false)) {
      std::string parameter_name = prefix + parameter.key();
      if (!used_.count(parameter_name))  // a module called twice shares its parameters
        add_node({parameter_name,
                  "Variable",
                  {},
                  parameter.value().sizes().vec(),
                  dtype_name(parameter.value().scalar_type())},
                 torch::Tensor());
      inputs.push_back(parameter_name);
    }
    add_node({name, op, std::move(inputs), batch_free(output), dtype_name(output.scalar_type())},
             output);
  }

  void add_node(LayerNode node, const torch::Tensor& output) {
    used_.insert(node.name);
    if (output.defined()) {
      held_.push_back(output);  // keeps its TensorImpl and autograd function from being reused
      by_tensor_[output.unsafeGetTensorImpl()] = node.name;
      if (output.grad_fn()) by_function_[output.grad_fn().get()] = node.name;
    }
    nodes_.push_back(std::move(node));
  }

  // The node that made `tensor` itself, or "".
  std::string producer_of(const torch::Tensor& tensor) const {
    if (tensor.grad_fn()) {
      auto found = by_function_.find(tensor.grad_fn().get());
      if (found != by_function_.end()) return found->second;
    }
    auto found = by_tensor_.find(tensor.unsafeGetTensorImpl());
    return found == by_tensor_.end() ? "" : found->second;
  }

  // The nodes `tensor` was computed from: its maker, or those the tensor arithmetic that made it
  // read.
  std::vector<std::string> producers_of(const torch::Tensor& tensor) const {
    std::string direct = producer_of(tensor);
    if (!direct.empty()) return {direct};
    return tensor.grad_fn() ? walk_from(tensor.grad_fn()) : std::vector<std::string>{};
  }

  // The nodes reached backwards from `start` through functions no node made, in order of distance.
  std::vector<std::string> walk_from(const std::shared_ptr<Node>& start) const {
    std::vector<std::string> found;
    std::set<const Node*> seen{start.get()};
    std::deque<const Node*> waiting{start.get()};
    while (!waiting.empty() && seen.size() < kMostFunctionsWalked) {
      const Node* function = waiting.front();
      waiting.pop_front();
      for (const auto& edge : function->next_edges()) {
        const Node* next = edge.function.get();
        if (!next || !seen.insert(next).second) continue;
        auto named = by_function_.find(next);
        if (named == by_function_.end()) {
          waiting.push_back(next);
        } else if (std::find(found.begin(), found.end(), named->second) == found.end()) {
          found.push_back(named->second);
        }
      }
    }
    return found;
  }

  const torch::nn::Module& model_;
  std::map<const torch::nn::Module*, std::string> scopes_;
  std::map<const Node*, std::string> by_function_;
  std::map<const c10::TensorImpl*, std::string> by_tensor_;
  std::shared_ptr<Node> input_accumulator_;
  std::vector<torch::Tensor> held_;
  std::set<std::string> used_;
  std::vector<LayerNode> nodes_;
};

// Makes `listener` the one told of calls on this thread while alive.
class Listening {
 public:
  explicit Listening(CallListener* listener) : outer_(listen_to_calls(listener)) {}
  ~Listening() { listen_to_calls(outer_); }
  Listening(const Listening&) = delete;
  Listening& operator=(const Listening&) = delete;

 private:
  CallListener* outer_;
};

}  // namespace

std::vector<LayerNode> layer_graph(Model& model, const Shape& input, torch::Dtype dtype) {
  Shape batch = input;
  batch.insert(batch.begin(), 1);
  torch::Device device = torch::kCPU;
  for (const auto& p : model.parameters()) device = p.device();
  torch::Tensor example = torch::zeros(batch, torch::TensorOptions().device(device).dtype(dtype));
  // A floating input takes part in autograd, so that every layer's output records what it read.
  if (example.is_floating_point()) example.requires_grad_(true);

  bool was_training = model.is_training();
  model.eval();
  GraphTracer tracer(model, example);
  try {
    torch::AutoGradMode with_gradients(true);
    Listening listening(&tracer);
    tracer.add_outputs(model.forward_named(example));
  } catch (...) {
    model.train(was_training);
    throw;
  }
  model.train(was_training);
  return tracer.take();
}

}  // namespace kiln::models
