#pragma once
// What the tabular models (linear, dnn, wide_deep) read of their input row: one named part of
// it (`inputs: {wide: [...], deep: [...]}`) or the whole row, as its plain numbers and its
// category indices, each index looked up in an embedding of its own.
// Thread-safety: as torch::nn::Module.

#include <functional>
#include <string>
#include <vector>

#include "kiln/models/model.h"
#include "kiln/models/networks/layer_network.h"

namespace kiln::models {

/// The positions of one part of the row (absolute, in row order).
struct RowPart {
  std::string name;  // "" for the whole row
  std::vector<int64_t> numbers;
  std::vector<InputIndex> indices;
};

/// The part called `name` of `input`'s row, or the whole row for "". A name the data lacks is a
/// ConfigError at `option` naming the parts it has.
RowPart row_part(const Inputs& input, const std::string& name, const std::string& option);

/// One part's plain numbers and its embedded indices.
class RowFeaturesImpl : public torch::nn::Module {
 public:
  /// Each index gets an embedding of `width(index)` numbers.
  RowFeaturesImpl(const RowPart& part, const std::function<int64_t(const InputIndex&)>& width);
  /// [N, numbers] of the row [N, ...].
  torch::Tensor numbers(const torch::Tensor& row) const;
  /// [N, width] per index, in order: zeros for an index outside [0, cardinality) (-1: a value
  /// with no bucket).
  std::vector<torch::Tensor> embedded(const torch::Tensor& row);
  /// The numbers, then every embedding: [N, number_count() + embedded widths].
  torch::Tensor forward(const torch::Tensor& row);
  int64_t number_count() const { return static_cast<int64_t>(part_.numbers.size()); }
  int64_t width() const { return width_; }

 private:
  RowPart part_;
  torch::Tensor number_positions_;
  std::vector<torch::nn::Embedding> embeddings_;
  int64_t width_ = 0;
};
TORCH_MODULE(RowFeatures);

/// A linear model over a part, as tf.estimator's LinearClassifier weights it: one weight per
/// plain number and per category (an embedding of `out` numbers per index), summed with a bias.
class RowLinearImpl : public torch::nn::Module {
 public:
  RowLinearImpl(const RowPart& part, int64_t out);
  torch::Tensor forward(const torch::Tensor& row);

 private:
  RowFeatures features_{nullptr};
  torch::nn::Linear numbers_{nullptr};  // null when the part has no plain numbers
  torch::Tensor bias_;
};
TORCH_MODULE(RowLinear);

/// A feed-forward network over a part (tf.estimator's DNNClassifier, wide_deep's deep part): its
/// numbers and each index's embedding of the column's embedding_dim, concatenated, through the
/// hidden layers to `out`. An index without embedding_dim is a ConfigError at `option`.
class RowPerceptronImpl : public torch::nn::Module {
 public:
  RowPerceptronImpl(const RowPart& part, const PerceptronLayers& layers, int64_t out,
                    const std::string& option);
  torch::Tensor forward(const torch::Tensor& row) { return layers_->forward(features_(row)); }

 private:
  RowFeatures features_{nullptr};
  LayerStack layers_{nullptr};
};
TORCH_MODULE(RowPerceptron);

/// A feed-forward part's options, as dnn and wide_deep take them: hidden, activation, dropout,
/// batchnorm.
void describe_perceptron(Schema& s, PerceptronLayers& layers);

}  // namespace kiln::models
