#include "kiln/data/transform.h"

namespace kiln::data {

TransformRegistry& transform_registry() {
  static TransformRegistry registry("transform",
                                    "Batch transforms: augmentation and preprocessing.");
  return registry;
}

}  // namespace kiln::data
