#pragma once
// A version folder written by `kiln export` (export/export.h), loaded without its run: the model
// built from model.yaml with model.safetensors' weights, in eval mode, its eval transforms and its
// signatures. Or a TorchScript version folder: model.pt saved by PyTorch's torch.jit.save, with a
// model.yaml (`format: torchscript`) giving its inputs, signatures and optionally transforms and
// labels; its forward's tensor, dict of tensors or tuple of tensors are the outputs the
// signatures take (`from`: "" the tensor, a dict's key, a tuple's index). What `kiln serve` and
// `kiln predict` run.
// Thread-safety: run() from several threads at once (the server's batch threads): a loaded model
// is only read, and what it watches as it runs is per thread (models/observe.h).

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kiln/experiment/experiment.h"
#include "kiln/experiment/open_model.h"
#include "kiln/models/embedding_layer.h"
#include "kiln/serving/signature.h"
#include "kiln/serving/tensor.h"

namespace torch::jit {
struct Module;
}

namespace kiln::exports {

class ExportedModel {
 public:
  /// Whether `directory` holds a version (its model.yaml); this file is model.yaml's one reader.
  static bool is_version(const std::string& directory);
  /// The version folder `location` names: itself, or a model folder's newest version; "" when it
  /// names neither (a run folder, say).
  static std::string version_folder(const std::string& location);
  /// Loads `directory`; a DataError naming the file at fault when model.yaml is missing or
  /// invalid or the weights are missing, truncated or do not fit the model.
  static std::shared_ptr<ExportedModel> load(const std::string& directory, torch::Device device);
  /// The same model straight from a run folder (its checkpoint `which`) or a checkpoint
  /// directory, as `kiln export` would write it, without writing anything.
  static std::shared_ptr<ExportedModel> from_checkpoint(const std::string& source,
                                                        const std::string& which,
                                                        torch::Device device);
  /// The same from a model already opened (it shares its module); what `kiln export` writes.
  static std::shared_ptr<ExportedModel> from_opened(const experiment::OpenedModel& opened);

  const std::string& directory() const { return directory_; }
  const std::string& name() const { return name_; }
  const std::vector<experiment::ModelInput>& inputs() const { return inputs_; }
  const std::vector<std::string>& labels() const { return labels_; }
  const serving::Signatures& signatures() const { return signatures_; }
  torch::Device device() const { return device_; }
  /// The dataset spec of the data the model was evaluated on (data.test, else data.val, else
  /// data.train), how `kiln predict` reads files of that kind; null when unknown.
  const Json& reader() const { return reader_; }
  /// Its preprocessing.json (the feature columns training fitted); null for other data.
  const Json& preprocessing() const { return preprocessing_; }

  /// The kiln model it runs; null for a TorchScript version.
  const std::shared_ptr<models::Model>& module() const { return model_; }
  /// The scripted module it runs; null for a kiln version.
  const std::shared_ptr<torch::jit::Module>& scripted() const { return torchscript_; }

  /// The signature `name`, or null.
  const serving::Signature* signature(const std::string& name) const;

  /// The outputs of `signature` for a batch of inputs as the data delivers them.
  std::map<std::string, torch::Tensor> run(const serving::Signature& signature,
                                           const torch::Tensor& input);

  /// How long one batch takes, in milliseconds: `run` timed (a median of a few runs).
  using BatchTimer = std::function<double(const std::function<void()>& run)>;
  /// Rewrites the model for inference alone, where LibTorch offers it: a kiln model's batch norms
  /// folded into the convolutions before them, and its convolutions run on oneDNN with weights
  /// reordered once (models/fold_batch_norms.h, models/onednn_convolutions.h) where that is
  /// faster on this machine: both are timed on a batch of `batch` examples of zeros, and the
  /// faster kept (oneDNN's blocked layout pays on some CPUs and not on others). A TorchScript
  /// model is frozen and optimized (torch::jit::optimize_for_inference, which does the same to
  /// its graph). Returns what it did and measured, for the log. The outputs stay the same to
  /// float rounding; the model must not be exported or trained afterwards.
  std::string optimize_for_inference(int64_t batch = 32, const BatchTimer& timer = {});

  /// An output as JSON values: class ids made labels where the signature says so.
  serving::HostTensor to_host(const serving::SignatureOutput& output,
                              const torch::Tensor& value) const;

 private:
  ExportedModel() = default;
  void check_signatures(const std::string& file);
  void check_labels(const std::string& name, const serving::Signature& signature,
                    const torch::Tensor& example, const std::string& file);
  void load_torchscript(const std::string& directory, const std::string& file);
  std::map<std::string, torch::Tensor> run_torchscript(const serving::Signature& signature,
                                                       const torch::Tensor& input);
  /// The same model again, with the weights `model_` has now, and its embedding layer.
  std::pair<std::shared_ptr<models::Model>, models::EmbeddingLayer> twin() const;

  std::string directory_, name_;
  torch::Device device_ = torch::kCPU;
  std::vector<experiment::ModelInput> inputs_;
  std::vector<std::string> labels_;
  Json reader_;
  Json preprocessing_;
  serving::Signatures signatures_;
  std::shared_ptr<models::Model> model_;             // a kiln export's; or
  std::shared_ptr<torch::jit::Module> torchscript_;  // a TorchScript folder's
  experiment::Transforms transforms_;
  std::optional<models::EmbeddingLayer> embedding_;
  // What twin() builds from: the model's spec, the inputs it takes and its embedding layer.
  ComponentSpec network_{"model"};
  std::string embedding_layer_, embedding_path_;
};

}  // namespace kiln::exports
