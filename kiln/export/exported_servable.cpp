#include "kiln/export/exported_servable.h"

#include <fmt/format.h>

#include "kiln/data/dtype_names.h"
#include "kiln/export/columns_example_encoder.h"
#include "kiln/serving/serving_error.h"

namespace kiln::exports {

// The engine's and the experiment's types (checkpoints, callbacks; Experiment, OpenedModel) are
// this file's vocabulary.
using namespace experiment;

torch::Tensor host_to_tensor(const serving::HostTensor& host, torch::Dtype dtype,
                             const std::string& input) {
  torch::Tensor values =
      torch::from_blob(const_cast<double*>(host.numbers.data()),
                       {static_cast<int64_t>(host.numbers.size())}, torch::kFloat64)
          .reshape(host.shape);
  bool narrow_integer = dtype == torch::kUInt8 || dtype == torch::kInt8 || dtype == torch::kInt16;
  if (narrow_integer && values.numel() > 0) {
    double low = dtype == torch::kUInt8 ? 0 : dtype == torch::kInt8 ? -128 : -32768;
    double high = dtype == torch::kUInt8 ? 255 : dtype == torch::kInt8 ? 127 : 32767;
    if (values.min().item<double>() < low || values.max().item<double>() > high)
      throw serving::ServingError(serving::StatusCode::kInvalidArgument,
                                  fmt::format("input {}: values of {} lie in [{}, {}]", input,
                                              data::dtype_name(dtype), low, high));
  }
  return values.to(dtype);
}

ExportedServable::ExportedServable(std::shared_ptr<ExportedModel> model)
    : model_(std::move(model)) {
  if (model_->preprocessing().is_null()) return;
  const ModelInput& input = model_->inputs().front();
  examples_ = std::make_unique<ColumnsExampleEncoder>(
      columns_for_input(model_->preprocessing(), input, model_->directory()), input.name);
}

std::map<std::string, serving::HostTensor> ExportedServable::predict(
    const std::string& signature, const std::map<std::string, serving::HostTensor>& inputs) {
  const ModelInput& input = model_->inputs().front();
  torch::Tensor batch = host_to_tensor(inputs.at(input.name), input.dtype, input.name);
  const serving::Signature& chosen = *model_->signature(signature);
  std::map<std::string, torch::Tensor> outputs;
  {
    c10::InferenceMode inference;
    outputs = model_->run(chosen, batch);
  }
  std::map<std::string, serving::HostTensor> host;
  for (const auto& [name, out] : chosen.outputs)
    host[name] = model_->to_host(out, outputs.at(name));
  return host;
}

}  // namespace kiln::exports
