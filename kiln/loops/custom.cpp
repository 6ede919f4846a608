// custom: the training step written in PyTorch. The model is a scripted module (`model: {type:
// torchscript, file: step.pt}`) with a method
//   def training_step(self, batch: Dict[str, Tensor]) -> Dict[str, Tensor]
// returning the batch's `loss` (what backward runs on) and any other values to log (train/NAME,
// each one number), and optionally
//   def validation_step(self, batch: Dict[str, Tensor]) -> Dict[str, Tensor]
// whose values are averaged over the validation data, weighted by the batches' sizes (val/NAME),
// beside what the config's loss and metrics measure of forward's outputs. A batch holds `input`,
// `target` when the data has one, and the data's named targets. kiln does the rest: the data,
// the optimizer and its schedules, precision, several processes, checkpoints, logging, export.

#include <fmt/format.h>

#include <map>

#include "kiln/data/loader.h"
#include "kiln/engine/evaluator.h"
#include "kiln/engine/loop.h"
#include "kiln/models/torchscript_file.h"
#include "kiln/models/torchscript_model.h"

namespace kiln::loops {
namespace {

using engine::DeviceSum;
using engine::Loop;
using engine::LoopSetup;
using engine::MetricValues;
using engine::Objective;
using models::TorchScriptModel;

constexpr size_t kMaxValueName = 64;

c10::Dict<std::string, torch::Tensor> batch_dict(const data::Batch& batch) {
  c10::Dict<std::string, torch::Tensor> dict;
  dict.insert("input", batch.input);
  if (batch.target.defined()) dict.insert("target", batch.target);
  for (const auto& [name, target] : batch.targets) dict.insert(name, target);
  return dict;
}

bool tag_character(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
}

// What a step method returned, by name: each value one number (the loss too); anything else is
// the module's mistake, named with its file and method.
std::map<std::string, torch::Tensor> step_values(const c10::IValue& result, const std::string& at) {
  if (!result.isGenericDict() ||
      !result.toGenericDict().keyType()->isSubtypeOf(*c10::StringType::get()))
    throw Error(fmt::format("{} returns {}, not Dict[str, Tensor]", at, result.type()->str()));
  std::map<std::string, torch::Tensor> values;
  for (const auto& item : result.toGenericDict()) {
    std::string name = item.key().toStringRef();
    if (name.empty() || name.size() > kMaxValueName ||
        !std::all_of(name.begin(), name.end(), tag_character))
      throw Error(
          fmt::format("{} returns a value named \"{}\": names are 1 to {} letters, digits, "
                      "_, - and .",
                      at, name, kMaxValueName));
    if (!item.value().isTensor() || item.value().toTensor().numel() != 1)
      throw Error(
          fmt::format("{} returns \"{}\" as {}; each value is one number (a tensor of one "
                      "element)",
                      at, name, item.value().type()->str()));
    values[name] = item.value().toTensor().reshape({});
  }
  return values;
}

// Values summed on the device by name, with the weight each sum counts for.
struct ValueSums {
  std::map<std::string, DeviceSum> sums;
  double weight = 0;
  void add(const std::map<std::string, torch::Tensor>& values, double scale) {
    for (const auto& [name, value] : values)
      sums[name].add(value.detach().to(torch::kFloat) * scale);
    weight += scale;
  }
  // Means tagged `split`/NAME, combined over the processes (each process names the same values).
  MetricValues take(const std::string& split, distributed::Context& context) {
    std::vector<double> totals;
    std::vector<std::string> names;
    for (auto& [name, sum] : sums) {
      names.push_back(name);
      totals.push_back(sum.take());
    }
    totals.push_back(weight);
    context.all_reduce(totals, distributed::ReduceOp::kSum);
    weight = 0;
    MetricValues means;
    if (totals.back() == 0) return means;
    for (size_t i = 0; i < names.size(); ++i)
      means[split + "/" + names[i]] = totals[i] / totals.back();
    return means;
  }
};

class Custom : public Loop {
 public:
  explicit Custom(const NoOptions&) {}

  void attach(const LoopSetup& setup) override {
    TorchScriptModel* model = models::as_torchscript(setup.model);
    if (!model)
      throw ConfigError(config_path, "",
                        "the custom loop runs the model's training_step: give model: {type: "
                        "torchscript, file: ...}, a module scripted with one");
    if (!model->has_method("training_step"))
      throw ConfigError("model.file", "",
                        fmt::format("{}: the module has no training_step method, which the custom "
                                    "loop runs: def training_step(self, batch: Dict[str, Tensor]) "
                                    "-> Dict[str, Tensor]",
                                    model->file()));
    validates_ = model->has_method("validation_step");
  }

  torch::Tensor batch_loss(models::Model& model, Objective&, const data::Batch& batch) override {
    std::map<std::string, torch::Tensor> values = run(model, "training_step", batch);
    auto loss = values.find("loss");
    if (loss == values.end())
      throw Error(
          fmt::format("{}: training_step returns no \"loss\"; it returns {{\"loss\": ..., "
                      "other values to log}}",
                      file_of(model)));
    if (!loss->second.requires_grad())
      throw Error(
          fmt::format("{}: training_step's loss has no gradient (computed under no_grad, "
                      "or of nothing that trains)",
                      file_of(model)));
    training_.add(values, 1.0);
    last_loss_ = loss->second.detach();
    return loss->second;
  }

  torch::Tensor counted_loss(const Objective&) const override { return last_loss_; }

  MetricValues take_values(distributed::Context& context) override {
    return training_.take("train", context);
  }
  std::vector<std::string> tags() const override { return {"train/loss"}; }

  MetricValues validation_values(models::Model& model, data::Loader& val, torch::Device device,
                                 int64_t max_batches, distributed::Context& context) override {
    if (!validates_) return {};
    torch::NoGradGuard no_grad;
    bool was_training = model.is_training();
    model.eval();
    ValueSums sums;
    val.start_epoch(0);
    for (int64_t taken = 0; max_batches == 0 || taken < max_batches; ++taken) {
      std::optional<data::Batch> batch = val.next();
      if (!batch) break;
      if (batch->size() == 0) continue;
      sums.add(run(model, "validation_step", engine::on_device(*batch, device)),
               double(batch->size()));
    }
    model.train(was_training);
    return sums.take("val", context);
  }

 private:
  static const std::string& file_of(models::Model& model) {
    return static_cast<TorchScriptModel&>(model).file();
  }

  std::map<std::string, torch::Tensor> run(models::Model& model, const std::string& method,
                                           const data::Batch& batch) {
    TorchScriptModel& scripted = static_cast<TorchScriptModel&>(model);
    std::string at = scripted.file() + ": " + method;
    c10::IValue result;
    try {
      result = scripted.run(method, {batch_dict(batch)});
    } catch (const std::exception& e) {  // c10::Error, and a raise in the module
      throw Error(at + " failed: " + models::script_error_text(e));
    }
    return step_values(result, at);
  }

  bool validates_ = false;
  ValueSums training_;
  torch::Tensor last_loss_;
};

}  // namespace

KILN_REGISTER(engine::loop_registry, "custom", Custom, NoOptions,
              "The step written in PyTorch: the scripted model's training_step(batch) gives the "
              "loss and values to log, its validation_step(batch) values to validate.");

}  // namespace kiln::loops
