// Feature columns over tf.Example records from anywhere (TFX's files, a served :classify
// request): writing a record's input row through fitted columns of every kind, and fitting
// columns on the record, may only ever throw kiln::Error, and must write every number of the row.

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "kiln/core/error.h"
#include "kiln/io/example.h"
#include "kiln/tabular/feature_columns.h"

namespace {

using kiln::Json;

// Columns of every kind, fitted as a run's preprocessing.json says.
const kiln::tabular::FeatureColumns& fitted_columns() {
  static auto columns = kiln::tabular::FeatureColumns::from_preprocessing(Json::parse(R"({
    "format": "kiln.preprocessing", "version": 1, "width": 22, "columns": [
      {"name": "z", "spec": {"type": "numeric", "feature": "body_mass_g", "normalize": "zscore",
                             "missing": "mean", "log": true, "clip": [0, 1e6]},
       "fitted": {"shift": [1.5], "scale": [0.5], "fill": [3.0]}, "width": 1},
      {"name": "b", "spec": {"type": "bucketize", "feature": "culmen_depth_mm",
                             "boundaries": [0.1, 0.5, 0.9], "missing": 0.0}, "width": 4},
      {"name": "c", "spec": {"type": "categorical", "feature": "species", "output": "multi_hot",
                             "num_oov_buckets": 2}, "fitted": {"vocabulary": ["0", "1", "b"]},
       "width": 5},
      {"name": "h", "spec": {"type": "categorical", "feature": "label", "hash_buckets": 7},
       "width": 7},
      {"name": "x", "spec": {"type": "crossed", "features": ["species", "label"],
                             "hash_buckets": 5}, "width": 5}]})"));
  return *columns;
}

// One record, as the statistics pass reads a training split.
class OneRecord : public kiln::tabular::TabularSource {
 public:
  explicit OneRecord(const kiln::io::Features& features) : features_(features) {}
  int64_t rows() const override { return 1; }
  void visit(int64_t begin, int64_t end, const kiln::tabular::RowVisitor& visit) const override {
    if (begin < end) visit(0, features_, {"fuzz.tfrecord", 0, 0});
  }

 private:
  const kiln::io::Features& features_;
};

// Columns of every kind, fitted on the record alone (`skip`: as on_corrupt: skip fits them, a
// refused record left out), with gaps filled by a median, a bucket or an index of their own.
void fit_on(const kiln::io::Features& features, bool skip) {
  kiln::ComponentMap declared("column");
  kiln::OptionTraits<kiln::ComponentMap>::read(Json::parse(R"({
      "n": {"type": "numeric", "feature": "flipper_length_mm", "normalize": "minmax"},
      "q": {"type": "bucketize", "feature": "culmen_length_mm", "quantiles": 3},
      "v": {"type": "categorical", "feature": "species"},
      "m": {"type": "numeric", "feature": "body_mass_g", "missing": "median"},
      "o": {"type": "bucketize", "feature": "culmen_depth_mm", "boundaries": [0.5],
            "missing": "bucket", "output": "index"},
      "k": {"type": "categorical", "feature": "island", "missing": "bucket", "output": "index"},
      "kx": {"type": "crossed", "features": ["k", "o"], "hash_buckets": 9, "output": "index"}})"),
                                               declared, {"data.columns", nullptr});
  kiln::tabular::FeatureColumns columns(declared, {"n", "q", "v", "m", "o", "k", "kx"}, "input",
                                        "data.columns");
  OneRecord record(features);
  columns.fit(record, 1, skip);
  if (skip && !columns.refused(record, 1).rows.empty()) return;
  std::vector<float> row(size_t(columns.width()));
  columns.write(features, {"fuzz.tfrecord", 0, 0}, row.data());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kiln::io::Example example;
  try {
    example = kiln::io::parse_example(std::string(reinterpret_cast<const char*>(data), size));
  } catch (const kiln::Error&) {
    return 0;
  }
  const auto& columns = fitted_columns();
  // A sentinel no column writes: every slot of the row must be written.
  std::vector<float> row(size_t(columns.width()), -12345.0f);
  try {
    columns.write(example.features, {"fuzz.tfrecord", 0, 0}, row.data());
    for (float value : row)
      if (value == -12345.0f) {
        std::fprintf(stderr, "a column left part of the input row unwritten\n");
        std::abort();
      }
  } catch (const kiln::Error&) {
  }
  for (bool skip : {false, true}) try {
      fit_on(example.features, skip);
    } catch (const kiln::Error&) {
    }
  return 0;
}
