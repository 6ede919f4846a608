#pragma once
// The example encoder (serving/servable.h) of a model trained on feature columns: it writes the
// raw features of served examples into input rows with the columns its preprocessing.json holds,
// through the same FeatureColumns::write that wrote the training records, so a record served and
// the same record trained on give the model bit-identical rows.
// Thread-safety: encode() from any number of threads (the columns are only read).

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kiln/experiment/open_model.h"
#include "kiln/serving/servable.h"
#include "kiln/tabular/feature_columns.h"

namespace kiln::exports {

/// The columns `preprocessing` holds, checked to write rows of `input`'s shape; a DataError
/// naming `source` (the run, export or file at hand) when they do not.
std::shared_ptr<const tabular::FeatureColumns> columns_for_input(
    const Json& preprocessing, const experiment::ModelInput& input, const std::string& source);

class ColumnsExampleEncoder : public serving::ExampleEncoder {
 public:
  ColumnsExampleEncoder(std::shared_ptr<const tabular::FeatureColumns> columns, std::string input);
  /// The raw features the columns read (through derived features too), then those that only a
  /// derived label reads.
  const std::vector<std::string>& features() const override { return features_; }
  /// The raw features the columns read whose kinds preprocessing.json holds.
  const std::map<std::string, serving::TensorSpec>& raw_inputs() const override {
    return raw_inputs_;
  }
  serving::HostTensors encode(const std::vector<io::Features>& examples) const override;

 private:
  std::shared_ptr<const tabular::FeatureColumns> columns_;
  std::string input_;
  std::vector<std::string> features_;
  std::map<std::string, serving::TensorSpec> raw_inputs_;
};

}  // namespace kiln::exports
