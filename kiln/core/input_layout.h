#pragma once
// Where the parts of a tabular model's input sit in its one input row. Feature columns write one
// row of numbers per record; `inputs: {wide: [...], deep: [...]}` makes named parts of it (spans
// of consecutive columns), and a categorical column with `output: index` writes a category's
// number that a model looks up in an embedding. Models built for such data read their parts and
// indices from here; inputs.json and preprocessing.json carry it to eval, export and serving.
// A plain value in core/, so that models read it without depending on tabular/, which makes it.
// Thread-safety: a value; const use from any thread.

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/core/json.h"

namespace kiln {

/// A named span of the row: [offset, offset + width).
struct InputPart {
  std::string name;
  int64_t offset = 0;
  int64_t width = 0;
};

/// A category delivered as its index at `position` of the row: a whole number in
/// [0, cardinality), or -1 for a value with no bucket (it then embeds to zeros).
struct InputIndex {
  std::string column;
  int64_t position = 0;
  int64_t cardinality = 0;
  int64_t embedding_dim = 0;  // the column's `embedding_dim`; 0 when it gave none
};

struct InputLayout {
  std::vector<InputPart> parts;  // in row order; none without named inputs
  std::vector<InputIndex> indices;

  bool empty() const { return parts.empty() && indices.empty(); }
  /// The part called `name`, or null.
  const InputPart* find(const std::string& name) const;
  /// "wide, deep": the parts' names, for messages.
  std::string names() const;
  /// The indices that fall inside `part`, in row order.
  std::vector<InputIndex> indices_in(const InputPart& part) const;
};

/// {"parts": [{"name", "offset", "width"}], "indices": [{"column", "position", "cardinality",
/// "embedding_dim"}]}.
Json layout_json(const InputLayout& layout);
/// Reads layout_json's output; anything else is a ConfigError naming `file`. The parts must
/// follow one another, and the indices lie in them; `row_width` checks both against the row.
InputLayout parse_layout(const Json& json, int64_t row_width, const std::string& file);

}  // namespace kiln
