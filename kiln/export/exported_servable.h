#pragma once
// A kiln export as a servable (serving/servable.h): JSON values in, the signature run without
// autograd, JSON values out (labels for the classes); raw features in for a model trained on
// feature columns (export/columns_example_encoder.h). The batcher in front of it
// (serving/batcher.h) is what makes requests large; it runs a batch on each of its threads.
// Thread-safety: predict() from any thread.

#include <memory>

#include "kiln/export/exported_model.h"
#include "kiln/serving/servable.h"

namespace kiln::exports {

class ExportedServable : public serving::Servable {
 public:
  /// A model with a preprocessing.json takes examples of raw features through its columns.
  explicit ExportedServable(std::shared_ptr<ExportedModel> model);

  const serving::Signatures& signatures() const override { return model_->signatures(); }
  const serving::ExampleEncoder* examples() const override { return examples_.get(); }
  const std::vector<std::string>& labels() const override { return model_->labels(); }
  std::map<std::string, serving::HostTensor> predict(
      const std::string& signature,
      const std::map<std::string, serving::HostTensor>& inputs) override;

 private:
  std::shared_ptr<ExportedModel> model_;
  std::unique_ptr<serving::ExampleEncoder> examples_;
};

/// A host tensor's numbers as a tensor of `dtype`; ServingError (kInvalidArgument) naming `input`
/// for a value that dtype cannot hold (300 for uint8).
torch::Tensor host_to_tensor(const serving::HostTensor& host, torch::Dtype dtype,
                             const std::string& input);

}  // namespace kiln::exports
