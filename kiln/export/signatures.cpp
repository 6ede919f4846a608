#include "kiln/export/signatures.h"

#include <utility>

#include "kiln/data/transform.h"

namespace kiln::exports {

// The engine's and the experiment's types (checkpoints, callbacks; Experiment, OpenedModel) are
// this file's vocabulary.
using namespace experiment;

namespace {

using serving::OutputOp;
using serving::SignatureOutput;

// The shape of an output tensor with its batch dimension as -1.
std::vector<int64_t> batch_shape(at::IntArrayRef sizes) {
  std::vector<int64_t> shape(sizes.begin(), sizes.end());
  shape.front() = -1;
  return shape;
}

// The same without dimension 1, the class dimension argmax removes.
std::vector<int64_t> without_classes(at::IntArrayRef sizes) {
  std::vector<int64_t> shape = batch_shape(sizes);
  shape.erase(shape.begin() + 1);
  return shape;
}

SignatureOutput output_of(const std::string& from, OutputOp op, serving::DType dtype,
                          std::vector<int64_t> shape) {
  SignatureOutput out;
  out.from = from;
  out.op = op;
  out.spec = {dtype, std::move(shape), std::nullopt};
  return out;
}

// What a loss makes of one model output `from`, by output name.
std::map<std::string, SignatureOutput> task_outputs(const std::string& from,
                                                    const torch::Tensor& value,
                                                    const std::string& loss, bool redraws_input) {
  serving::DType dtype = serving_dtype(value.scalar_type());
  std::map<std::string, SignatureOutput> outputs;
  bool has_classes = value.dim() >= 2;
  if (loss == "cross_entropy" && has_classes) {
    outputs["classes"] = output_of(from, OutputOp::kArgmaxLabel, serving::DType::kString,
                                   without_classes(value.sizes()));
    outputs["class_ids"] =
        output_of(from, OutputOp::kArgmax, serving::DType::kInt64, without_classes(value.sizes()));
    outputs["probabilities"] =
        output_of(from, OutputOp::kSoftmax, dtype, batch_shape(value.sizes()));
    outputs["logits"] = output_of(from, OutputOp::kIdentity, dtype, batch_shape(value.sizes()));
  } else if (loss == "binary_cross_entropy") {
    outputs["probabilities"] =
        output_of(from, OutputOp::kSigmoid, dtype, batch_shape(value.sizes()));
    outputs["class_ids"] =
        output_of(from, OutputOp::kAboveHalf, serving::DType::kInt64, batch_shape(value.sizes()));
    outputs["logits"] = output_of(from, OutputOp::kIdentity, dtype, batch_shape(value.sizes()));
  } else {
    outputs[redraws_input ? "reconstruction" : "predictions"] =
        output_of(from, OutputOp::kIdentity, dtype, batch_shape(value.sizes()));
  }
  return outputs;
}

torch::Tensor transformed(const Transforms& transforms, torch::Tensor input) {
  for (const auto& transform : transforms) input = transform->apply(input);
  return input;
}

}  // namespace

serving::DType serving_dtype(torch::Dtype dtype) {
  switch (dtype) {
    case torch::kFloat64:
      return serving::DType::kFloat64;
    case torch::kInt64:
      return serving::DType::kInt64;
    case torch::kInt32:
    case torch::kInt16:
    case torch::kInt8:
    case torch::kUInt8:
      return serving::DType::kInt32;
    case torch::kBool:
      return serving::DType::kBool;
    default:
      return serving::DType::kFloat32;
  }
}

serving::Signatures derive_signatures(models::Model& model, const std::vector<ModelInput>& inputs,
                                      const Transforms& transforms, const ComponentSpec& loss,
                                      const models::EmbeddingLayer& embedding) {
  torch::NoGradGuard no_grad;
  const ModelInput& input = inputs.front();
  std::vector<int64_t> example = {1};
  example.insert(example.end(), input.shape.begin(), input.shape.end());
  torch::Tensor zeros = torch::zeros(example, torch::TensorOptions().dtype(input.dtype));
  torch::Tensor batch = transformed(transforms, zeros);
  auto device = model.parameters().empty() ? torch::kCPU : model.parameters().front().device();
  models::NamedOutputs outputs = model.forward_named(batch.to(device));

  std::map<std::string, serving::TensorSpec> signature_inputs = {
      {input.name, {serving_dtype(input.dtype), batch_shape(zeros.sizes()), input.image}}};
  serving::Signatures signatures;
  serving::Signature& main = signatures["serving_default"];
  main.inputs = signature_inputs;
  std::vector<models::HeadSpec> heads = model.heads();
  for (const auto& item : outputs) {
    const std::string& name = item.key();
    if (heads.empty()) {
      bool first = name == outputs.keys().front();
      auto made = first ? task_outputs(name, item.value(), loss.type(),
                                       model.output_name() == "reconstruction")
                        : task_outputs(name, item.value(), "", false);
      // An autoencoder's second output keeps its own name (`embedding`).
      if (!first) made = {{name, made.begin()->second}};
      main.outputs.insert(made.begin(), made.end());
      continue;
    }
    const models::HeadSpec* head = nullptr;
    for (const auto& spec : heads)
      if (spec.name == name) head = &spec;
    auto made = task_outputs(name, item.value(), head ? head->loss.type() : "",
                             head && head->target == "input");
    serving::Signature& own = signatures[name];
    own.inputs = signature_inputs;
    own.outputs = made;
    for (const auto& [output, out] : made) main.outputs[name + "/" + output] = out;
  }

  torch::Tensor embedded = models::embed(model, embedding, batch.to(device));
  if (embedded.defined()) {
    serving::Signature& embed = signatures["embed"];
    embed.inputs = signature_inputs;
    SignatureOutput out = output_of("", OutputOp::kLayer, serving_dtype(embedded.scalar_type()),
                                    batch_shape(embedded.sizes()));
    embed.outputs["embedding"] = out;
  }
  return signatures;
}

std::map<std::string, torch::Tensor> run_signature(models::Model& model,
                                                   const serving::Signature& signature,
                                                   const Transforms& transforms,
                                                   const models::EmbeddingLayer& embedding,
                                                   const torch::Tensor& input) {
  torch::NoGradGuard no_grad;
  torch::Tensor batch = transformed(transforms, input);
  bool needs_model = false, needs_embedding = false;
  for (const auto& [name, out] : signature.outputs)
    (out.op == OutputOp::kLayer ? needs_embedding : needs_model) = true;
  models::NamedOutputs outputs;
  if (needs_model) outputs = model.forward_named(batch);
  torch::Tensor embedded;
  if (needs_embedding) embedded = models::embed(model, embedding, batch);
  return signature_outputs(signature, outputs, embedded);
}

std::map<std::string, torch::Tensor> signature_outputs(const serving::Signature& signature,
                                                       const models::NamedOutputs& outputs,
                                                       const torch::Tensor& embedded) {
  std::map<std::string, torch::Tensor> results;
  for (const auto& [name, out] : signature.outputs) {
    if (out.op == OutputOp::kLayer) {
      results[name] = embedded;
      continue;
    }
    const torch::Tensor* value = outputs.find(out.from);
    KILN_CHECK(value != nullptr, "output {} comes from the model's output \"{}\", which it lacks",
               name, out.from);
    switch (out.op) {
      case OutputOp::kSoftmax:
        results[name] = value->softmax(1);
        break;
      case OutputOp::kSigmoid:
        results[name] = value->sigmoid();
        break;
      case OutputOp::kArgmax:
      case OutputOp::kArgmaxLabel:
        results[name] = value->argmax(1);
        break;
      case OutputOp::kAboveHalf:
        results[name] = (*value > 0).to(torch::kInt64);  // sigmoid(x) > 0.5 exactly when x > 0
        break;
      default:
        results[name] = *value;
    }
  }
  return results;
}

}  // namespace kiln::exports
