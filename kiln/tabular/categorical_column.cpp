// categorical: strings or integers looked up in a vocabulary (given, read from a file, or the
// training split's most frequent values) with OOV buckets for the rest, or hashed into buckets;
// delivered one-hot, multi-hot (lists of values) or as the index (for an embedding).

#include <fmt/format.h>

#include <algorithm>
#include <sstream>
#include <unordered_map>

#include "kiln/core/error.h"
#include "kiln/core/text_codec.h"
#include "kiln/core/text_file.h"
#include "kiln/tabular/feature_column.h"

namespace kiln::tabular {
namespace {

enum class CategoryOutput { kOneHot, kMultiHot, kIndex };
EnumNameList<CategoryOutput> enum_names(CategoryOutput) {
  return {{CategoryOutput::kOneHot, "one_hot"},
          {CategoryOutput::kMultiHot, "multi_hot"},
          {CategoryOutput::kIndex, "index"}};
}

enum class CategoryMissing { kNone, kValue, kMode, kBucket };
EnumNameList<CategoryMissing> enum_names(CategoryMissing) {
  return {{CategoryMissing::kNone, "none"},
          {CategoryMissing::kValue, "value"},
          {CategoryMissing::kMode, "mode"},
          {CategoryMissing::kBucket, "bucket"}};
}

// Whether `text` is how category_values writes a whole number: an optional minus, then digits
// without a leading zero.
bool is_integer_text(const std::string& text) {
  size_t digits = text.size() > 1 && text[0] == '-' ? 1 : 0;
  if (digits == text.size()) return false;
  if (text[digits] == '0' && (text.size() > digits + 1 || digits == 1)) return false;
  return std::all_of(text.begin() + long(digits), text.end(),
                     [](char c) { return c >= '0' && c <= '9'; });
}

// What a missing value crosses as, with missing: bucket (a crossed column's key).
constexpr const char* kMissingCategory = "<missing>";

struct CategoricalOptions {
  std::string feature;
  std::vector<std::string> vocabulary;
  std::string vocabulary_file;
  int64_t min_count = 1;
  int64_t max_tokens = 0;
  int64_t num_oov_buckets = 1;
  int64_t hash_buckets = 0;
  CategoryOutput output = CategoryOutput::kOneHot;
  int64_t embedding_dim = 0;
  CategoryMissing missing = CategoryMissing::kNone;
  std::string value;
  void describe(Schema& s) {
    s.field("feature", feature,
            "The feature read (bytes_list or int64_list); \"\": the column's name.");
    s.field("vocabulary", vocabulary,
            "The categories, in index order; empty: see vocabulary_file.");
    s.field("vocabulary_file", vocabulary_file,
            "A text file of one category per line, in index order; \"\" (and no vocabulary): "
            "the training split's values, most frequent first, ties in byte order.");
    s.field("min_count", min_count, "A computed vocabulary keeps values seen at least this often.")
        .min(1);
    s.field("max_tokens", max_tokens, "A computed vocabulary keeps at most this many (0: all).")
        .min(0);
    s.field("num_oov_buckets", num_oov_buckets,
            "Buckets after the vocabulary for values it lacks, by hash (0: such a value is all "
            "zeros); each counted as unseen.")
        .in_range(0, kMaxBuckets);
    s.field("hash_buckets", hash_buckets, "N > 0: no vocabulary; a value goes to hash(value) % N.")
        .in_range(0, kMaxBuckets);
    s.field("output", output,
            "one_hot (one value per example), multi_hot (a 1 for each value of a list) or index "
            "(the value's number, for an embedding layer).");
    s.field("embedding_dim", embedding_dim,
            "With output: index, the width of the embedding the dnn and wide_deep models look "
            "the index up in (0: none; such a model then refuses the column).")
        .min(0);
    s.field("missing", missing,
            "A record without the feature: none (no category: zeros, and an index refuses it), "
            "value (the category `value`), mode (the training split's most frequent one) or "
            "bucket (an index of its own, after the vocabulary and its OOV buckets).");
    s.field("value", value,
            "The category that stands for a missing value with missing: value; a computed "
            "vocabulary counts it as any other.");
  }
};

std::vector<std::string> read_vocabulary(const std::string& path) {
  std::string text;
  try {
    text = read_text_file(path);  // a regular file of bounded size: not /dev/zero
  } catch (const Error& e) {
    throw ConfigError("vocabulary_file", "", e.what());
  }
  // The vocabulary is written to preprocessing.json as text: it must be UTF-8.
  if (size_t bad = first_invalid_utf8(text); bad != std::string::npos)
    throw ConfigError("vocabulary_file", "",
                      fmt::format("{}: byte 0x{:02x} at offset {} is not UTF-8; a vocabulary is "
                                  "text, one category a line",
                                  path, static_cast<uint8_t>(text[bad]), bad));
  std::istringstream in(text);
  std::vector<std::string> words;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty()) words.push_back(line);
  }
  if (words.empty()) throw ConfigError("vocabulary_file", "", path + " holds no category");
  return words;
}

// How often each category occurs in the training split; `fill` (when not empty) counted for each
// record that lacks the feature.
struct CategoryCounts : ColumnStatistics {
  CategoryCounts(std::string f, std::string stand_in)
      : feature(std::move(f)), fill(std::move(stand_in)) {}
  void add(const io::Features& example, const io::RecordLocation& where) override {
    const io::Feature* values = find_feature(example, feature);
    if (!values && !fill.empty()) counts[fill] += 1;
    if (values)
      for (auto& value : category_values(*values, feature, where)) {
        // A computed vocabulary is written to preprocessing.json as text and must read back.
        if (size_t bad = first_invalid_utf8(value); bad != std::string::npos)
          throw DataError(where.file, where.record, where.offset,
                          fmt::format("feature \"{}\": the category holds byte 0x{:02x}, which "
                                      "is not UTF-8; a computed vocabulary is text (hash_buckets "
                                      "takes any bytes)",
                                      feature, static_cast<uint8_t>(value[bad])));
        counts[value] += 1;
      }
  }
  void merge(ColumnStatistics& other) override {
    for (const auto& [value, count] : static_cast<CategoryCounts&>(other).counts)
      counts[value] += count;
  }
  std::string feature, fill;
  std::unordered_map<std::string, int64_t> counts;
};

// Most frequent first, ties in byte order.
std::vector<std::pair<std::string, int64_t>> by_frequency(
    const std::unordered_map<std::string, int64_t>& counts, int64_t min_count) {
  std::vector<std::pair<std::string, int64_t>> kept;
  for (const auto& entry : counts)
    if (entry.second >= min_count) kept.push_back(entry);
  std::sort(kept.begin(), kept.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  return kept;
}

class CategoricalColumn : public FeatureColumn {
 public:
  CategoricalColumn(const CategoricalOptions& o, const std::string& name)
      : o_(o), feature_(o.feature.empty() ? name : o.feature) {
    int given = !o.vocabulary.empty() + !o.vocabulary_file.empty() + (o.hash_buckets > 0);
    if (given > 1)
      throw ConfigError("hash_buckets", "",
                        "give one of vocabulary, vocabulary_file and hash_buckets (none: the "
                        "vocabulary is computed on the training split)");
    if (o.embedding_dim > 0 && o.output != CategoryOutput::kIndex)
      throw ConfigError("embedding_dim", "", "an embedding looks up an index: give output: index");
    if ((o.missing == CategoryMissing::kValue) == o.value.empty())
      throw ConfigError("value", "",
                        o.value.empty() ? "missing: value needs the category: give value: TEXT"
                                        : "value is the category of missing: value; give both");
    if (o.missing == CategoryMissing::kValue) fill_ = o.value;
    if (!o.vocabulary_file.empty()) use(read_vocabulary(o.vocabulary_file));
    if (!o.vocabulary.empty()) use(o.vocabulary);
  }

  std::vector<std::string> features() const override { return {feature_}; }
  int64_t width() const override { return o_.output == CategoryOutput::kIndex ? 1 : slots(); }
  int64_t cardinality() const override { return o_.output == CategoryOutput::kIndex ? slots() : 0; }
  int64_t embedding_dim() const override { return o_.embedding_dim; }

  std::unique_ptr<ColumnStatistics> statistics() const override {
    if (!computed() && o_.missing != CategoryMissing::kMode) return nullptr;
    return std::make_unique<CategoryCounts>(feature_, fill_);
  }

  void fit(ColumnStatistics& gathered) override {
    const auto& counts = static_cast<CategoryCounts&>(gathered).counts;
    if (counts.empty()) return fit_nothing();
    if (o_.missing == CategoryMissing::kMode) fill_ = by_frequency(counts, 1)[0].first;
    if (!computed()) return;
    std::vector<std::pair<std::string, int64_t>> kept = by_frequency(counts, o_.min_count);
    if (o_.max_tokens > 0 && int64_t(kept.size()) > o_.max_tokens)
      kept.resize(size_t(o_.max_tokens));
    if (kept.empty())
      throw Error("no value of \"" + feature_ + "\" is seen " + std::to_string(o_.min_count) +
                  " times in the training split; lower min_count");
    std::vector<std::string> words;
    for (auto& entry : kept) words.push_back(entry.first);
    use(std::move(words));
  }

  // No training record has a value: an empty vocabulary, so that every value goes to an OOV
  // bucket and a missing one writes zeros, as TensorFlow's vocabulary of nothing would.
  void fit_nothing() {
    bool indexed_gap = o_.missing == CategoryMissing::kValue || own_bucket();
    if (slots() == 0 || (o_.output == CategoryOutput::kIndex && !indexed_gap))
      throw Error("no training record has a value of \"" + feature_ +
                  "\"; give the column a vocabulary, or missing: value with a value" +
                  (slots() == 0 ? ", or num_oov_buckets" : ""));
    if (computed()) use({});
    warn("no training record has a value of \"" + feature_ + "\": its vocabulary is empty, " +
         "every value goes to an out-of-vocabulary bucket" +
         (o_.missing == CategoryMissing::kMode ? ", and a missing value has no mode to fill it"
                                               : ""));
  }

  Json fitted() const override {
    Json fitted = Json::object();
    if (o_.hash_buckets == 0) fitted["vocabulary"] = words_;
    if (o_.missing == CategoryMissing::kMode && !fill_.empty()) fitted["missing"] = fill_;
    return fitted.empty() ? Json() : fitted;
  }

  void restore(const Json& fitted, const std::string& path) override {
    // A mode is fitted, unless no training record had a value (an empty vocabulary says so).
    bool nothing_seen = fitted.is_object() && fitted.value("vocabulary", Json()) == Json::array();
    if (o_.missing == CategoryMissing::kMode && !(nothing_seen && !fitted.contains("missing"))) {
      if (!fitted.is_object() || !fitted.contains("missing") || !fitted["missing"].is_string() ||
          fitted["missing"].get<std::string>().empty())
        throw ConfigError(path, "", "expected \"missing\": the category that fills a gap");
      fill_ = fitted["missing"].get<std::string>();
    }
    if (o_.hash_buckets > 0) return;
    // A computed vocabulary holds max_tokens words at most: more is refused before they are
    // looked at (5 million words of a hand-edited file took 17 s and 2 GB to be refused).
    bool computed = o_.vocabulary.empty() && o_.vocabulary_file.empty();
    if (computed && o_.max_tokens > 0 && fitted.is_object() && fitted.contains("vocabulary") &&
        fitted["vocabulary"].is_array() &&
        fitted["vocabulary"].size() > static_cast<size_t>(o_.max_tokens))
      throw ConfigError(path, "",
                        fmt::format("\"vocabulary\" holds {} words, more than the column's "
                                    "max_tokens ({}) lets it fit",
                                    fitted["vocabulary"].size(), o_.max_tokens));
    std::vector<std::string> words = fitted_strings(fitted, "vocabulary", path);
    // A category twice would have two indices, and the second would never be written.
    std::unordered_map<std::string, size_t> seen;
    for (size_t i = 0; i < words.size(); ++i)
      if (!seen.emplace(words[i], i).second)
        throw ConfigError(path, "",
                          fmt::format("\"vocabulary\" lists \"{}\" twice (at {} and {})", words[i],
                                      seen[words[i]], i));
    use(std::move(words));
  }

  void write(const io::Features& example, const io::RecordLocation& where,
             float* out) const override {
    std::vector<std::string> values = categories(example, where);
    if (values.empty() && own_bucket()) return write_slot(buckets(), out);
    if (o_.output != CategoryOutput::kMultiHot && values.size() > 1)
      throw DataError(where.file, where.record, where.offset,
                      "feature \"" + feature_ + "\" has " + std::to_string(values.size()) +
                          " values; give the column output: multi_hot for lists");
    if (o_.output == CategoryOutput::kIndex) {
      if (values.empty())
        throw DataError(where.file, where.record, where.offset,
                        "feature \"" + feature_ +
                            "\" is missing; an index needs a value (give the column missing: "
                            "value, mode or bucket)");
      int64_t id = index_of(values[0]);
      out[0] = float(id);
      return;
    }
    std::fill(out, out + width(), 0.0f);
    for (const std::string& value : values)
      if (int64_t id = index_of(value); id >= 0) out[id] = 1.0f;
  }

  // Numbers become the categories of their decimal digits (category_values): a vocabulary
  // fitted from them holds nothing else.
  std::string contradicted_kind(const std::string&, io::Feature::Kind kind) const override {
    if (!computed() || kind == io::Feature::Kind::kBytes) return "";
    if (kind == io::Feature::Kind::kNone && !words_.empty())
      return fmt::format(
          "its vocabulary of {} word{} was fitted from the training records' "
          "values",
          words_.size(), words_.size() == 1 ? "" : "s");
    for (const std::string& word : words_)
      if (!is_integer_text(word))
        return fmt::format(
            "its vocabulary, fitted from the training records, holds \"{}\", "
            "which no number is",
            word);
    return "";
  }

  bool crossable() const override { return true; }
  std::vector<std::string> cross_values(const io::Features& example,
                                        const io::RecordLocation& where) const override {
    std::vector<std::string> values = categories(example, where);
    if (values.empty() && own_bucket()) return {kMissingCategory};
    return values;
  }

 private:
  // The record's categories, or the one that fills a gap.
  std::vector<std::string> categories(const io::Features& example,
                                      const io::RecordLocation& where) const {
    if (const io::Feature* feature = find_feature(example, feature_))
      return category_values(*feature, feature_, where);
    if (!fill_.empty()) return {fill_};
    return {};
  }

  int64_t buckets() const {
    return o_.hash_buckets > 0 ? o_.hash_buckets : int64_t(words_.size()) + o_.num_oov_buckets;
  }
  // The buckets and, with missing: bucket, the one of a missing value after them.
  int64_t slots() const { return buckets() + (own_bucket() ? 1 : 0); }
  bool own_bucket() const { return o_.missing == CategoryMissing::kBucket; }

  // One slot set: the index, or a one-hot 1 at it.
  void write_slot(int64_t slot, float* out) const {
    if (o_.output == CategoryOutput::kIndex) {
      out[0] = float(slot);
      return;
    }
    std::fill(out, out + width(), 0.0f);
    out[slot] = 1.0f;
  }

  bool computed() const {
    return o_.hash_buckets == 0 && o_.vocabulary.empty() && o_.vocabulary_file.empty();
  }

  void use(std::vector<std::string> words) {
    words_ = std::move(words);
    ids_.clear();
    for (size_t i = 0; i < words_.size(); ++i) ids_.emplace(words_[i], int64_t(i));
  }

  // The value's position in the output; -1 for an unseen value without OOV buckets.
  int64_t index_of(const std::string& value) const {
    if (o_.hash_buckets > 0) return int64_t(stable_hash(value) % uint64_t(o_.hash_buckets));
    if (auto found = ids_.find(value); found != ids_.end()) return found->second;
    count_unseen();
    if (o_.num_oov_buckets == 0) return -1;
    return int64_t(words_.size()) + int64_t(stable_hash(value) % uint64_t(o_.num_oov_buckets));
  }

  CategoricalOptions o_;
  std::string feature_;
  std::string fill_;  // the category of a record without the feature; "" for none
  std::vector<std::string> words_;
  std::unordered_map<std::string, int64_t> ids_;
};

}  // namespace

KILN_REGISTER(column_registry, "categorical", CategoricalColumn, CategoricalOptions,
              "Strings or integers by vocabulary (given or computed) or hash: one-hot, "
              "multi-hot or index.");

}  // namespace kiln::tabular
