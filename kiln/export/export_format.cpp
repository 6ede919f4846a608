#include "kiln/export/export_format.h"

namespace kiln::exports {

Json evaluation_data_spec(const experiment::ExperimentConfig& config) {
  for (const ComponentSpec* split : {&config.data.test, &config.data.val, &config.data.train}) {
    if (!split->spec.is_object()) continue;
    Json spec = split->spec;
    spec.erase("files");  // where the training machine kept its data: predict names its own
    spec.erase("file");
    return spec;
  }
  return nullptr;
}

}  // namespace kiln::exports
