#include "kiln/bench/model_summary.h"

#include <fmt/format.h>

#include "kiln/engine/runtime.h"
#include "kiln/experiment/experiment.h"
#include "kiln/experiment/open_model.h"
#include "kiln/models/summary.h"

namespace kiln::bench {

// The engine's and the experiment's types (checkpoints, callbacks; Experiment, OpenedModel) are
// this file's vocabulary.
using namespace experiment;

std::vector<int64_t> parse_shape(const std::string& text, const std::string& option) {
  std::vector<int64_t> shape;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = std::min(text.find(',', start), text.size());
    std::string part = text.substr(start, comma - start);
    size_t used = 0;
    int64_t size = 0;
    try {
      size = std::stoll(part, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != part.size() || size <= 0)
      throw UsageError(
          fmt::format("{} expects positive sizes separated by commas, such as 1,28,28; got \"{}\"",
                      option, text));
    shape.push_back(size);
    start = comma + 1;
  }
  // The summary runs an example of this shape through the model: bound it like inputs.json.
  constexpr int64_t kMaxElements = int64_t{1} << 31;
  int64_t elements = 1;
  for (int64_t size : shape)
    if (size > kMaxElements / elements || (elements *= size) > kMaxElements)
      throw UsageError(fmt::format("{} describes more than {} elements per example: {}", option,
                                   kMaxElements, text));
  return shape;
}

std::string model_summary_text(const RawConfig& raw,
                               const std::optional<std::vector<int64_t>>& input, int max_depth) {
  std::shared_ptr<models::Model> model;
  models::Shape shape;
  if (input) {
    shape = *input;
    if (!raw.tree.contains("model"))
      throw ConfigError("model", "", "missing; the config needs a model section");
    experiment::ModelSection section;  // init_from is for training; the summary leaves it out
    OptionTraits<experiment::ModelSection>::read(raw.tree.at("model"), section,
                                                 ReadContext{"model", &raw.origins});
    model = models::build_model(section.network, shape);
  } else {
    experiment::ExperimentConfig config = experiment::parse_experiment(raw);
    engine::Runtime runtime = experiment::runtime_of(config);
    runtime.apply();
    Experiment experiment(std::move(config), runtime.device);
    model = experiment.build_model("train");
    shape = experiment.dataset("train")->input_shape();
  }
  return models::format_summary(models::summarize(*model, shape), max_depth);
}

std::string run_model_summary_text(const std::string& run_or_checkpoint, int max_depth) {
  OpenedModel opened = open_model(run_or_checkpoint, "last", torch::kCPU);
  const models::Shape& shape = opened.inputs.front().shape;
  return models::format_summary(models::summarize(*opened.model, shape), max_depth);
}

}  // namespace kiln::bench
