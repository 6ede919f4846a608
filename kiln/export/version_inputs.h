#pragma once
// What a version folder says of its input, checked against itself: model.yaml's `reader` (the
// dataset spec kiln predict reads files with) and preprocessing.json (the fitted feature columns
// that write the model's row). Each may have been edited, its MANIFEST line rewritten to match.

#include <string>

#include "kiln/core/json.h"
#include "kiln/experiment/open_model.h"

namespace kiln::exports {

/// model.yaml's `reader` read as kiln predict will read it; a DataError naming `file` otherwise.
void check_reader(const Json& reader, const std::string& file);

/// preprocessing.json (`preprocessing`, null when the folder has none) writes the row `input`
/// declares: as wide, laid out as its `layout` says, its columns those `reader` lists in their
/// order, and there whenever the layout or the reader's columns are. A DataError naming the file
/// of `directory` otherwise.
void check_preprocessing(const experiment::ModelInput& input, const Json& preprocessing,
                         const Json& reader, const std::string& directory);

}  // namespace kiln::exports
