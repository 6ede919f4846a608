#include "kiln/models/torchscript_model.h"

#include <fmt/format.h>

#include <sstream>

#include <torch/csrc/jit/runtime/graph_executor.h>

#include "kiln/core/error.h"
#include "kiln/models/torchscript_file.h"

namespace kiln::models {
namespace {

// Deeper than any real network; a crafted archive cannot make the mirror recurse without end.
constexpr int kMaxModuleDepth = 64;

// Registers `scripted`'s own parameters and buffers in `into`, and a module per child, down the
// tree: the same tensors, so an update through either is seen by both.
void mirror(const torch::jit::Module& scripted, torch::nn::Module& into, int depth,
            const std::string& file) {
  if (depth > kMaxModuleDepth)
    throw ConfigError("file", "",
                      fmt::format("{}: modules nested more than {} deep", file, kMaxModuleDepth));
  for (const auto& parameter : scripted.named_parameters(/*recurse=*/false))
    into.register_parameter(parameter.name, parameter.value, parameter.value.requires_grad());
  for (const auto& buffer : scripted.named_buffers(/*recurse=*/false))
    into.register_buffer(buffer.name, buffer.value);
  for (const auto& child : scripted.named_children()) {
    // Named as PyTorch's class (Linear), which `kiln model summary` shows as the type.
    auto type = child.value.type()->name();
    auto mirrored = std::make_shared<torch::nn::Module>(type ? type->name() : child.name);
    mirror(child.value, *mirrored, depth + 1, file);
    into.register_module(child.name, mirrored);
  }
}

// The one tensor a trained model's forward returns; anything else is the module's mistake.
torch::Tensor single_tensor(const c10::IValue& result, const std::string& file) {
  if (!result.isTensor())
    throw Error(
        fmt::format("{}: forward returns {}; a model kiln trains returns one tensor (its "
                    "main output)",
                    file, result.type()->str()));
  return result.toTensor();
}

torch::jit::Module read_module(const TorchScriptOptions& options) {
  if (options.file.empty())
    throw ConfigError("file", "", "no module: give the file torch.jit.save wrote (net.pt)");
  return read_torchscript(options.file, torch::kCPU);
}

}  // namespace

void TorchScriptOptions::describe(Schema& s) {
  s.field("file", file,
          "The module (required): a file torch.jit.save wrote of a torch.jit.script'ed "
          "nn.Module, relative to the working folder.");
  s.field("output", output,
          "The name of forward's output in exports: logits for a classifier, as kiln's are.");
}

TorchScriptModel::TorchScriptModel(const TorchScriptOptions& options, const Inputs& input)
    : TorchScriptModel(read_module(options), options.file, options.output, input.shape) {}

TorchScriptModel::TorchScriptModel(torch::jit::Module module, std::string file, std::string output,
                                   const Shape& input)
    : module_(std::move(module)), file_(std::move(file)), output_(std::move(output)) {
  mirror(module_, *this, 0, file_);
  torch::NoGradGuard no_grad;
  bool was_training = module_.is_training();
  module_.eval();
  std::vector<int64_t> shape{2};
  shape.insert(shape.end(), input.begin(), input.end());
  torch::Tensor example;
  try {
    // On the module's device: a teacher's is read onto the training device.
    std::vector<torch::Tensor> tensors = parameters();
    torch::Device device = tensors.empty() ? torch::Device(torch::kCPU) : tensors.front().device();
    example = single_tensor(run("forward", {torch::zeros(shape, device)}), file_);
  } catch (const Error& e) {  // what the module gives: a config error where it is named
    throw ConfigError("file", "", e.what());
  } catch (const std::exception& e) {
    throw ConfigError("file", "",
                      fmt::format("{}: forward fails on a batch of examples of shape {}: {}", file_,
                                  shape_text(input), script_error_text(e)));
  }
  module_.train(was_training);
  output_shape_ = Shape(example.sizes().begin() + 1, example.sizes().end());
}

c10::IValue TorchScriptModel::run(const std::string& name, std::vector<c10::IValue> inputs) {
  torch::jit::GraphOptimizerEnabledGuard unoptimized(false);
  return module_.get_method(name)(std::move(inputs));
}

torch::Tensor TorchScriptModel::forward(const torch::Tensor& input) {
  return single_tensor(run("forward", {input}), file_);
}

void TorchScriptModel::train(bool on) {
  Model::train(on);
  module_.train(on);
  if (!on) return;
  // Modules freeze() holds in eval mode stay so in the scripted code, which reads its own flags.
  for (const auto& item : named_modules("", /*include_self=*/false)) {
    if (item.value()->is_training()) continue;
    torch::jit::Module held = module_;
    std::istringstream path(item.key());
    for (std::string name; std::getline(path, name, '.');) held = held.attr(name).toModule();
    held.train(false);
  }
}

TorchScriptModel* as_torchscript(Model& model) { return dynamic_cast<TorchScriptModel*>(&model); }

KILN_REGISTER(model_registry, "torchscript", TorchScriptModel, TorchScriptOptions,
              "A module written in PyTorch: torch.jit.script'ed, saved by torch.jit.save.");

}  // namespace kiln::models
