// csv: a table of numbers, one example per row, or sliding windows over a time series; with a list
// of inputs, rows of named features (strings allowed) that feature columns turn into numbers.

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <set>

#include "kiln/core/error.h"
#include "kiln/core/parallel.h"
#include "kiln/core/text_codec.h"
#include "kiln/data/csv_derived.h"
#include "kiln/data/dataset.h"
#include "kiln/data/tabular_dataset.h"
#include "kiln/io/csv.h"

namespace kiln::data {
namespace {

// What a csv dataset's target column holds: class labels or numbers to regress.
enum class CsvTargetType { kClass, kFloat };
EnumNameList<CsvTargetType> enum_names(CsvTargetType) {
  return {{CsvTargetType::kClass, "class"}, {CsvTargetType::kFloat, "float"}};
}

struct CsvOptions {
  std::string file;
  std::string delimiter = ",";
  std::vector<std::string> features;
  std::vector<std::string> input;
  tabular::InputGroups inputs;
  tabular::DerivedFeatures derived;
  std::string target;
  CsvTargetType target_type = CsvTargetType::kClass;
  Json fill_missing = nullptr;
  int64_t window = 0;
  int64_t horizon = 1;
  OnCorrupt on_corrupt = OnCorrupt::kFail;
  Json target_default = nullptr;
  std::vector<std::string> classes;
  void describe(Schema& s) {
    s.field("file", file, "CSV file with a header row (gzipped or not).").require();
    s.field("delimiter", delimiter, "The one-character cell delimiter.")
        .check([](const std::string& d) { return d.size() == 1; }, "of one character");
    s.field("features", features,
            "Numeric input columns, in order; empty: every column but the target.");
    s.field("input", input,
            "Instead of features: feature columns (data.columns) and numeric columns, by name, "
            "concatenated into one vector; any column may hold strings (docs/tabular.md).");
    s.field("inputs", inputs,
            "Instead of input: named parts of the input vector, each a list of columns "
            "({wide: [...], deep: [...]}), for models that read several inputs (wide_deep).");
    s.field("derived", derived,
            "Features computed from each row's cells into columns of their own, before anything "
            "reads them; data.derived sets it for every split (docs/tabular.md).");
    s.field("target", target, "The column to predict.").require();
    s.field("target_type", target_type,
            "class (int64 indices; text labels are numbered in sorted order) or float.");
    s.field("fill_missing", fill_missing,
            "Value for an empty feature cell; null: an empty cell is an error.");
    s.field("window", window,
            "0: one example per row. N: examples are N consecutive rows [N, features] "
            "(a time series), the target taken `horizon` rows after the window.")
        .min(0);
    s.field("horizon", horizon, "With a window: how many rows ahead the target is.").min(1);
    s.field("on_corrupt", on_corrupt,
            "With input or inputs (feature columns): fail stops at a row of the wrong width, an "
            "empty or unreadable target, or a cell a column refuses; skip drops the row, counts "
            "and reports it.");
    s.field("target_default", target_default,
            "With input or inputs: the target of every row of a file without the target "
            "column (kiln predict reads unlabelled files so); null: such a file is an error.")
        .check([](const Json& v) { return v.is_null() || v.is_number(); }, "null or a number");
    s.field("classes", classes,
            "The class labels in class-id order; empty: the file's text labels in sorted order "
            "(data.val and data.test take data.train's, so that a class one file lacks does not "
            "renumber the others).")
        .check(
            [](const std::vector<std::string>& c) {
              return std::set<std::string>(c.begin(), c.end()).size() == c.size();
            },
            "without repeats");
  }
};

struct Columns {
  std::vector<size_t> features;
  size_t target = 0;
};

Columns pick_columns(const CsvOptions& o, const io::CsvTable& table) {
  Columns columns{{}, table.column(o.target)};
  for (const auto& name : o.features) columns.features.push_back(table.column(name));
  for (size_t c = 0; o.features.empty() && c < table.header.size(); ++c)
    if (c != columns.target) columns.features.push_back(c);
  KILN_CHECK(!columns.features.empty(), "{}: no feature column besides the target", o.file);
  return columns;
}

[[noreturn]] void cell_error(const io::CsvTable& table, size_t row, size_t column,
                             const std::string& problem) {
  throw DataError(table.name, static_cast<int64_t>(row), table.row_offsets[row],
                  "column \"" + table.header[column] + "\": " + problem);
}

double number_at(const io::CsvTable& table, size_t row, size_t column, const Json& fill) {
  const std::string& cell = table.rows[row][column];
  double value = 0;
  if (cell.empty() && fill.is_number()) return fill.get<double>();
  if (cell.empty()) cell_error(table, row, column, "empty cell; set fill_missing to allow it");
  if (!io::parse_double(cell, value))
    cell_error(table, row, column, "\"" + cell + "\" is not a number");
  return value;
}

torch::Tensor feature_matrix(const CsvOptions& o, const io::CsvTable& table, const Columns& c) {
  torch::Tensor out = torch::empty({int64_t(table.rows.size()), int64_t(c.features.size())});
  auto cells = out.accessor<float, 2>();
  for (size_t r = 0; r < table.rows.size(); ++r)
    for (size_t f = 0; f < c.features.size(); ++f)
      cells[int64_t(r)][int64_t(f)] = float(number_at(table, r, c.features[f], o.fill_missing));
  return out;
}

// A class column's labels, each class's id its place: `classes` when given, else the file's text
// labels in sorted order; none for a column of class ids (whole numbers) or of numbers to regress.
std::vector<std::string> text_labels(const CsvOptions& o, const io::CsvTable& table,
                                     size_t column) {
  if (o.target_type == CsvTargetType::kFloat) return {};
  if (!o.classes.empty()) return o.classes;
  if (io::infer_column_type(table, column) == io::CsvType::kInt64) return {};
  std::set<std::string> labels;
  for (size_t r = 0; r < table.rows.size(); ++r) {
    const std::string& label = table.rows[r][column];
    if (label.empty()) continue;
    // Class names go into inputs.json, model.yaml and metric names: text that reads back.
    if (size_t bad = first_invalid_utf8(label); bad != std::string::npos)
      throw DataError(table.name, table.row_numbers[r], table.row_offsets[r],
                      fmt::format("column \"{}\": the class name holds byte 0x{:02x}, which is "
                                  "not UTF-8; class names are text",
                                  table.header[column], static_cast<uint8_t>(label[bad])));
    labels.insert(label);
  }
  return {labels.begin(), labels.end()};
}

// The targets of `column`: numbers to regress, or class ids, each label's place in `labels`
// (text_labels()) or, without labels, the cell's own whole number.
torch::Tensor target_vector(const CsvOptions& o, const io::CsvTable& table, size_t column,
                            const std::vector<std::string>& labels) {
  auto rows = static_cast<int64_t>(table.rows.size());
  if (o.target_type == CsvTargetType::kFloat) {
    torch::Tensor out = torch::empty({rows, 1});
    auto values = out.accessor<float, 2>();
    for (int64_t r = 0; r < rows; ++r)
      values[r][0] = float(number_at(table, size_t(r), column, nullptr));
    return out;
  }
  std::map<std::string, int64_t> ids;
  for (size_t i = 0; i < labels.size(); ++i) ids.emplace(labels[i], int64_t(i));
  torch::Tensor out = torch::empty({rows}, torch::kInt64);
  auto classes = out.accessor<int64_t, 1>();
  for (int64_t r = 0; r < rows; ++r) {
    const std::string& cell = table.rows[size_t(r)][column];
    if (cell.empty()) cell_error(table, size_t(r), column, "empty class label");
    int64_t index = 0;
    if (labels.empty() && (!io::parse_int64(cell, index) || index < 0))
      cell_error(table, size_t(r), column, "class \"" + cell + "\" is not an index >= 0");
    if (!labels.empty()) {
      auto found = ids.find(cell);
      if (found == ids.end())
        cell_error(table, size_t(r), column,
                   fmt::format("class \"{}\" is none of the classes [{}] (the training split's, "
                               "or the dataset's `classes`)",
                               cell, fmt::join(labels, ", ")));
      index = found->second;
    }
    classes[r] = index;
  }
  return out;
}

// Example i: rows [i, i + window) of the features, the target `horizon` rows after them.
std::pair<torch::Tensor, torch::Tensor> windows(const CsvOptions& o, torch::Tensor x,
                                                torch::Tensor y) {
  int64_t count = x.size(0) - o.window - o.horizon + 1;
  KILN_CHECK(count > 0, "{}: {} rows are too few for window {} and horizon {}", o.file, x.size(0),
             o.window, o.horizon);
  torch::Tensor inputs = x.unfold(0, o.window, 1).slice(0, 0, count).transpose(1, 2).contiguous();
  return {inputs, y.slice(0, o.window + o.horizon - 1, o.window + o.horizon - 1 + count)};
}

// Numeric columns read into one tensor, where a bad row stops the reading.
const CsvOptions& checked_for_numbers(const CsvOptions& o) {
  if (o.on_corrupt == OnCorrupt::kSkip)
    throw ConfigError("on_corrupt", "",
                      "skip reads the rows through feature columns: give input (or inputs) "
                      "instead of features");
  return o;
}

struct Loaded {
  torch::Tensor inputs, targets;
  std::vector<std::string> class_names;
};

// The file's rows, with the derived features' columns (csv_derived.h).
io::CsvTable read_table(const CsvOptions& o, bool skip_bad_rows) {
  io::CsvTable table = io::read_csv(o.file, o.delimiter[0], skip_bad_rows);
  add_derived_columns(table, o.derived);
  return table;
}

Loaded load(const CsvOptions& o) {
  io::CsvTable table = read_table(o, false);
  KILN_CHECK(!table.rows.empty(), "{}: the file has a header but no rows", o.file);
  Columns columns = pick_columns(o, table);
  std::vector<std::string> names = text_labels(o, table, columns.target);
  torch::Tensor x = feature_matrix(o, table, columns),
                y = target_vector(o, table, columns.target, names);
  if (o.window == 0) return {x, y, names};
  auto [windowed, targets] = windows(o, x, y);
  return {windowed, targets, names};
}

// A cell as a feature value: an integer, else a number, else a string; none when empty (a missing
// value, as TFX writes it). Parsed once, when the file is read.
struct Cell {
  io::Feature::Kind kind = io::Feature::Kind::kNone;
  double number = 0;
  int64_t integer = 0;
};

Cell parse_cell(const std::string& text) {
  Cell cell;
  if (text.empty()) return cell;
  if (io::parse_int64(text, cell.integer))
    cell.kind = io::Feature::Kind::kInt64;
  else if (io::parse_double(text, cell.number))
    cell.kind = io::Feature::Kind::kFloat;
  else
    cell.kind = io::Feature::Kind::kBytes;
  return cell;
}

// Rows as named features for feature columns (`input: [...]`).
class CsvRecords : public Dataset, public TabularDataset, public tabular::TabularSource {
 public:
  explicit CsvRecords(const CsvOptions& o)
      : table_(read_table(o, o.on_corrupt == OnCorrupt::kSkip)), options_(o) {
    const char* key = o.inputs.empty() ? "input" : "inputs";
    if (!o.features.empty() || o.window != 0)
      throw ConfigError(key, "",
                        std::string(key) +
                            " (feature columns) replaces features and window: give one or the "
                            "other");
    groups_ = tabular::input_groups(o.input, o.inputs);
    bool labelled = !unlabelled(o);
    // Without a target column every column is a feature.
    target_column_ = labelled ? table_.column(o.target) : table_.header.size();
    if (labelled && o.on_corrupt == OnCorrupt::kSkip) drop_unreadable_targets();
    KILN_CHECK(!table_.rows.empty(), "{}: the file has a header but no rows", o.file);
    if (labelled) class_names_ = text_labels(o, table_, target_column_);
    targets_ = labelled ? target_vector(o, table_, target_column_, class_names_)
               : o.target_type == CsvTargetType::kClass
                   ? torch::full({size()}, o.target_default.get<int64_t>(), torch::kInt64)
                   : torch::full({size(), 1}, o.target_default.get<double>());
    parse_cells();
  }

  // A file without the target column, read with target_default.
  bool unlabelled(const CsvOptions& o) const {
    return !o.target_default.is_null() &&
           std::find(table_.header.begin(), table_.header.end(), o.target) == table_.header.end();
  }

  int64_t size() const override { return int64_t(table_.rows.size()); }
  Batch gather(const torch::Tensor&) const override {
    throw InternalError("csv rows are read through their feature columns (ColumnsDataset)");
  }
  std::vector<int64_t> input_shape() const override { return {}; }
  torch::Dtype input_dtype() const override { return torch::kFloat32; }
  const TabularDataset* as_tabular() const override { return this; }
  ExampleOrigin locate(int64_t index) const override {
    return {{table_.name, table_.row_numbers[size_t(index)], table_.row_offsets[size_t(index)]},
            options_.target};
  }
  SkippedRecords skipped_records() const override {
    return {table_.skipped_rows, table_.first_skipped, 0};
  }
  bool skips_corrupt() const override { return options_.on_corrupt == OnCorrupt::kSkip; }

  DatasetInfo info() const override { return classes_info(class_names_); }

  tabular::InputGroups input_groups() const override { return groups_; }
  const tabular::TabularSource& records() const override { return *this; }
  Batch gather_records(const torch::Tensor& indices,
                       const tabular::RowVisitor& input) const override {
    auto index = indices.accessor<int64_t, 1>();
    Row row = fresh_row();
    for (int64_t i = 0; i < indices.size(0); ++i) visit_row(index[i], i, row, input);
    return {torch::Tensor(), targets_.index_select(0, indices), {}, {}};
  }

  int64_t rows() const override { return size(); }
  void visit(int64_t begin, int64_t end, const tabular::RowVisitor& visit) const override {
    Row row = fresh_row();
    for (int64_t r = begin; r < end; ++r) visit_row(r, r, row, visit);
  }

 private:
  // One record's features, reused from row to row: every column but the target, each emptied
  // (missing) or refilled in place, so that a pass allocates nothing per row for numbers.
  struct Row {
    io::Features features;
    std::vector<io::Feature*> slots;  // by column; null for the target
  };

  Row fresh_row() const {
    Row row;
    for (size_t c = 0; c < table_.header.size(); ++c)
      row.slots.push_back(c == target_column_ ? nullptr : &row.features[table_.header[c]]);
    return row;
  }

  // Every cell typed once, in parts of rows on every core.
  void parse_cells() {
    constexpr size_t kPartRows = 32768;
    size_t columns = table_.header.size(), rows = table_.rows.size();
    cells_.resize(rows * columns);
    parallel_for((rows + kPartRows - 1) / kPartRows, [&](size_t part) {
      for (size_t r = part * kPartRows; r < std::min(rows, (part + 1) * kPartRows); ++r)
        for (size_t c = 0; c < columns; ++c)
          cells_[r * columns + c] = parse_cell(table_.rows[r][c]);
    });
  }

  void visit_row(int64_t r, int64_t as, Row& row, const tabular::RowVisitor& visit) const {
    size_t columns = table_.header.size();
    for (size_t c = 0; c < columns; ++c) {
      io::Feature* feature = row.slots[c];
      if (!feature) continue;
      const Cell& cell = cells_[size_t(r) * columns + c];
      io::clear_values(*feature);
      feature->kind = cell.kind;
      if (cell.kind == io::Feature::Kind::kFloat) feature->floats.push_back(float(cell.number));
      if (cell.kind == io::Feature::Kind::kInt64) feature->ints.push_back(cell.integer);
      if (cell.kind == io::Feature::Kind::kBytes)
        feature->bytes.push_back(table_.rows[size_t(r)][c]);
    }
    visit(as, row.features,
          {table_.name, table_.row_numbers[size_t(r)], table_.row_offsets[size_t(r)]});
  }

  // With on_corrupt: skip, rows whose target is empty, or not a number for a float target, are
  // dropped as rows of the wrong width are.
  void drop_unreadable_targets() {
    io::CsvTable kept{table_.name,         table_.header,       {}, {}, {},
                      table_.skipped_rows, table_.first_skipped};
    for (size_t r = 0; r < table_.rows.size(); ++r) {
      const std::string& cell = table_.rows[r][target_column_];
      double number = 0;
      const std::vector<std::string>& classes = options_.classes;
      bool known =
          classes.empty() || std::find(classes.begin(), classes.end(), cell) != classes.end();
      bool readable =
          !cell.empty() &&
          (options_.target_type == CsvTargetType::kClass ? known : io::parse_double(cell, number));
      if (!readable) {
        if (kept.skipped_rows++ == 0)
          kept.first_skipped =
              DataError(table_.name, table_.row_numbers[r], table_.row_offsets[r],
                        "column \"" + options_.target + "\": unreadable target \"" + cell + "\"")
                  .what();
        continue;
      }
      kept.rows.push_back(std::move(table_.rows[r]));
      kept.row_offsets.push_back(table_.row_offsets[r]);
      kept.row_numbers.push_back(table_.row_numbers[r]);
    }
    table_ = std::move(kept);
  }

  io::CsvTable table_;
  CsvOptions options_;
  tabular::InputGroups groups_;
  size_t target_column_ = 0;
  torch::Tensor targets_;
  std::vector<std::string> class_names_;  // text labels, by class id
  std::vector<Cell> cells_;               // row by row, every column
};

class CsvDataset : public TensorDataset {
 public:
  explicit CsvDataset(const CsvOptions& o) : CsvDataset(load(checked_for_numbers(o))) {}
  DatasetInfo info() const override {
    DatasetInfo info = TensorDataset::info();
    info.class_names = class_names_;
    return info;
  }

 private:
  explicit CsvDataset(Loaded data)
      : TensorDataset(std::move(data.inputs), std::move(data.targets)),
        class_names_(std::move(data.class_names)) {}
  std::vector<std::string> class_names_;
};

// The dataset the options ask for: numeric columns as tensors, or rows for feature columns.
class Csv : public Dataset {
 public:
  explicit Csv(const CsvOptions& o)
      : impl_(o.input.empty() && o.inputs.empty()
                  ? std::shared_ptr<Dataset>(std::make_shared<CsvDataset>(o))
                  : std::make_shared<CsvRecords>(o)) {}
  int64_t size() const override { return impl_->size(); }
  Batch gather(const torch::Tensor& indices) const override { return impl_->gather(indices); }
  std::vector<int64_t> input_shape() const override { return impl_->input_shape(); }
  torch::Dtype input_dtype() const override { return impl_->input_dtype(); }
  const TabularDataset* as_tabular() const override { return impl_->as_tabular(); }
  ExampleOrigin locate(int64_t index) const override { return impl_->locate(index); }
  SkippedRecords skipped_records() const override { return impl_->skipped_records(); }
  DatasetInfo info() const override { return impl_->info(); }

 private:
  std::shared_ptr<Dataset> impl_;
};

}  // namespace

KILN_REGISTER(dataset_registry, "csv", Csv, CsvOptions,
              "CSV rows: numeric columns, windows over a time series, or named features (strings "
              "too) for feature columns.");

}  // namespace kiln::data
