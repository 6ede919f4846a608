#pragma once
// The examples `kiln predict` reads, by the input file's kind: JSON lines (each an instance, as
// in a row-form request), IDX images, PNG/JPEG files (one, or a folder's in sorted order) decoded
// as the training data decoded its images, TFRecord files (`.tfrecord` in the name) read with the
// feature spec of the `tfrecord` dataset the model was trained on, and CSV files (`.csv`, or
// `.csv.gz`) whose columns are picked by the names of the `csv` dataset it was trained on.
// Neither of the last two needs the label: a record without its target feature, or a table
// without the target column, is read as well. For a model trained through feature columns
// (docs/tabular.md) the records are written into input rows by the columns its run fitted
// (preprocessing.json), as training wrote them; its JSON lines may be objects of raw features
// ({"color": "red", "size": 2.5}), as `kiln serve` takes them.
// Thread-safety: functions of their arguments.

#include <string>
#include <vector>

#include "kiln/core/json.h"
#include "kiln/experiment/open_model.h"

namespace kiln::exports {

struct PredictInputs {
  torch::Tensor examples;          // [N, ...input shape], in the input's dtype
  std::vector<std::string> files;  // of image files, one per example; written with its outputs
};

/// The examples of `path` for `input`. `reader` is the dataset spec the model was trained (or
/// evaluated) on, `{type: tfrecord, ...}` or `{type: csv, ...}`, null when unknown;
/// `preprocessing` its fitted feature columns, null when it has none. Throws DataError naming the
/// file (and line, record or row) for malformed examples, UsageError for a kind of file the model
/// cannot read.
PredictInputs read_predict_inputs(const std::string& path, const experiment::ModelInput& input,
                                  const Json& reader, const Json& preprocessing = nullptr);

}  // namespace kiln::exports
