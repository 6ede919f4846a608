#include "tests/support/binary_task.h"

namespace kiln::testing {

std::string binary_rows(int rows, bool one_class) {
  std::string csv = "a,b,label\n";
  for (int i = 0; i < rows; ++i) {
    double a = (i % 7) - 3.0, b = (i % 5) * 0.5 - 1.0;
    int label = one_class ? 0 : a + b > 0;
    csv += std::to_string(a) + "," + std::to_string(b) + "," + std::to_string(label) + "\n";
  }
  return csv;
}

std::string binary_config(const std::string& train_csv, const std::string& val_csv,
                          const std::string& more) {
  return "version: 1\nname: binary\nseed: 1\n"
         "data:\n  train: {type: csv, file: " +
         train_csv +
         ", target: label}\n"
         "  val: {type: csv, file: " +
         val_csv +
         ", target: label}\n  batch_size: 20\n"
         "model: {type: mlp, num_classes: 2, hidden: [8]}\n"
         "optimizer: {type: sgd, lr: 0.1}\n" +
         more;
}

}  // namespace kiln::testing
