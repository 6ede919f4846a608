#include "kiln/export/onnx/onnx_writer.h"

#include <fmt/format.h>
#include <torch/csrc/jit/frontend/tracer.h>

#include <torch/csrc/jit/passes/dead_code_elimination.h>
#include <cstdlib>

#include "kiln/core/error.h"
#include "kiln/export/exported_model.h"
#include "kiln/export/onnx/onnx_context.h"
#include "kiln/models/observe.h"

namespace kiln::exports {
namespace {

using onnx_export::Context;
namespace jit = torch::jit;

// While tracing, each observed module call opens a scope named by its path in the model
// (`layer1.0.conv1`), so that a node that cannot be written names its layer.
class ScopeNamer : public models::CallListener {
 public:
  explicit ScopeNamer(const torch::nn::Module* root) {
    if (!root) return;
    for (const auto& item : root->named_modules("", /*include_self=*/false))
      paths_[item.value().get()] = item.key();
  }
  void call_begins(const torch::nn::Module& module) override {
    auto found = paths_.find(&module);
    auto state = jit::tracer::getTracingState();
    if (found == paths_.end() || !state) return;
    state->graph->push_scope(found->second);
    ++open_;
  }
  void call_ends(const torch::nn::Module& module, const torch::Tensor&,
                 const torch::Tensor&) override {
    auto state = jit::tracer::getTracingState();
    if (!paths_.count(&module) || !state || open_ == 0) return;
    state->graph->pop_scope();
    --open_;
  }

 private:
  std::map<const torch::nn::Module*, std::string> paths_;
  int open_ = 0;
};

// Parameters that require gradients cannot be constants of a trace: they are lent without.
class GradientsOff {
 public:
  explicit GradientsOff(const std::shared_ptr<models::Model>& model) {
    if (!model) return;
    for (auto& parameter : model->parameters())
      if (parameter.requires_grad()) {
        parameter.requires_grad_(false);
        lent_.push_back(parameter);
      }
  }
  ~GradientsOff() {
    for (auto& parameter : lent_) parameter.requires_grad_(true);
  }

 private:
  std::vector<torch::Tensor> lent_;
};

struct Trace {
  std::shared_ptr<jit::Graph> graph;
  std::vector<torch::Tensor> outputs;
};

Trace trace_at(ExportedModel& model, const serving::Signature& signature,
               const std::vector<std::string>& outputs, int64_t batch) {
  const experiment::ModelInput& input = model.inputs().front();
  std::vector<int64_t> shape = {batch};
  shape.insert(shape.end(), input.shape.begin(), input.shape.end());
  torch::Tensor example = torch::zeros(shape, torch::TensorOptions().dtype(input.dtype));
  ScopeNamer namer(model.module().get());
  models::CallListener* before = models::listen_to_calls(&namer);
  Trace trace;
  try {
    auto [state, results] = jit::tracer::trace(
        {example},
        [&](jit::Stack inputs) {
          auto named = model.run(signature, inputs.at(0).toTensor());
          jit::Stack stack;
          for (const auto& name : outputs) stack.emplace_back(named.at(name));
          return stack;
        },
        [](const torch::autograd::Variable&) { return std::string(); }, /*strict=*/false);
    trace.graph = state->graph;
    for (const auto& value : results) trace.outputs.push_back(value.toTensor());
  } catch (...) {
    models::listen_to_calls(before);
    throw;
  }
  models::listen_to_calls(before);
  jit::EliminateDeadCode(trace.graph);
  return trace;
}

// The constants that differ between the traces at batches 2 and 3: for each element, the multiple
// of the batch it is. Any other difference means the graph itself depends on the batch.
onnx_export::BatchConstants batch_constants(const Trace& two, const Trace& three) {
  onnx_export::BatchConstants found;
  auto a = two.graph->nodes().begin(), b = three.graph->nodes().begin();
  for (; a != two.graph->nodes().end() && b != three.graph->nodes().end(); ++a, ++b) {
    if ((*a)->kind() != (*b)->kind())
      throw Error(
          fmt::format("cannot export to ONNX: the model runs {} at one batch size and {} "
                      "at another",
                      (*a)->kind().toQualString(), (*b)->kind().toQualString()));
    if ((*a)->kind() != c10::prim::Constant || (*a)->outputs().size() != 1) continue;
    auto x = jit::toIValue((*a)->output()), y = jit::toIValue((*b)->output());
    if (!x || !y || !(x->isInt() || x->isIntList())) continue;
    std::vector<int64_t> at_two = x->isInt() ? std::vector<int64_t>{x->toInt()} : x->toIntVector();
    std::vector<int64_t> at_three =
        y->isInt() ? std::vector<int64_t>{y->toInt()} : y->toIntVector();
    if (at_two == at_three) continue;
    std::vector<int64_t> multiples(at_two.size(), 0);
    for (size_t i = 0; i < at_two.size() && i < at_three.size(); ++i) {
      int64_t step = at_three[i] - at_two[i];
      if (step != 0 && at_two[i] == 2 * step) multiples[i] = step;
    }
    found[(*a)->output()] = multiples;
  }
  if (a != two.graph->nodes().end() || b != three.graph->nodes().end())
    throw Error(
        "cannot export to ONNX: the model runs more operators at one batch size than at "
        "another");
  return found;
}

// The dimensions of each traced tensor whose sizes differ between the traces at batches 2 and 3
// (the graphs run the same operators: batch_constants checked).
onnx_export::BatchDimensions batch_dimensions(const Trace& two, const Trace& three) {
  onnx_export::BatchDimensions found;
  auto note = [&found](const jit::Value* a, const jit::Value* b) {
    auto x = a->type()->cast<c10::TensorType>(), y = b->type()->cast<c10::TensorType>();
    if (!x || !y) return;
    auto at_two = x->sizes().concrete_sizes(), at_three = y->sizes().concrete_sizes();
    if (!at_two || !at_three || at_two->size() != at_three->size()) return;
    std::vector<bool> batch(at_two->size());
    for (size_t d = 0; d < batch.size(); ++d) batch[d] = (*at_two)[d] != (*at_three)[d];
    found[a] = batch;
  };
  note(two.graph->inputs().at(0), three.graph->inputs().at(0));
  auto a = two.graph->nodes().begin(), b = three.graph->nodes().begin();
  for (; a != two.graph->nodes().end() && b != three.graph->nodes().end(); ++a, ++b)
    for (size_t i = 0; i < (*a)->outputs().size() && i < (*b)->outputs().size(); ++i)
      note((*a)->output(i), (*b)->output(i));
  return found;
}

onnx::ValueInfo value_info(const std::string& name, const torch::Tensor& at_two,
                           const torch::Tensor& at_three) {
  onnx::ValueInfo info{name, onnx_export::element_type(at_two.scalar_type(), name), {}};
  for (int64_t d = 0; d < at_two.dim(); ++d)
    info.shape.push_back(at_two.size(d) != at_three.size(d) ? -1 : at_two.size(d));
  return info;
}

// The signature's outputs ONNX gets: labels are strings no ONNX runtime computes, so an output
// of class names goes where its class ids go too, and is written as the ids otherwise.
std::vector<std::string> onnx_outputs(const serving::Signature& signature) {
  std::vector<std::string> names;
  bool has_ids = false;
  for (const auto& [name, out] : signature.outputs)
    has_ids = has_ids || out.op == serving::OutputOp::kArgmax;
  for (const auto& [name, out] : signature.outputs)
    if (!(has_ids && out.op == serving::OutputOp::kArgmaxLabel)) names.push_back(name);
  return names;
}

void convert(const Trace& trace, Context& context) {
  for (const jit::Node* node : trace.graph->nodes()) {
    c10::Symbol kind = node->kind();
    if (kind == c10::prim::Constant || kind == c10::prim::ListConstruct) continue;
    context.begin(*node);
    auto converter = onnx_export::op_converters().find(kind.toQualString());
    if (converter == onnx_export::op_converters().end())
      context.refuse("kiln has no ONNX form for this operator");
    converter->second(*node, context);
  }
}

}  // namespace

OnnxModel to_onnx(ExportedModel& model, const std::string& signature_name, bool portable) {
  const serving::Signature* signature = model.signature(signature_name);
  if (!signature)
    throw Error("cannot export to ONNX: the model has no signature " + signature_name);
  if (!model.module())
    throw Error("cannot export to ONNX: a TorchScript version is exported by PyTorch itself");
  if (model.device() != torch::kCPU)
    throw Error("cannot export to ONNX from " + model.device().str() + ": export on the CPU");
  std::vector<std::string> outputs = onnx_outputs(*signature);
  GradientsOff lent(model.module());
  Trace two = trace_at(model, *signature, outputs, 2);
  Trace three = trace_at(model, *signature, outputs, 3);
  if (std::getenv("KILN_ONNX_DEBUG")) two.graph->dump();

  onnx::ModelBuilder builder;
  Context context(builder, batch_constants(two, three), batch_dimensions(two, three), {portable});
  const experiment::ModelInput& input = model.inputs().front();
  std::vector<int64_t> input_shape = {-1};
  input_shape.insert(input_shape.end(), input.shape.begin(), input.shape.end());
  builder.add_input({input.name, onnx_export::element_type(input.dtype, input.name), input_shape});
  context.bind(two.graph->inputs().at(0), input.name);
  convert(two, context);
  for (size_t i = 0; i < outputs.size(); ++i) {
    context.begin(*two.graph->outputs().at(i)->node());
    std::string value = context.tensor(two.graph->outputs().at(i));
    at::ScalarType type = two.outputs.at(i).scalar_type();
    if (portable && !at::isFloatingType(type)) {  // held as floats until here
      std::string declared = outputs[i] + "_as_declared";
      builder.add_node("Cast", {value}, {declared},
                       {{"to", static_cast<int64_t>(onnx_export::element_type(type, outputs[i]))}},
                       declared);
      value = declared;
    }
    builder.add_node("Identity", {value}, {outputs[i]}, {}, outputs[i]);
    builder.add_output(value_info(outputs[i], two.outputs.at(i), three.outputs.at(i)));
  }
  if (!model.labels().empty()) {
    Json labels = model.labels();
    builder.add_metadata("labels", labels.dump());
  }
  builder.add_metadata("signature", signature_name);
  return {builder.serialize(onnx_export::kOpset, model.name(), KILN_VERSION), builder.node_count(),
          outputs};
}

}  // namespace kiln::exports
