// A loop's frozen model (a distillation's teacher) from an export: a version folder, or a model
// folder's newest version, of kiln's format or TorchScript (a model written in PyTorch, or one
// a PyTorch user wrote the folder of). Registered with experiment/training_loop.h, which cannot
// include export/. The export's own transforms are not applied: the teacher sees the student's
// batches as they are, as a teacher run does.

#include "kiln/experiment/training_loop.h"
#include "kiln/export/exported_model.h"
#include "kiln/models/torchscript_model.h"

namespace kiln::exports {
namespace {

std::optional<engine::FrozenModel> open_exported_teacher(const std::string& location,
                                                         torch::Device device) {
  std::string version = ExportedModel::version_folder(location);
  if (version.empty()) return std::nullopt;
  std::shared_ptr<ExportedModel> loaded = ExportedModel::load(version, device);
  if (loaded->inputs().size() != 1)
    throw Error(version + " takes several inputs; a teacher takes the training data's one");
  const std::vector<int64_t>& shape = loaded->inputs().front().shape;
  std::shared_ptr<models::Model> model = loaded->module();
  if (!model)
    model = std::make_shared<models::TorchScriptModel>(*loaded->scripted(), version + "/model.pt",
                                                       "output", shape);
  return engine::FrozenModel{model, shape};
}

[[maybe_unused]] const bool registered_export_teacher =
    experiment::register_frozen_opener(open_exported_teacher);

}  // namespace
}  // namespace kiln::exports
