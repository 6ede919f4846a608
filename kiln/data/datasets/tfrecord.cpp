// tfrecord: tf.Example records from TFRecord files (globs or lists, any compression), decoded by
// a declared feature spec and held in memory.

#include <glob.h>

#include <cstdio>

#include "kiln/data/dataset.h"
#include "kiln/data/example_features.h"
#include "kiln/io/tfrecord.h"

namespace kiln::data {
namespace {

struct TfRecordOptions {
  std::vector<std::string> files;
  std::string compression = "auto";
  std::map<std::string, FeatureSpec> features;
  std::string input = "image";
  std::string target = "label";
  std::string on_corrupt = "fail";
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
    s.field("limit", limit, "Keep only the first N examples (0 = all).").min(0);
  }
};

std::vector<std::string> expand_patterns(const std::vector<std::string>& patterns) {
  std::vector<std::string> paths;
  for (const auto& pattern : patterns) {
    glob_t matches{};
    int status = ::glob(pattern.c_str(), 0, nullptr, &matches);
    for (size_t i = 0; status == 0 && i < matches.gl_pathc; ++i)
      paths.emplace_back(matches.gl_pathv[i]);
    globfree(&matches);
    if (status != 0) throw Error("tfrecord dataset: no file matches \"" + pattern + "\"");
  }
  return paths;
}

// Reads, parses and decodes every record; on_corrupt: skip drops bad ones and reports them.
class RecordLoader {
 public:
  RecordLoader(const TfRecordOptions& options, const FeatureDecoder& decoder)
      : options_(options), decoder_(decoder) {}

  std::map<std::string, torch::Tensor> load() {
    for (const auto& path : expand_patterns(options_.files)) read_file(path);
    if (skipped_ > 0)
      std::fprintf(stderr, "kiln: warning: skipped %lld corrupt records; the first: %s\n",
                   static_cast<long long>(skipped_), first_problem_.c_str());
    KILN_CHECK(!rows_.empty(), "tfrecord dataset: the files hold no usable record");
    std::map<std::string, torch::Tensor> tensors;
    for (const auto& [name, ignored] : rows_.front()) {
      std::vector<torch::Tensor> column;
      column.reserve(rows_.size());
      for (const auto& row : rows_) column.push_back(row.at(name));
      tensors[name] = torch::cat(column);
    }
    return tensors;
  }

 private:
  bool full() const { return options_.limit > 0 && int64_t(rows_.size()) >= options_.limit; }

  // Decodes every record of one file into rows of one example each.
  void read_file(const std::string& path) {
    std::optional<io::Compression> compression;
    if (options_.compression != "auto") compression = io::parse_compression(options_.compression);
    io::TfRecordReader reader(path, compression);
    std::string record;
    while (!full() && next(reader, record)) {
      io::RecordLocation at{path, reader.record_index() - 1, reader.record_offset() + 12};
      keep([&] {
        auto row = decoder_.allocate(1);
        decoder_.decode(io::parse_example(record, at), at, 0, row);
        rows_.push_back(std::move(row));
      });
    }
  }

  bool next(io::TfRecordReader& reader, std::string& record) {
    for (;;) {
      bool more = false;
      if (keep([&] { more = reader.next(record); })) return more;
    }
  }

  // Runs `step`; a DataError stops everything with on_corrupt: fail, and is counted with skip.
  template <class Step>
  bool keep(Step step) {
    try {
      step();
      return true;
    } catch (const DataError& e) {
      if (options_.on_corrupt == "fail") throw;
      if (skipped_++ == 0) first_problem_ = e.what();
      return false;
    }
  }

  const TfRecordOptions& options_;
  const FeatureDecoder& decoder_;
  std::vector<std::map<std::string, torch::Tensor>> rows_;
  int64_t skipped_ = 0;
  std::string first_problem_;
};

class TfRecordDataset : public TensorDataset {
 public:
  explicit TfRecordDataset(const TfRecordOptions& options)
      : TfRecordDataset(load(options), options) {}

 private:
  TfRecordDataset(std::map<std::string, torch::Tensor> tensors, const TfRecordOptions& options)
      : TensorDataset(tensors.at(options.input), tensors.at(options.target)) {}

  static std::map<std::string, torch::Tensor> load(const TfRecordOptions& options) {
    for (const auto* key : {&options.input, &options.target})
      if (!options.features.count(*key))
        throw Error("tfrecord dataset: \"" + *key + "\" is not among the declared features");
    FeatureDecoder decoder(options.features, "features");
    return RecordLoader(options, decoder).load();
  }
};

}  // namespace

KILN_REGISTER(dataset_registry, "tfrecord", TfRecordDataset, TfRecordOptions,
              "tf.Example records from TFRecord files, decoded by a feature spec, in memory.");

}  // namespace kiln::data
