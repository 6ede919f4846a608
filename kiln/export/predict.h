#pragma once
// `kiln predict`, offline: a trained model (a run folder, one of its checkpoints, an export's
// version folder or its model folder, whose newest version is taken) over a file of examples,
// in batches, writing one line of outputs per example: a JSON object per line (jsonl, as
// TensorFlow Serving's row-form predictions) or CSV (one column per output value). Inputs are
// JSON lines, IDX images, PNG/JPEG files (each line then naming its `file`), TFRecord or CSV
// files (predict_inputs.h); they go through the eval transforms exactly as in validation and
// serving.
// Thread-safety: one prediction per thread.

#include <cstdint>
#include <cstdio>
#include <string>

namespace kiln::exports {

struct PredictOptions {
  std::string source;               // run folder, checkpoint, version folder or model folder
  std::string checkpoint = "best";  // of a run folder: best, last or a path
  std::string input;                // .jsonl, IDX, an image or a folder, .tfrecord, .csv
  std::string output;               // "" = standard output
  std::string format = "jsonl";     // jsonl or csv
  std::string signature = "serving_default";
  int64_t batch = 256;
  bool optimize = true;  // ExportedModel::optimize_for_inference first
};

struct PredictOutcome {
  int64_t examples = 0;
  double seconds = 0;  // reading, predicting and writing, start-up excluded
};

/// Predicts `options.input`; progress (examples done, rate) goes to `progress` when non-null.
PredictOutcome predict_file(const PredictOptions& options, std::FILE* progress);

}  // namespace kiln::exports
