#include "kiln/engine/tensorboard_options.h"

namespace kiln::engine {

void ProjectorOptions::describe(Schema& s) {
  s.field("enabled", enabled,
          "At each validation, the activations of a layer for validation examples, for "
          "TensorBoard's embedding projector (with their classes and a sprite of image inputs).");
  s.field("layer", layer,
          "The layer whose output is shown, by its name in `kiln model summary`; \"\": the input "
          "of the model's last layer.");
  s.field("max_examples", max_examples, "Validation examples shown.").in_range(1, 100000);
}

void TensorBoardOptions::describe(Schema& s) {
  s.field("enabled", enabled, "Write TensorBoard event files under RUN/tensorboard/.");
  s.field("scalars", scalars,
          "Every value of metrics.csv, in its split's directory (train/, val/, test/) under the "
          "name without the split.");
  s.field("text", text, "The resolved config and notes.md, as text at step 0.");
  s.field("hparams", hparams,
          "The config's values as hyper-parameters, for TensorBoard's HParams tab.");
  s.field("histograms", histograms, "Histograms of every parameter and of its gradient.");
  s.field("histograms_every", histograms_every, "How often histograms are written.");
  s.field("images", images,
          "At each validation: a grid of validation inputs with true and predicted classes (or "
          "beside their reconstructions), and the confusion matrix of a classifier.");
  s.field("max_images", max_images, "Validation inputs in the grid.").in_range(1, 256);
  s.field("pr_curves", pr_curves,
          "At each validation, precision-recall curves of a classifier (a curve per class) or "
          "of a sigmoid head (binary_cross_entropy), for TensorBoard's PR Curves tab.");
  s.field("graph", graph,
          "The model's graph of layers when a run starts, for TensorBoard's Graphs tab.");
  s.field("projector", projector, "The embedding projector's files in RUN/tensorboard/val/.");
}

}  // namespace kiln::engine

namespace kiln {

void OptionTraits<engine::TensorBoardOptions>::read(const Json& value,
                                                    engine::TensorBoardOptions& out,
                                                    const ReadContext& ctx) {
  if (value.is_boolean()) {
    out = engine::TensorBoardOptions{};
    out.enabled = value.get<bool>();
    return;
  }
  if (!value.is_object() && !value.is_null())
    ctx.fail("expected true, false or a mapping of keys to values, got " + show_value(value));
  read_options(out, value, ctx);
}

}  // namespace kiln
