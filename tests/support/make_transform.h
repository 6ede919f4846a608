#pragma once
// Builds a registered transform from a YAML flow mapping such as "{type: random_flip, p: 1}", the
// way a config's data.transforms list does.

#include <memory>
#include <string>

#include "kiln/core/config.h"
#include "kiln/data/transform.h"

namespace kiln::data {

inline std::unique_ptr<Transform> make_transform(const std::string& yaml) {
  ComponentSpec spec{"transform"};
  OptionTraits<ComponentSpec>::read(parse_config_text(yaml, "test", false), spec,
                                    ReadContext{"transform", nullptr});
  return transform_registry().create(spec);
}

}  // namespace kiln::data
