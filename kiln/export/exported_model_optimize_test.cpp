// optimize_for_inference keeps oneDNN's convolutions only where they are faster on the machine:
// both paths are timed at load (here by a fake timer, one way and then the other) and the model
// kept computes what the checkpoint's model does.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/core/config.h"
#include "kiln/engine/checkpoint.h"
#include "kiln/export/export.h"
#include "kiln/export/exported_model.h"
#include "tests/support/temp_dir.h"

namespace kiln::exports {
using namespace experiment;
namespace exported_model_optimize_test {

using ::testing::HasSubstr;

constexpr const char* kConfig = R"(
name: convs
data:
  train: {type: idx, images: nowhere-images.gz, labels: nowhere-labels.gz}
model:
  type: sequential
  layers: [{type: conv2d, out: 4, kernel: 3, padding: same}, batchnorm, relu,
           {type: maxpool, kernel: 2}, flatten, {type: linear, out: 3}]
)";

// A version folder of kConfig's network for [1, 8, 8] images, its batch norm's statistics not
// the identity's (so that folding it changes the weights).
std::string exported_convs(const kiln::testing::TempDir& dir) {
  experiment::ExperimentConfig config =
      experiment::parse_experiment(load_config({dir.write("c.yaml", kConfig)}, {}));
  torch::manual_seed(3);
  std::shared_ptr<models::Model> model = models::build_model(config.model.network, {1, 8, 8});
  for (auto& buffer : model->named_buffers())
    if (buffer.key().find("running_var") != std::string::npos) buffer.value().fill_(2.0);
  std::filesystem::create_directories(dir.file("run/checkpoints"));
  engine::CheckpointContents contents;
  contents.step = 1;
  contents.model = model.get();
  contents.config_yaml = to_yaml(experiment::resolved_config(config));
  contents.inputs =
      inputs_json({ModelInput{"input", {1, 8, 8}, torch::kFloat32, std::nullopt}}, {"a", "b", "c"});
  engine::save_checkpoint(dir.file("run/checkpoints"), contents);
  return export_model({dir.file("run"), "last", "", ""}).directory;
}

torch::Tensor logits(ExportedModel& model, const torch::Tensor& input) {
  return model.run(*model.signature("serving_default"), input).at("logits");
}

TEST(OptimizeForInference, TheFasterConvolutionsMeasuredAtLoadAreKept) {
  kiln::testing::TempDir dir;
  std::string version = exported_convs(dir);
  torch::manual_seed(5);
  torch::Tensor input = torch::rand({6, 1, 8, 8});
  std::shared_ptr<ExportedModel> unoptimized = ExportedModel::load(version, torch::kCPU);
  torch::Tensor expected = logits(*unoptimized, input);
  torch::Tensor embedded =
      unoptimized->run(*unoptimized->signature("embed"), input).at("embedding");
  for (bool onednn_faster : {true, false}) {
    std::shared_ptr<ExportedModel> model = ExportedModel::load(version, torch::kCPU);
    int timed = 0;  // the plain model is timed first, then the one on oneDNN
    auto timer = [&](const std::function<void()>& run) {
      run();
      bool plain = timed++ == 0;
      return plain == onednn_faster ? 3.0 : 2.0;
    };
    std::string done = model->optimize_for_inference(16, timer);
    EXPECT_EQ(timed, 2);
    EXPECT_THAT(done, HasSubstr("1 batch norm folded into convolutions"));
    EXPECT_THAT(
        done, HasSubstr(onednn_faster ? "1 convolution on oneDNN (2.00 ms a batch of 16 on oneDNN, "
                                        "3.00 ms on LibTorch's own convolutions, measured at load)"
                                      : "convolutions kept on LibTorch's own (3.00 ms a batch of "
                                        "16 on oneDNN, 2.00 ms on LibTorch's own"))
        << done;
    EXPECT_TRUE(torch::allclose(logits(*model, input), expected, 1e-5, 1e-5)) << done;
    // The embedding is taken from the model kept, whichever it is.
    EXPECT_TRUE(torch::allclose(model->run(*model->signature("embed"), input).at("embedding"),
                                embedded, 1e-5, 1e-5))
        << done;
  }
}

// Without a timer it measures for real: whichever it keeps, it says both times and computes
// the same.
TEST(OptimizeForInference, MeasuresBothPathsOnThisMachine) {
  kiln::testing::TempDir dir;
  std::string version = exported_convs(dir);
  torch::Tensor input = torch::rand({2, 1, 8, 8});
  std::shared_ptr<ExportedModel> model = ExportedModel::load(version, torch::kCPU);
  torch::Tensor expected = logits(*model, input);
  std::string done = model->optimize_for_inference(4);
  EXPECT_THAT(done, ::testing::ContainsRegex("[0-9.]+ ms a batch of 4 on oneDNN, [0-9.]+ ms on "
                                             "LibTorch's own convolutions, measured at load"));
  EXPECT_TRUE(torch::allclose(logits(*model, input), expected, 1e-5, 1e-5));
}

}  // namespace exported_model_optimize_test
}  // namespace kiln::exports
