#include "tests/support/binary_task.h"

#include <stdexcept>

#include "tests/support/run_command.h"
#include "tests/support/run_files.h"

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

std::string train_and_export_binary(const std::string& kiln, const TempDir& dir) {
  std::string data = dir.write("rows.csv", binary_rows(200));
  std::string config =
      dir.write("binary.yaml",
                binary_config(data, data, "train: {max: 20 steps, validate_every: 10 steps}\n"));
  CommandResult trained =
      run_command(kiln + " train " + config + " --runs-root " + dir.file("runs"));
  if (trained.exit_code != 0) throw std::runtime_error(trained.out + trained.err);
  std::string run = run_dir_of(trained.out);
  CommandResult exported = run_command(kiln + " export " + run + " --to " + dir.file("models"));
  if (exported.exit_code != 0) throw std::runtime_error(exported.out + exported.err);
  return run;
}

}  // namespace kiln::testing
