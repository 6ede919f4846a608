// tfrecord: tf.Example records from TFRecord files (globs or lists, any compression), decoded by
// a declared feature spec. `cache: records` keeps the serialized records in memory and decodes
// each batch when it is made, on the loader's worker threads (the map stage); `cache: decoded`
// decodes everything once at start, trading memory for the decoding work of every epoch.

#include "kiln/data/dataset.h"
#include "kiln/data/example_features.h"
#include "kiln/io/record_store.h"

namespace kiln::data {
namespace {

struct TfRecordOptions {
  std::vector<std::string> files;
  std::string compression = "auto";
  std::map<std::string, FeatureSpec> features;
  std::string input = "image";
  std::string target = "label";
  std::string on_corrupt = "fail";
  std::string cache = "records";
  int64_t limit = 0;
  void describe(Schema& s) {
    s.field("files", files, "TFRecord files or glob patterns (shards are read in sorted order).")
        .require();
    s.field("compression", compression, "auto (detected per file), none, gzip or zlib.")
        .one_of({"auto", "none", "gzip", "zlib"});
    s.field("features", features, "The features to read, by name, each with its spec.").require();
    s.field("input", input, "The feature the model reads.");
    s.field("target", target, "The feature the loss compares against.");
    s.field("on_corrupt", on_corrupt,
            "fail: stop at a damaged or non-conforming record; skip: drop it, count and report.")
        .one_of({"fail", "skip"});
    s.field("cache", cache,
            "records: keep serialized records, decode per batch on the loader's workers; "
            "decoded: decode every record once at start.")
        .one_of({"records", "decoded"});
    s.field("limit", limit, "Keep only the first N examples (0 = all).").min(0);
  }
};

// Serialized records, decoded into a batch by gather().
class EncodedExampleDataset : public Dataset {
 public:
  EncodedExampleDataset(io::RecordStore records, FeatureDecoder decoder, const TfRecordOptions& o)
      : records_(std::move(records)),
        decoder_(std::move(decoder)),
        input_(o.input),
        target_(o.target) {}

  int64_t size() const override { return records_.size(); }
  std::vector<int64_t> input_shape() const override { return decoder_.delivered_shape(input_); }

  Batch gather(const torch::Tensor& indices) const override {
    auto index = indices.accessor<int64_t, 1>();
    auto rows = decoder_.allocate(indices.size(0));
    for (int64_t row = 0; row < indices.size(0); ++row) {
      io::RecordLocation at = records_.location(index[row]);
      decoder_.decode(io::parse_example(records_.bytes(index[row]), at), at, row, rows);
    }
    return {rows.at(input_), rows.at(target_)};
  }

 private:
  io::RecordStore records_;
  FeatureDecoder decoder_;
  std::string input_, target_;
};

std::shared_ptr<Dataset> open_tfrecord(const TfRecordOptions& o) {
  for (const auto* key : {&o.input, &o.target})
    if (!o.features.count(*key))
      throw Error("tfrecord dataset: \"" + *key + "\" is not among the declared features");
  FeatureDecoder decoder(o.features, "features");
  io::RecordStoreOptions store{o.files, o.compression, o.on_corrupt == "skip", o.limit};
  // With on_corrupt: skip, records that do not decode are dropped now, so that every batch is
  // full and the dataset's size is known.
  io::RecordStore records =
      io::RecordStore::read(store, [&](std::string_view bytes, const io::RecordLocation& at) {
        if (o.on_corrupt != "skip") return;
        auto row = decoder.allocate(1);
        decoder.decode(io::parse_example(bytes, at), at, 0, row);
      });
  auto encoded = std::make_shared<EncodedExampleDataset>(std::move(records), decoder, o);
  if (o.cache == "records") return encoded;
  Batch all = encoded->gather(torch::arange(encoded->size(), torch::kInt64));
  return std::make_shared<TensorDataset>(all.input, all.target);
}

class TfRecordDataset : public Dataset {
 public:
  explicit TfRecordDataset(const TfRecordOptions& options) : impl_(open_tfrecord(options)) {}
  int64_t size() const override { return impl_->size(); }
  Batch gather(const torch::Tensor& indices) const override { return impl_->gather(indices); }
  std::vector<int64_t> input_shape() const override { return impl_->input_shape(); }

 private:
  std::shared_ptr<Dataset> impl_;
};

}  // namespace

KILN_REGISTER(dataset_registry, "tfrecord", TfRecordDataset, TfRecordOptions,
              "tf.Example records from TFRecord files, decoded by a feature spec.");

}  // namespace kiln::data
