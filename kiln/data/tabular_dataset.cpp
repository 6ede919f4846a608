#include "kiln/data/tabular_dataset.h"

#include "kiln/core/error.h"

namespace kiln::data {

Batch TabularDataset::decode_records(const std::vector<io::Record>&,
                                     const tabular::RowVisitor&) const {
  throw InternalError("these tabular records are held, not streamed; gather them");
}

}  // namespace kiln::data
