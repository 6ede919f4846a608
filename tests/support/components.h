#pragma once
// Components built from config text the way a user's config builds them: "{type: random_flip,
// p: 1}" read as a component of its kind (checked, defaults resolved), then created through the
// registry. One place for what every torch test needs.

#include <memory>
#include <string>

#include "kiln/core/config.h"
#include "kiln/data/dataset.h"
#include "kiln/data/transform.h"

namespace kiln {

/// A component of `kind` read from `yaml`; errors name `path` (default: the kind).
inline ComponentSpec read_spec(const std::string& kind, const std::string& yaml,
                               const std::string& path = "") {
  ComponentSpec spec{kind};
  OptionTraits<ComponentSpec>::read(parse_config_text(yaml, "test", false), spec,
                                    ReadContext{path.empty() ? kind : path, nullptr});
  return spec;
}

inline std::unique_ptr<data::Transform> make_transform(const std::string& yaml) {
  return data::transform_registry().create(read_spec("transform", yaml));
}

/// A dataset as data.train would build it.
inline std::shared_ptr<data::Dataset> make_dataset(const std::string& yaml) {
  return data::dataset_registry().create(read_spec("dataset", yaml, "data.train"));
}

}  // namespace kiln
