#include "kiln/experiment/preprocessing_file.h"

#include <filesystem>

#include "kiln/core/error.h"
#include "kiln/core/json_text.h"
#include "kiln/run/run_directory.h"
#include "kiln/tabular/feature_columns.h"

namespace kiln::experiment {

namespace fs = std::filesystem;

std::string preprocessing_file(const std::string& folder) {
  return folder + "/" + run::kPreprocessingFile;
}

Json read_preprocessing(const std::string& folder) {
  std::string file = preprocessing_file(folder);
  if (!fs::exists(file)) return nullptr;
  Json json = read_json_file(file);
  try {
    tabular::FeatureColumns::from_preprocessing(json);
  } catch (const ConfigError& e) {
    throw DataError(file, -1, -1, e.problem());
  }
  return json;
}

}  // namespace kiln::experiment
