#include "kiln/models/networks/row_features.h"

#include <set>

#include "kiln/core/error.h"

namespace kiln::models {

RowPart row_part(const Inputs& input, const std::string& name, const std::string& option) {
  const InputLayout& layout = input.layout;
  int64_t begin = 0, end = element_count(input.shape);
  if (!name.empty()) {
    const InputPart* part = layout.find(name);
    if (!part && layout.parts.empty())
      throw ConfigError(option, "",
                        "the data has no named inputs: give the training split inputs: {" + name +
                            ": [columns...], ...}, or set " + option + ": \"\" for the whole row");
    if (!part)
      throw ConfigError(option, "",
                        "the data has no input \"" + name + "\"; it has: " + layout.names());
    begin = part->offset;
    end = part->offset + part->width;
  }
  RowPart part{name, {}, {}};
  std::set<int64_t> indexed;
  for (const InputIndex& index : layout.indices)
    if (index.position >= begin && index.position < end) {
      part.indices.push_back(index);
      indexed.insert(index.position);
    }
  for (int64_t position = begin; position < end; ++position)
    if (!indexed.count(position)) part.numbers.push_back(position);
  return part;
}

RowFeaturesImpl::RowFeaturesImpl(const RowPart& part,
                                 const std::function<int64_t(const InputIndex&)>& width)
    : part_(part), width_(number_count()) {
  number_positions_ =
      register_buffer("number_positions", torch::tensor(part.numbers, torch::kLong));
  for (size_t i = 0; i < part.indices.size(); ++i) {
    int64_t dim = width(part.indices[i]);
    embeddings_.push_back(register_module("embedding" + std::to_string(i),
                                          torch::nn::Embedding(part.indices[i].cardinality, dim)));
    width_ += dim;
  }
}

torch::Tensor RowFeaturesImpl::numbers(const torch::Tensor& row) const {
  return row.flatten(1).index_select(1, number_positions_);
}

// Each index is kept as a column [batch, 1] rather than selected to [batch]: the same numbers,
// and an ONNX export then has no tensors of one dimension, which OpenCV 4.6 cannot multiply.
std::vector<torch::Tensor> RowFeaturesImpl::embedded(const torch::Tensor& row) {
  torch::Tensor flat = row.flatten(1);
  std::vector<torch::Tensor> out;
  for (size_t i = 0; i < embeddings_.size(); ++i) {
    const InputIndex& index = part_.indices[i];
    torch::Tensor ids = flat.narrow(1, index.position, 1).round().to(torch::kLong);
    torch::Tensor known = ids.ge(0).logical_and(ids.lt(index.cardinality));
    torch::Tensor looked_up =
        embeddings_[i]->forward(ids.clamp(0, index.cardinality - 1)).flatten(1);
    out.push_back(looked_up * known.to(looked_up.scalar_type()));
  }
  return out;
}

torch::Tensor RowFeaturesImpl::forward(const torch::Tensor& row) {
  std::vector<torch::Tensor> parts = embedded(row);
  parts.insert(parts.begin(), numbers(row));
  return torch::cat(parts, 1);
}

RowLinearImpl::RowLinearImpl(const RowPart& part, int64_t out) {
  features_ =
      register_module("features", RowFeatures(part, [out](const InputIndex&) { return out; }));
  if (features_->number_count() > 0)
    numbers_ = register_module(
        "numbers",
        torch::nn::Linear(torch::nn::LinearOptions(features_->number_count(), out).bias(false)));
  bias_ = register_parameter("bias", torch::zeros({out}));
}

// The bias is added to the first term rather than expanded to the batch first (the same sums:
// addition commutes exactly), so an ONNX export adds it as runtimes such as OpenCV read a bias.
torch::Tensor RowLinearImpl::forward(const torch::Tensor& row) {
  torch::Tensor sum;
  if (numbers_) sum = numbers_->forward(features_->numbers(row)) + bias_;
  for (const torch::Tensor& weights : features_->embedded(row))
    sum = sum.defined() ? sum + weights : weights + bias_;
  return sum.defined() ? sum : bias_.expand({row.size(0), bias_.size(0)});
}

RowPerceptronImpl::RowPerceptronImpl(const RowPart& part, const PerceptronLayers& layers,
                                     int64_t out, const std::string& option) {
  features_ = register_module("features", RowFeatures(part, [&](const auto& index) {
                                if (index.embedding_dim > 0) return index.embedding_dim;
                                throw ConfigError(option, "",
                                                  "column \"" + index.column +
                                                      "\" gives a category's index, which a deep "
                                                      "model embeds: give data.columns." +
                                                      index.column + " an embedding_dim");
                              }));
  LayerList list = make_layer_list(perceptron_layers(layers, out), "model");
  layers_ =
      register_module("layers", build_stack(list, {features_->width()}, BuildScope{}).modules);
}

void describe_perceptron(Schema& s, PerceptronLayers& layers) {
  s.field("hidden", layers.hidden, "Widths of the hidden layers, in order.").each_min(1);
  s.field("activation", layers.activation, "After each hidden layer.");
  s.field("dropout", layers.dropout, "Dropout after each hidden activation; 0 for none.")
      .in_range(0, 1);
  s.field("batchnorm", layers.batchnorm, "Batch normalisation before each hidden activation.");
}

}  // namespace kiln::models
