#include "kiln/models/summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

namespace kiln::models {
namespace {

Shape without_batch(const Shape& shape) { return {shape.begin() + 1, shape.end()}; }

// Multiply-accumulates of one example of `call`, not counting the module's children: those of
// leaf modules and of CountsMultiplyAccumulates; 0 for those doing none worth counting
// (normalisation, activations, pooling: a few operations per element).
int64_t own_multiply_accumulates(const torch::nn::Module& module, const ModuleCall& call) {
  if (auto* counted = dynamic_cast<const CountsMultiplyAccumulates*>(&module))
    return counted->multiply_accumulates(call);
  std::string type = module_type(module);
  // find() points into the dict: keep the dict alive while the pointer is used.
  auto parameters = module.named_parameters(false);
  const torch::Tensor* weight = parameters.find("weight");
  if (!weight) return 0;
  if (type == "Conv1d" || type == "Conv2d")  // each output element: in/groups x kernel products
    return element_count(without_batch(call.output)) * (weight->numel() / weight->size(0));
  if (type == "ConvTranspose2d")  // each input element: out/groups x kernel products
    return element_count(without_batch(call.input)) * (weight->numel() / weight->size(0));
  if (type == "Linear") return element_count(without_batch(call.output)) * weight->size(1);
  return 0;
}

}  // namespace

// "kiln::models::(anonymous namespace)::ResidualImpl" -> "Residual".
std::string module_type(const torch::nn::Module& module) {
  std::string name = module.name();
  auto colons = name.rfind("::");
  if (colons != std::string::npos) name = name.substr(colons + 2);
  if (name.size() > 4 && name.compare(name.size() - 4, 4, "Impl") == 0)
    name.resize(name.size() - 4);
  return name == "LayerStack" ? "Sequential" : name;
}

ModelSummary summarize(Model& model, const Shape& input) {
  ModelSummary summary;
  summary.input = input;
  Shape batch = input;
  batch.insert(batch.begin(), 1);
  torch::Device device = torch::kCPU;
  for (const auto& p : model.parameters()) device = p.device();

  bool was_training = model.is_training();
  model.eval();
  CallRecorder recorder;
  {
    torch::NoGradGuard no_grad;
    torch::Tensor example = torch::zeros(batch, torch::TensorOptions().device(device));
    // Every output, so that each head of a multi_head model is measured too.
    observe_begin(model);
    observe(model, example, model.forward_named(example)[model.output_name()]);
  }
  model.train(was_training);

  for (const auto& item : model.named_modules("", /*include_self=*/true)) {
    const torch::nn::Module& module = *item.value();
    SummaryRow row;
    row.path = item.key();
    row.type = module_type(module);
    row.depth = row.path.empty() ? 0 : int(std::count(row.path.begin(), row.path.end(), '.')) + 1;
    for (const auto& p : module.parameters())
      (p.requires_grad() ? row.trainable : row.frozen) += p.numel();
    auto calls = recorder.calls().find(&module);
    if (calls != recorder.calls().end()) {
      for (const auto& call : calls->second) {
        row.outputs.push_back(without_batch(call.output));
        if (module.children().empty() || dynamic_cast<const CountsMultiplyAccumulates*>(&module))
          summary.multiply_accumulates += own_multiply_accumulates(module, call);
      }
    }
    summary.rows.push_back(std::move(row));
  }
  summary.trainable = summary.rows.front().trainable;
  summary.frozen = summary.rows.front().frozen;
  return summary;
}

std::string parameters_text(const torch::nn::Module& model) {
  int64_t count = 0, frozen = 0;
  for (const auto& p : model.parameters()) {
    count += p.numel();
    if (!p.requires_grad()) frozen += p.numel();
  }
  std::string text = with_thousands(count) + " parameters";
  return frozen ? text + " (" + with_thousands(frozen) + " frozen)" : text;
}

std::string with_thousands(int64_t value) {
  std::string digits = std::to_string(value < 0 ? -value : value);
  for (int i = int(digits.size()) - 3; i > 0; i -= 3) digits.insert(size_t(i), ",");
  return value < 0 ? "-" + digits : digits;
}

std::string row_label(const SummaryRow& row) {
  return std::string(size_t(2 * row.depth), ' ') + (row.path.empty() ? "(model)" : row.path);
}

std::string outputs_text(const SummaryRow& row) {
  std::string shapes;
  for (const auto& shape : row.outputs) shapes += (shapes.empty() ? "" : " ") + shape_text(shape);
  return shapes.empty() ? "-" : shapes;
}

std::string format_summary(const ModelSummary& summary, int max_depth) {
  std::vector<std::array<std::string, 5>> cells;
  for (const auto& row : summary.rows) {
    if (max_depth >= 0 && row.depth > max_depth) continue;
    cells.push_back({row_label(row), row.type, outputs_text(row), with_thousands(row.trainable),
                     with_thousands(row.frozen)});
  }
  std::array<size_t, 5> width{4, 4, 6, 9, 6};
  for (const auto& c : cells)
    for (size_t i = 0; i < c.size(); ++i) width[i] = std::max(width[i], c[i].size());
  auto line = [&](const std::array<std::string, 5>& c) {
    return fmt::format("{:<{}}  {:<{}}  {:<{}}  {:>{}}  {:>{}}\n", c[0], width[0], c[1], width[1],
                       c[2], width[2], c[3], width[3], c[4], width[4]);
  };
  std::string out = fmt::format("input {}\n", shape_text(summary.input));
  out += line({"path", "type", "output", "trainable", "frozen"});
  for (const auto& c : cells) out += line(c);
  out += fmt::format("parameters: {} ({} trainable, {} frozen)\n",
                     with_thousands(summary.trainable + summary.frozen),
                     with_thousands(summary.trainable), with_thousands(summary.frozen));
  out += fmt::format(
      "multiply-accumulates per example: {} (convolutions, linear, recurrent, "
      "attention)\n",
      with_thousands(summary.multiply_accumulates));
  return out;
}

}  // namespace kiln::models
