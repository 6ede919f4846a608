#pragma once
// TensorBoard's embedding projector, written at each validation into RUN/tensorboard/val/ (the
// last validation's stays): the activations of a layer for the first
// `tensorboard.projector.max_examples` validation examples (tensors.tsv), their classes
// (metadata.tsv, for a classifier), a sprite of the inputs when they are images (sprite.png), and
// projector_config.pbtxt naming them (docs/formats.md §3.4). The layer is the one
// `tensorboard.projector.layer` names (its output), or by default the input of the last layer the
// model calls for its main output (a multi_head model's first head). Built in, not a registered
// callback.
// Thread-safety: the training thread.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kiln/engine/callback.h"
#include "kiln/engine/objective.h"
#include "kiln/engine/tensorboard_options.h"
#include "kiln/io/image_codec.h"
#include "kiln/models/embedding_layer.h"
#include "kiln/models/observe.h"

namespace kiln::experiment {

class TensorBoardProjector : public engine::Callback {
 public:
  /// Writes into `directory` (RUN/tensorboard/val).
  TensorBoardProjector(std::string directory, engine::ProjectorOptions options);
  /// Watches `validation` over `model`; a layer name the model lacks is a ConfigError listing its
  /// layers.
  void attach(engine::Objective& validation, models::Model& model);

  void on_validation_begin(engine::TrainerView&) override;
  void on_validation_end(engine::TrainerView& view, const engine::MetricValues& values) override;

 private:
  void watch(const torch::nn::Module& module, const torch::Tensor& input,
             const torch::Tensor& output);
  void take(const data::Batch& batch);
  void write() const;

  std::string directory_;
  engine::ProjectorOptions options_;
  std::optional<models::EmbeddingLayer> embedding_;  // set by attach()
  std::unique_ptr<models::CallWatcher> watcher_;
  torch::Tensor pending_;  // the watched activation of the batch being computed
  int64_t taken_ = 0;
  std::vector<torch::Tensor> rows_;
  std::vector<int64_t> labels_;
  std::vector<io::Image> images_;
};

}  // namespace kiln::experiment
