#include "kiln/experiment/tensorboard_projector.h"

#include <fmt/format.h>
#include <google/protobuf/text_format.h>

#include <cmath>
#include <filesystem>

#include "kiln/core/error.h"
#include "kiln/core/text_file.h"
#include "kiln/experiment/tensorboard_images.h"
#include "kiln/tensorboard/drawing.h"
#include "kiln/tensorboard/proto/projector_config.pb.h"

namespace kiln::experiment {

namespace {

std::string tsv_of(const torch::Tensor& rows) {
  torch::Tensor values = rows.to(torch::kCPU, torch::kFloat32).contiguous();
  const float* data = values.data_ptr<float>();
  std::string out;
  for (int64_t i = 0; i < values.size(0); ++i) {
    for (int64_t j = 0; j < values.size(1); ++j)
      out += fmt::format(j ? "\t{:.6g}" : "{:.6g}", data[i * values.size(1) + j]);
    out += "\n";
  }
  return out;
}

// The thumbnails in rows of ceil(sqrt(n)), as the projector cuts them out again.
io::Image sprite_of(const std::vector<io::Image>& images) {
  auto columns = static_cast<int64_t>(std::ceil(std::sqrt(double(images.size()))));
  int64_t height = images.front().height, width = images.front().width;
  int64_t rows = (static_cast<int64_t>(images.size()) + columns - 1) / columns;
  tensorboard::Canvas canvas(rows * height, columns * width, {0, 0, 0});
  for (size_t i = 0; i < images.size(); ++i)
    canvas.paste(static_cast<int64_t>(i) / columns * height,
                 static_cast<int64_t>(i) % columns * width, images[i]);
  return canvas.image();
}

}  // namespace

TensorBoardProjector::TensorBoardProjector(std::string directory, engine::ProjectorOptions options)
    : directory_(std::move(directory)), options_(std::move(options)) {
  type = "tensorboard_projector";
  config_path = "tensorboard.projector";
}

void TensorBoardProjector::attach(engine::Objective& validation, models::Model& model) {
  embedding_.emplace(model, options_.layer, "tensorboard.projector.layer");
  validation.observe_outputs(
      [this](const data::Batch& batch, const engine::Objective::HeadOutput& head) {
        if (watcher_ && head.first) take(batch);
      });
}

void TensorBoardProjector::on_validation_begin(engine::TrainerView&) {
  taken_ = 0;
  rows_.clear();
  labels_.clear();
  images_.clear();
  watcher_ = std::make_unique<models::CallWatcher>(
      [this](const torch::nn::Module& module, const torch::Tensor& input,
             const torch::Tensor& output) { watch(module, input, output); });
}

void TensorBoardProjector::watch(const torch::nn::Module& module, const torch::Tensor& input,
                                 const torch::Tensor& output) {
  if (taken_ >= options_.max_examples) return;
  torch::Tensor picked = embedding_->pick(module, input, output);
  if (picked.defined()) pending_ = picked.detach();
}

void TensorBoardProjector::take(const data::Batch& batch) {
  if (!pending_.defined() || taken_ >= options_.max_examples) return;
  int64_t count = std::min(batch.size(), options_.max_examples - taken_);
  rows_.push_back(pending_.narrow(0, 0, count).reshape({count, -1}).to(torch::kCPU));
  bool classes =
      batch.target.defined() && batch.target.dim() == 1 && !batch.target.is_floating_point();
  bool images = is_image_batch(batch.input);
  for (int64_t i = 0; i < count; ++i) {
    if (classes) labels_.push_back(batch.target[i].item<int64_t>());
    if (images) images_.push_back(validation_image(batch.input[i]));
  }
  taken_ += count;
  pending_ = torch::Tensor();
}

void TensorBoardProjector::on_validation_end(engine::TrainerView&, const engine::MetricValues&) {
  watcher_.reset();
  if (!rows_.empty()) write();
}

void TensorBoardProjector::write() const {
  std::filesystem::create_directories(directory_);
  torch::Tensor rows = torch::cat(rows_);
  tensorboard::proto::ProjectorConfig config;
  tensorboard::proto::EmbeddingInfo& embedding = *config.add_embeddings();
  embedding.set_tensor_name(options_.layer.empty() ? "input of the last layer" : options_.layer);
  embedding.set_tensor_path("tensors.tsv");
  embedding.add_tensor_shape(static_cast<uint32_t>(rows.size(0)));
  embedding.add_tensor_shape(static_cast<uint32_t>(rows.size(1)));
  write_file_atomic(directory_ + "/tensors.tsv", tsv_of(rows));
  if (static_cast<int64_t>(labels_.size()) == rows.size(0)) {
    std::string metadata;  // one column: no header row
    for (int64_t label : labels_) metadata += std::to_string(label) + "\n";
    write_file_atomic(directory_ + "/metadata.tsv", metadata);
    embedding.set_metadata_path("metadata.tsv");
  }
  if (static_cast<int64_t>(images_.size()) == rows.size(0)) {
    write_file_atomic(directory_ + "/sprite.png", io::encode_png(sprite_of(images_)));
    embedding.mutable_sprite()->set_image_path("sprite.png");
    embedding.mutable_sprite()->add_single_image_dim(static_cast<uint32_t>(images_[0].width));
    embedding.mutable_sprite()->add_single_image_dim(static_cast<uint32_t>(images_[0].height));
  }
  std::string text;
  google::protobuf::TextFormat::PrintToString(config, &text);
  write_file_atomic(directory_ + "/projector_config.pbtxt", text);
}

}  // namespace kiln::experiment
