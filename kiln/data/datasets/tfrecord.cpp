// tfrecord: tf.Example records from TFRecord files (globs or lists, any compression), decoded by
// a declared feature spec. `cache: records` keeps the serialized records in memory and decodes
// each batch when it is made, on the loader's worker threads (the map stage); `cache: decoded`
// decodes everything once at start, trading memory for the decoding work of every epoch;
// `cache: none` reads the files again every epoch (interleaved, through a shuffle buffer), for
// data larger than memory.

#include <set>

#include "kiln/data/dataset.h"
#include "kiln/data/example_features.h"
#include "kiln/data/streamed_tabular_records.h"
#include "kiln/data/tabular_dataset.h"
#include "kiln/data/tabular_records.h"
#include "kiln/io/record_store.h"

namespace kiln::data {
namespace {

// How the files are compressed; what a record that does not decode does to the run; how the
// records are kept.
enum class RecordCompression { kAuto, kNone, kGzip, kZlib };
EnumNameList<RecordCompression> enum_names(RecordCompression) {
  return {{RecordCompression::kAuto, "auto"},
          {RecordCompression::kNone, "none"},
          {RecordCompression::kGzip, "gzip"},
          {RecordCompression::kZlib, "zlib"}};
}

enum class RecordCache { kRecords, kDecoded, kNone };
EnumNameList<RecordCache> enum_names(RecordCache) {
  return {{RecordCache::kRecords, "records"},
          {RecordCache::kDecoded, "decoded"},
          {RecordCache::kNone, "none"}};
}

struct TfRecordOptions {
  std::vector<std::string> files;
  RecordCompression compression = RecordCompression::kAuto;
  RecordKind kind = RecordKind::kExample;
  std::map<std::string, FeatureSpec> features;
  std::map<std::string, FeatureSpec> sequence_features;
  int64_t steps = 0;
  double pad = 0;
  InputNames input{{"image"}, false};
  tabular::InputGroups inputs;
  tabular::DerivedFeatures derived;
  std::string target = "label";
  std::vector<std::string> targets;
  OnCorrupt on_corrupt = OnCorrupt::kFail;
  RecordCache cache = RecordCache::kRecords;
  int64_t shuffle_buffer = 10000;
  int64_t cycle_length = 4;
  int64_t limit = 0;
  void describe(Schema& s) {
    s.field("files", files, "TFRecord files or glob patterns (shards are read in sorted order).")
        .require();
    s.field("compression", compression, "auto (detected per file), none, gzip or zlib.");
    s.field("kind", kind, "What the records hold: example or sequence_example.");
    s.field("features", features,
            "The features to read, by name, each with its spec (a sequence_example's context).");
    s.field("sequence_features", sequence_features,
            "A sequence_example's feature lists to read, each with the spec of one step.");
    s.field("steps", steps,
            "Steps each feature list is delivered with: longer lists are cut, shorter ones "
            "padded.")
        .min(0);
    s.field("pad", pad, "The value of padding steps.");
    s.field("input", input,
            "The feature the model reads, or a list of feature columns (data.columns) and "
            "numeric features, concatenated into one vector (docs/tabular.md).");
    s.field("inputs", inputs,
            "Instead of input: named parts of the input vector, each a list of columns "
            "({wide: [...], deep: [...]}), for models that read several inputs (wide_deep).");
    s.field("derived", derived,
            "Features computed from the others before columns and targets read them; "
            "data.derived sets it for every split (docs/tabular.md).");
    s.field("target", target, "The feature the loss compares against.");
    s.field("targets", targets,
            "More features delivered as targets by name, for the heads of a multi_head model "
            "(`target: NAME` in a head).")
        .check(
            [](const std::vector<std::string>& names) {
              std::set<std::string> seen(names.begin(), names.end());
              return seen.size() == names.size() && !seen.count("input") && !seen.count("target");
            },
            "with no name twice and neither \"input\" nor \"target\" (what a head's target "
            "already means)");
    s.field("on_corrupt", on_corrupt,
            "fail: stop at a damaged or non-conforming record; skip: drop it, count and report.");
    s.field("cache", cache,
            "records: keep serialized records, decode per batch on the loader's workers; "
            "decoded: decode every record once at start; none: stream the files every epoch.");
    s.field("shuffle_buffer", shuffle_buffer,
            "With cache: none, records are shuffled through a buffer of this many (1: files are "
            "shuffled, records not).")
        .min(1);
    s.field("cycle_length", cycle_length, "With cache: none, how many files are read in turn.")
        .min(1);
    s.field("limit", limit, "Keep only the first N examples (0 = all).").min(0);
  }
};

// Decodes `count` records, record i's bytes and location given by `record(i)`, into one batch.
template <class RecordAt>
Batch decode_batch(const RecordDecoder& decoder, int64_t count, RecordAt record,
                   const TfRecordOptions& o) {
  auto rows = decoder.allocate(count);
  for (int64_t row = 0; row < count; ++row) {
    auto [bytes, at] = record(row);
    decoder.decode(bytes, at, row, rows);
  }
  Batch batch{rows.at(o.input.names[0]), rows.at(o.target), {}, {}};
  for (const std::string& name : o.targets) batch.targets[name] = rows.at(name);
  return batch;
}

// Serialized records, decoded into a batch by gather().
class EncodedExampleDataset : public Dataset {
 public:
  EncodedExampleDataset(io::RecordStore records, RecordDecoder decoder, const TfRecordOptions& o)
      : records_(std::move(records)), decoder_(std::move(decoder)), options_(o) {}

  int64_t size() const override { return records_.size(); }
  std::vector<int64_t> input_shape() const override {
    return decoder_.delivered_shape(options_.input.names[0]);
  }
  torch::Dtype input_dtype() const override {
    return decoder_.allocate(0).at(options_.input.names[0]).scalar_type();
  }

  Batch gather(const torch::Tensor& indices) const override {
    auto index = indices.accessor<int64_t, 1>();
    auto record = [&](int64_t row) {
      return std::make_pair(records_.bytes(index[row]), records_.location(index[row]));
    };
    return decode_batch(decoder_, indices.size(0), record, options_);
  }
  ExampleOrigin locate(int64_t index) const override {
    return {records_.location(index), options_.target};
  }

 private:
  io::RecordStore records_;
  RecordDecoder decoder_;
  TfRecordOptions options_;
};

// Records read from disk every epoch and decoded batch by batch.
class StreamedExampleDataset : public StreamingDataset {
 public:
  StreamedExampleDataset(io::RecordCatalog catalog, RecordDecoder decoder, const TfRecordOptions& o)
      : catalog_(std::make_shared<io::RecordCatalog>(std::move(catalog))),
        decoder_(std::move(decoder)),
        options_(o) {}

  int64_t size() const override { return catalog_->size(); }
  std::vector<int64_t> input_shape() const override {
    return decoder_.delivered_shape(options_.input.names[0]);
  }
  torch::Dtype input_dtype() const override {
    return decoder_.allocate(0).at(options_.input.names[0]).scalar_type();
  }
  int64_t examples_per_epoch(int64_t world) const override {
    return catalog_->records_per_rank(world);
  }
  int64_t examples_of_rank(int64_t rank, int64_t world) const override {
    return catalog_->records_for(rank, world);
  }
  std::unique_ptr<io::RecordStream> open(io::EpochPlan plan) const override {
    plan.buffer = options_.shuffle_buffer;
    plan.cycle_length = options_.cycle_length;
    return std::make_unique<io::RecordStream>(catalog_, plan);
  }
  Batch decode(const std::vector<io::Record>& records) const override {
    auto record = [&](int64_t row) {
      const io::Record& r = records[static_cast<size_t>(row)];
      return std::make_pair(std::string_view(r.bytes), r.where);
    };
    Batch batch = decode_batch(decoder_, static_cast<int64_t>(records.size()), record, options_);
    std::vector<io::RecordLocation> where;
    for (const io::Record& r : records) where.push_back(r.where);
    batch.origin = [where = std::move(where), target = options_.target](int64_t row) {
      return ExampleOrigin{where.at(static_cast<size_t>(row)), target};
    };
    return batch;
  }

 private:
  std::shared_ptr<const io::RecordCatalog> catalog_;
  RecordDecoder decoder_;
  TfRecordOptions options_;
};

struct OpenedRecords {
  std::shared_ptr<Dataset> dataset;
  SkippedRecords skipped;
  std::optional<io::ImageInput> image;
};

OpenedRecords open_tabular(const TfRecordOptions& o, io::RecordStoreOptions store);

OpenedRecords open_tfrecord(const TfRecordOptions& o) {
  bool skip = o.on_corrupt == OnCorrupt::kSkip;
  // kiln/io keeps its own representation of compression and takes it by name (auto included).
  io::RecordStoreOptions store{o.files, enum_name(o.compression), skip, o.limit};
  // Checks the features' specs before anything is read, whatever reads them.
  RecordDecoder decoder({o.kind, o.features, o.sequence_features, o.steps, o.pad}, "");
  if (o.input.listed || !o.inputs.empty()) return open_tabular(o, store);
  std::vector<std::pair<std::string, std::string>> used{{"input", o.input.names[0]},
                                                        {"target", o.target}};
  for (size_t i = 0; i < o.targets.size(); ++i)
    used.emplace_back(index_path("targets", i), o.targets[i]);
  // Paths relative to the dataset: the registry puts them under its own (data.train.input).
  for (const auto& [path, key] : used)
    if (!decoder.declares(key))
      throw ConfigError(path, "",
                        "tfrecord dataset: \"" + key + "\" is not among the declared features");
  // With on_corrupt: skip, records that do not decode are dropped now, so that every batch is
  // full and the dataset's size is known.
  auto check = [&](std::string_view bytes, const io::RecordLocation& at) {
    if (!skip) return;
    auto row = decoder.allocate(1);
    decoder.decode(bytes, at, 0, row);
  };
  if (o.cache == RecordCache::kNone) {
    io::RecordCatalog catalog = io::RecordCatalog::scan(store, check);
    SkippedRecords skipped{catalog.skipped(), catalog.first_problem(), catalog.skipped_bytes()};
    return {std::make_shared<StreamedExampleDataset>(std::move(catalog), decoder, o), skipped,
            decoder.image_input(o.input.names[0])};
  }
  io::RecordStore records = io::RecordStore::read(store, check);
  SkippedRecords skipped{records.skipped(), records.first_problem(), records.skipped_bytes()};
  auto encoded = std::make_shared<EncodedExampleDataset>(std::move(records), decoder, o);
  if (o.cache == RecordCache::kRecords)
    return {encoded, skipped, decoder.image_input(o.input.names[0])};
  Batch all = encoded->gather(torch::arange(encoded->size(), torch::kInt64));
  return {std::make_shared<TensorDataset>(all.input, all.target, all.targets), skipped,
          decoder.image_input(o.input.names[0])};
}

OpenedRecords open_tabular(const TfRecordOptions& o, io::RecordStoreOptions store) {
  const char* key = o.inputs.empty() ? "input" : "inputs";
  tabular::InputGroups groups =
      tabular::input_groups(o.input.listed ? o.input.names : std::vector<std::string>{}, o.inputs);
  if (o.kind != RecordKind::kExample)
    throw ConfigError(key, "", "feature columns read tf.Example records (kind: example)");
  std::map<std::string, FeatureSpec> target_specs;
  std::vector<std::pair<std::string, std::string>> used{{"target", o.target}};
  for (size_t i = 0; i < o.targets.size(); ++i)
    used.emplace_back(index_path("targets", i), o.targets[i]);
  for (const auto& [path, key] : used) {
    if (!o.features.count(key))
      throw ConfigError(path, "",
                        "tfrecord dataset: \"" + key + "\" is not among the declared features");
    target_specs[key] = o.features.at(key);
  }
  FeatureDecoder targets(target_specs, "");
  // With on_corrupt: skip, a record that does not parse or whose targets do not decode is
  // dropped now (the columns' checks of the inputs come later, with their statistics).
  auto check = [&](std::string_view bytes, const io::RecordLocation& at) {
    if (store.skip_corrupt) {
      auto row = targets.allocate(1);
      io::Example example = io::parse_example(bytes, at);
      o.derived.apply(example.features, at);
      targets.decode(example, at, 0, row);
    }
  };
  TabularRecordNames names{groups, o.target, o.targets, store.skip_corrupt, o.derived};
  if (o.cache == RecordCache::kNone) {
    io::RecordCatalog catalog = io::RecordCatalog::scan(store, check);
    SkippedRecords skipped{catalog.skipped(), catalog.first_problem(), catalog.skipped_bytes()};
    return {std::make_shared<StreamedTabularRecords>(
                std::move(catalog), std::move(targets), std::move(names),
                StreamOptions{o.shuffle_buffer, o.cycle_length}),
            skipped, std::nullopt};
  }
  io::RecordStore records = io::RecordStore::read(store, check);
  SkippedRecords skipped{records.skipped(), records.first_problem(), records.skipped_bytes()};
  return {
      std::make_shared<TabularRecords>(std::move(records), std::move(targets), std::move(names)),
      skipped, std::nullopt};
}

class TfRecordDataset : public Dataset {
 public:
  explicit TfRecordDataset(const TfRecordOptions& options)
      : TfRecordDataset(open_tfrecord(options)) {
    names_ = options.targets;
  }
  int64_t size() const override { return impl_->size(); }
  Batch gather(const torch::Tensor& indices) const override { return impl_->gather(indices); }
  std::vector<int64_t> input_shape() const override { return impl_->input_shape(); }
  torch::Dtype input_dtype() const override { return impl_->input_dtype(); }
  const StreamingDataset* as_streaming() const override { return impl_->as_streaming(); }
  const TabularDataset* as_tabular() const override { return impl_->as_tabular(); }
  SkippedRecords skipped_records() const override { return skipped_; }
  ExampleOrigin locate(int64_t index) const override { return impl_->locate(index); }
  DatasetInfo info() const override {
    DatasetInfo info;
    info.target_names = names_;
    info.image_input = image_;
    return info;
  }

 private:
  explicit TfRecordDataset(OpenedRecords opened)
      : impl_(std::move(opened.dataset)),
        skipped_(std::move(opened.skipped)),
        image_(std::move(opened.image)) {}

  std::shared_ptr<Dataset> impl_;
  SkippedRecords skipped_;
  std::optional<io::ImageInput> image_;
  std::vector<std::string> names_;
};

}  // namespace

KILN_REGISTER(dataset_registry, "tfrecord", TfRecordDataset, TfRecordOptions,
              "tf.Example records from TFRecord files, decoded by a feature spec.");

}  // namespace kiln::data
