#pragma once
// The `tensorboard:` section of a config: what a run writes under RUN/tensorboard/
// (docs/observe.md). `tensorboard: false` turns all of it off, `tensorboard: true` keeps the
// defaults, and a mapping switches each part. Thread-safety: values.

#include <string>

#include "kiln/core/period.h"
#include "kiln/core/schema.h"

namespace kiln::engine {

/// The embedding projector: a layer's activations for validation examples.
struct ProjectorOptions {
  bool enabled = true;
  std::string layer;  // "": the input of the model's last layer
  int64_t max_examples = 1000;
  void describe(Schema& s);
};

struct TensorBoardOptions {
  bool enabled = true;
  bool scalars = true;
  bool text = true;
  bool hparams = true;
  bool histograms = true;
  Period histograms_every{1, Period::Unit::kEpochs};
  bool images = true;
  int64_t max_images = 16;
  bool pr_curves = true;
  bool graph = true;
  ProjectorOptions projector;
  void describe(Schema& s);
};

}  // namespace kiln::engine

namespace kiln {
template <>
struct OptionTraits<engine::TensorBoardOptions> {
  static void read(const Json& value, engine::TensorBoardOptions& out, const ReadContext& ctx);
  static Json write(const engine::TensorBoardOptions& value) { return write_options(value); }
  static std::string type_name(const engine::TensorBoardOptions&) { return "boolean | mapping"; }
  static std::vector<FieldDoc> children(const engine::TensorBoardOptions&) {
    return describe_options<engine::TensorBoardOptions>();
  }
};
}  // namespace kiln
