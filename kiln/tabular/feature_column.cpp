#include "kiln/tabular/feature_column.h"

#include <cmath>

#include <fmt/format.h>

#include "kiln/core/error.h"

namespace kiln::tabular {

ColumnRegistry& column_registry() {
  static ColumnRegistry registry("column",
                                 "Feature columns: how raw features become the model's input");
  return registry;
}

const io::Feature* find_feature(const io::Features& example, const std::string& name) {
  auto found = example.find(name);
  if (found == example.end() || found->second.size() == 0) return nullptr;
  return &found->second;
}

std::vector<std::string> category_values(const io::Feature& feature, const std::string& name,
                                         const io::RecordLocation& where) {
  if (feature.kind == io::Feature::Kind::kBytes) return feature.bytes;
  std::vector<std::string> values;
  for (int64_t value : feature.ints) values.push_back(std::to_string(value));
  // A whole number read as a float (a CSV cell "7" of a column that also holds "7.5") is the
  // category "7"; a fraction is no category.
  for (float value : feature.floats) {
    if (value != std::trunc(value) || std::abs(value) > 1e15f)
      throw DataError(where.file, where.record, where.offset,
                      fmt::format("feature \"{}\": the number {} cannot be a category; "
                                  "bucketize it, or make it a numeric column",
                                  name, value));  // {}: 3.5 and 1e+20, as read
    values.push_back(std::to_string(static_cast<int64_t>(value)));
  }
  return values;
}

std::vector<std::string> FeatureColumn::cross_values(const io::Features&,
                                                     const io::RecordLocation&) const {
  throw InternalError("cross_values of a column that is not crossable");
}

namespace {

const Json& fitted_list(const Json& fitted, const char* key, const std::string& path,
                        const char* of) {
  if (!fitted.is_object() || !fitted.contains(key) || !fitted[key].is_array())
    throw ConfigError(path, "", std::string("expected \"") + key + "\": a list of " + of);
  return fitted[key];
}

}  // namespace

std::vector<double> fitted_numbers(const Json& fitted, const char* key, const std::string& path,
                                   int64_t count) {
  std::vector<double> numbers;
  for (const Json& value : fitted_list(fitted, key, path, "numbers")) {
    if (!value.is_number())
      throw ConfigError(path, "", std::string("\"") + key + "\" holds " + value.dump());
    numbers.push_back(value.get<double>());
  }
  if (count >= 0 && int64_t(numbers.size()) != count)
    throw ConfigError(path, "",
                      fmt::format("\"{}\" holds {} numbers, not {}", key, numbers.size(), count));
  return numbers;
}

std::vector<std::string> fitted_strings(const Json& fitted, const char* key,
                                        const std::string& path) {
  std::vector<std::string> strings;
  for (const Json& value : fitted_list(fitted, key, path, "strings")) {
    if (!value.is_string())
      throw ConfigError(path, "", std::string("\"") + key + "\" holds " + value.dump());
    strings.push_back(value.get<std::string>());
  }
  return strings;
}

double linear_quantile(const std::vector<double>& sorted, double q) {
  double position = q * double(sorted.size() - 1);
  size_t low = static_cast<size_t>(std::floor(position));
  size_t high = std::min(low + 1, sorted.size() - 1);
  return sorted[low] + (sorted[high] - sorted[low]) * (position - double(low));
}

double most_frequent(const std::vector<double>& sorted) {
  double best = sorted[0];
  size_t best_run = 0;
  for (size_t start = 0, end = 0; start < sorted.size(); start = end) {
    while (end < sorted.size() && sorted[end] == sorted[start]) ++end;
    if (end - start > best_run) best = sorted[start], best_run = end - start;
  }
  return best;
}

uint64_t stable_hash(const std::string& text) {
  uint64_t hash = 14695981039346656037ull;  // FNV-1a's offset basis and prime
  for (unsigned char byte : text) {
    hash ^= byte;
    hash *= 1099511628211ull;
  }
  return hash;
}

namespace {
thread_local UnseenCounts* unseen_scope = nullptr;
}  // namespace

void UnseenCounts::add(const FeatureColumn* column) {
  std::lock_guard<std::mutex> lock(mutex_);  // rare: values no vocabulary had
  ++counts_[column];
}

int64_t UnseenCounts::of(const FeatureColumn* column) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = counts_.find(column);
  return found == counts_.end() ? 0 : found->second;
}

CountUnseenIn::CountUnseenIn(UnseenCounts& counts) : outer_(unseen_scope) {
  unseen_scope = &counts;
}

CountUnseenIn::~CountUnseenIn() { unseen_scope = outer_; }

UnseenCounts* CountUnseenIn::current() { return unseen_scope; }

void FeatureColumn::count_unseen() const {
  unseen_.fetch_add(1, std::memory_order_relaxed);
  if (UnseenCounts* counts = CountUnseenIn::current()) counts->add(this);
}

}  // namespace kiln::tabular
