// FeatureColumns' fitting pass over the training records (feature_columns.h): each part of the
// records on a thread of its own, their statistics merged, the rows the columns refuse, and the
// features no record holds.

#include <fmt/ranges.h>

#include <algorithm>
#include <iterator>
#include <set>

#include "kiln/core/config_path.h"
#include "kiln/core/error.h"
#include "kiln/core/suggest.h"
#include "kiln/tabular/feature_columns.h"
#include "kiln/tabular/parallel_pass.h"

namespace kiln::tabular {

namespace {

// The statistics each column gathers in one part of the pass (null: it needs none).
using PartStatistics = std::vector<std::unique_ptr<ColumnStatistics>>;

// One part of the fitting pass: what its rows gave each column, the rows refused, which of the
// features the columns read its records hold (even without a value), the kinds of the raw
// features' values, and the first record's feature names.
struct PartFit {
  PartStatistics statistics;
  RawFeatureTypes raw;
  RefusedRows refused;
  std::vector<char> present;
  std::vector<std::string> first_names;
};

// Up to a screenful of the names a record holds, for a message.
std::string some_names(const std::vector<std::string>& names) {
  constexpr size_t kShown = 30;
  std::vector<std::string> shown(names.begin(), names.begin() + std::min(names.size(), kShown));
  return fmt::format("{}{}", fmt::join(shown, ", "), names.size() > kShown ? ", ..." : "");
}

// The rows of a source but those refused, numbered and parted as the source's own: a source
// that can only be read in order (streamed records, whose passes read the files once each)
// is read in order.
class RowsBut : public TabularSource {
 public:
  RowsBut(const TabularSource& source, const RefusedRows& refused)
      : source_(source), refused_(refused.rows) {
    if (static_cast<int64_t>(refused_.size()) >= source.rows())
      throw Error("the feature columns refused every training record; the first: " +
                  refused.first_problem);
  }
  int64_t rows() const override { return source_.rows(); }
  void visit(int64_t begin, int64_t end, const RowVisitor& visit) const override {
    source_.visit(begin, end,
                  [&](int64_t row, const io::Features& features, const io::RecordLocation& where) {
                    if (!std::binary_search(refused_.begin(), refused_.end(), row))
                      visit(row, features, where);
                  });
  }

 private:
  const TabularSource& source_;
  const std::vector<int64_t>& refused_;
};

}  // namespace

void FeatureColumns::fit(const TabularSource& train, int64_t threads, bool skip_refused) {
  if (!skip_refused) return fit_rows(train, threads, nullptr);
  RefusedRows refused;
  fit_rows(train, threads, &refused);
  // A row refused only when written (a missing feature with missing: fail) still reached the
  // other columns' statistics: fit again without it. What write() refuses does not depend on
  // what was fitted, so this settles at once; the bound is a guard.
  for (int round = 0; round < 3; ++round) {
    RefusedRows written = this->refused(train, threads);
    if (std::includes(refused.rows.begin(), refused.rows.end(), written.rows.begin(),
                      written.rows.end()))
      return;
    std::vector<int64_t> both;
    std::set_union(refused.rows.begin(), refused.rows.end(), written.rows.begin(),
                   written.rows.end(), std::back_inserter(both));
    if (refused.rows.empty()) refused.first_problem = written.first_problem;
    refused.rows = std::move(both);
    fit_rows(RowsBut(train, refused), threads, nullptr);
  }
}

void FeatureColumns::fit_rows(const TabularSource& train, int64_t threads, RefusedRows* refused) {
  warnings_.clear();  // a second pass, without refused rows, finds them again
  if (train.rows() == 0) throw Error("no training record to fit the feature columns on");
  std::vector<std::string> wanted = features(), raw = raw_features();
  std::vector<PartFit> gathered = gather_parts<PartFit>(
      train, threads,
      [&] {
        PartFit part;
        for (const auto& column : columns_) part.statistics.push_back(column->statistics());
        part.raw = RawFeatureTypes(raw);
        part.present.assign(wanted.size(), 0);
        return part;
      },
      [&](PartFit& part, int64_t row, const io::Features& features,
          const io::RecordLocation& where) {
        if (part.first_names.empty())
          for (const auto& named : features) part.first_names.push_back(named.first);
        for (size_t f = 0; f < wanted.size(); ++f)
          if (!part.present[f] && features.count(wanted[f])) part.present[f] = 1;
        part.raw.observe(features);
        try {
          for (auto& statistics : part.statistics)
            if (statistics) statistics->add(features, where);
        } catch (const DataError& e) {
          if (!refused) throw;
          part.refused.add(row, e.what());
        }
      });
  std::vector<char> present(wanted.size(), 0);
  const std::vector<std::string>* first_names = nullptr;  // of the first part that had a record
  raw_types_ = RawFeatureTypes(raw);
  for (const PartFit& part : gathered) {
    for (size_t f = 0; f < wanted.size(); ++f) present[f] = present[f] || part.present[f];
    raw_types_.merge(part.raw);
    if (!first_names && !part.first_names.empty()) first_names = &part.first_names;
  }
  check_present(wanted, present, first_names ? *first_names : std::vector<std::string>());
  if (refused) {
    for (const PartFit& part : gathered) refused->merge(part.refused);
    // A refused row may have reached some columns' statistics before the one that refused it:
    // gather again without those rows.
    if (!refused->rows.empty()) return fit_rows(RowsBut(train, *refused), threads, nullptr);
  }
  for (size_t c = 0; c < columns_.size(); ++c) {
    if (!gathered[0].statistics[c]) continue;
    for (size_t p = 1; p < gathered.size(); ++p)
      gathered[0].statistics[c]->merge(*gathered[p].statistics[c]);
    try {
      columns_[c]->fit(*gathered[0].statistics[c]);
    } catch (const ConfigError&) {
      throw;
    } catch (const Error& e) {
      throw ConfigError(specs_[c].path, "", e.what());
    }
    for (const std::string& warning : columns_[c]->warnings())
      warnings_.push_back(specs_[c].path + ": " + warning);
  }
  measure();
}

// A feature that no record holds: a name the data does not have (a misspelt `feature:`), or a
// feature absent from every record (as tf.Example leaves a missing value out). Its column fits
// as one that sees no value, and the user is told, with the nearest name the records have.
void FeatureColumns::check_present(const std::vector<std::string>& wanted,
                                   const std::vector<char>& present,
                                   const std::vector<std::string>& first_names) {
  for (size_t f = 0; f < wanted.size(); ++f) {
    if (present[f]) continue;
    size_t c = 0;
    auto reads = [&](size_t i) {
      std::vector<std::string> read = columns_[i]->features();
      return std::find(read.begin(), read.end(), wanted[f]) != read.end();
    };
    while (c + 1 < columns_.size() && !reads(c)) ++c;
    const Json& spec = specs_[c].spec;
    std::string path = specs_[c].path;
    if (spec.is_object() && spec.value("feature", Json("")) != "")
      path = child_path(path, "feature");
    else if (spec.is_object() && spec.contains("features"))
      path = child_path(path, "features");
    std::optional<std::string> near = nearest(wanted[f], first_names);
    warnings_.push_back(fmt::format(
        "{}: no training record has a feature \"{}\"{}; it is missing in every record (the "
        "first record's features are: {})",
        path, wanted[f], near ? " (did you mean \"" + *near + "\"?)" : "",
        some_names(first_names)));
  }
}

RefusedRows FeatureColumns::refused(const TabularSource& source, int64_t threads) const {
  struct PartCheck {
    RefusedRows refused;
    std::vector<float> row;
  };
  std::vector<PartCheck> parts = gather_parts<PartCheck>(
      source, threads,
      [&] {
        return PartCheck{{}, std::vector<float>(size_t(width_))};
      },
      [&](PartCheck& part, int64_t row, const io::Features& features,
          const io::RecordLocation& where) {
        try {
          write(features, where, part.row.data());
        } catch (const DataError& e) {
          part.refused.add(row, e.what());
        }
      });
  RefusedRows refused;
  for (const PartCheck& part : parts) refused.merge(part.refused);
  return refused;
}

}  // namespace kiln::tabular
