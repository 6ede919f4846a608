#pragma once
// `kiln export` and the `export` callback: a run's trained model as a version folder that a
// server loads without the run (docs/design.md §5, docs/serving.md): BASE/NAME/VERSION/ holding
//   model.yaml         the architecture, what the model takes (inputs before the eval
//                      transforms), the eval transforms, class labels when the data had them,
//                      the signatures (export/signatures.h), where it came from, kiln's version
//   model.safetensors  the evaluation weights: the EMA's when the run kept one
//   model.onnx         with format onnx, the serving signature as ONNX (export/onnx/)
// written under a hidden name and renamed into place (serving/version_folders.h).
// Thread-safety: one writer per base path.

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/core/json.h"
#include "kiln/export/export_format.h"

namespace kiln::exports {

struct ExportRequest {
  std::string source;               // a run folder or one of its checkpoint directories
  std::string checkpoint = "best";  // of a run folder: best, last or a checkpoint's path
  std::string to;                   // the folder of exported models; "" = the run's export/
  std::string name;                 // the model's name there; "" = the config's `name`
  std::string format = "kiln";      // "onnx": model.onnx too
  bool portable = false;            // onnx: only operators that every runtime reads (docs/onnx.md)
};

struct ExportedVersion {
  std::string base;        // to/name
  int64_t version = 0;     // the folder's number under base
  std::string directory;   // base/version
  std::string checkpoint;  // what was exported
  std::string weights;     // the weights file of the checkpoint it holds (ema.safetensors, ...)
};

/// The formats a request may name: kiln (its own files), onnx (model.onnx too).
const std::vector<std::string>& export_formats();

/// Exports the request's checkpoint as the next version of its model.
ExportedVersion export_model(const ExportRequest& request);

}  // namespace kiln::exports
