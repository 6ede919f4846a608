#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/core/config.h"
#include "kiln/core/error.h"
#include "kiln/data/dataset.h"
#include "kiln/data/tabular_dataset.h"
#include "tests/support/components.h"
#include "tests/support/temp_dir.h"

namespace kiln::data {
namespace csv_test {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::shared_ptr<Dataset> csv_dataset(const std::string& file, const std::string& options) {
  return make_dataset("{type: csv, file: " + file + ", " + options + "}");
}

Batch everything(const Dataset& d) { return d.gather(torch::arange(d.size())); }

TEST(CsvDataset, OneExamplePerRowWithEveryOtherColumnAsFeatures) {
  testing::TempDir dir;
  std::string file = dir.write("t.csv", "a,label,b\n1,0,2\n3,2,4\n5,1,6\n");
  auto dataset = csv_dataset(file, "target: label");
  EXPECT_THAT(dataset->input_shape(), ElementsAre(2));
  Batch all = everything(*dataset);
  EXPECT_TRUE(torch::equal(all.input, torch::tensor({{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}})));
  EXPECT_TRUE(torch::equal(all.target, torch::tensor({0, 2, 1}, torch::kInt64)));
  Batch picked = everything(*csv_dataset(file, "target: label, features: [b]"));
  EXPECT_TRUE(torch::equal(picked.input, torch::tensor({{2.f}, {4.f}, {6.f}})));
}

TEST(CsvDataset, TextLabelsAreNumberedInSortedOrderAndFloatTargetsAreColumns) {
  testing::TempDir dir;
  std::string file = dir.write("iris.csv", "x,species\n1,virginica\n2,setosa\n3,versicolor\n");
  auto species = csv_dataset(file, "target: species");
  EXPECT_TRUE(torch::equal(everything(*species).target, torch::tensor({2, 0, 1}, torch::kInt64)));
  // Their names travel with the model (export, classes in serving); class ids have none.
  EXPECT_THAT(species->info().class_names, ElementsAre("setosa", "versicolor", "virginica"));
  EXPECT_THAT(csv_dataset(file, "target: species, input: [x]")->info().class_names,
              ElementsAre("setosa", "versicolor", "virginica"));
  EXPECT_TRUE(csv_dataset(file, "target: x, features: [x]")->info().class_names.empty());
  // Given classes number the labels in their order, whichever the file holds.
  auto given = csv_dataset(file, "target: species, classes: [virginica, versicolor, setosa, x]");
  EXPECT_TRUE(torch::equal(everything(*given).target, torch::tensor({0, 2, 1}, torch::kInt64)));
  EXPECT_THAT(given->info().class_names, ElementsAre("virginica", "versicolor", "setosa", "x"));
  EXPECT_THAT([&] { csv_dataset(file, "target: species, classes: [setosa, virginica]"); },
              ::testing::ThrowsMessage<DataError>(AllOf(
                  HasSubstr("record 2"), HasSubstr("class \"versicolor\" is none of the classes "
                                                   "[setosa, virginica]"))));
  EXPECT_THAT([&] { csv_dataset(file, "target: species, classes: [a, a]"); },
              ::testing::ThrowsMessage<ConfigError>(HasSubstr("without repeats")));
  Batch regression = everything(*csv_dataset(file, "target: x, features: [x], target_type: float"));
  EXPECT_THAT(regression.target.sizes().vec(), ElementsAre(3, 1));
  EXPECT_FLOAT_EQ(regression.target[2][0].item<float>(), 3.0f);
}

// A class name of bytes that are not UTF-8 ended training with exit 3 when it was written to
// JSON; it is refused where it is read, naming the file and row.
TEST(CsvDataset, AClassNameThatIsNotUtf8IsADataErrorNamingTheRow) {
  testing::TempDir dir;
  std::string file = dir.write("latin1.csv", "x,species\n1,setosa\n2,caf\xe9\n");
  EXPECT_THAT([&] { csv_dataset(file, "target: species"); },
              ::testing::ThrowsMessage<DataError>(AllOf(
                  HasSubstr("latin1.csv, record 1"),
                  HasSubstr("column \"species\": the class name holds byte 0xe9, which is not "
                            "UTF-8"))));
}

TEST(CsvDataset, WindowsOverATimeSeriesPredictHorizonRowsAhead) {
  testing::TempDir dir;
  std::string text = "t,v\n";
  for (int i = 0; i < 6; ++i) text += std::to_string(i) + "," + std::to_string(10 * i) + "\n";
  std::string file = dir.write("series.csv", text);
  auto dataset = csv_dataset(file,
                             "target: v, features: [t, v], target_type: float, window: 3, "
                             "horizon: 2");
  ASSERT_EQ(dataset->size(), 2);  // windows at rows 0 and 1; targets at rows 4 and 5
  EXPECT_THAT(dataset->input_shape(), ElementsAre(3, 2));
  Batch all = everything(*dataset);
  EXPECT_TRUE(torch::equal(all.input[1], torch::tensor({{1.f, 10.f}, {2.f, 20.f}, {3.f, 30.f}})));
  EXPECT_TRUE(torch::equal(all.target, torch::tensor({{40.f}, {50.f}})));
  EXPECT_THROW(csv_dataset(file, "target: v, window: 6"), Error);
}

TEST(CsvDataset, BadCellsNameFileRowOffsetAndColumn) {
  testing::TempDir dir;
  std::string file = dir.write("m.csv", "a,b,y\n1,2,0\n3,,1\n");
  try {
    csv_dataset(file, "target: y");
    FAIL() << "accepted an empty cell";
  } catch (const DataError& e) {
    EXPECT_EQ(e.file(), file);
    EXPECT_EQ(e.record(), 1);
    EXPECT_EQ(e.offset(), 12);
    EXPECT_THAT(e.what(), HasSubstr("column \"b\": empty cell"));
  }
  Batch filled = everything(*csv_dataset(file, "target: y, fill_missing: -1"));
  EXPECT_FLOAT_EQ(filled.input[1][1].item<float>(), -1.0f);
  std::string text = dir.write("t.csv", "a,y\nabc,0\n");
  EXPECT_THROW(csv_dataset(text, "target: y"), DataError);
  EXPECT_THROW(csv_dataset(file, "target: z"), Error);
  EXPECT_THROW(csv_dataset(file, "target: y, delimiter: ';;'"), ConfigError);
}

TEST(CsvDataset, RowsForFeatureColumnsAreTabularAndTakeNoNumericOptions) {
  testing::TempDir dir;
  std::string file = dir.write("t.csv", "color,size,label\nred,1.5,0\n,2,1\n");
  auto rows = csv_dataset(file, "target: label, input: [color, size]");
  ASSERT_NE(rows->as_tabular(), nullptr);
  EXPECT_THAT(rows->as_tabular()->input_groups().columns(), ElementsAre("color", "size"));
  std::vector<std::string> seen;
  Batch targets = rows->as_tabular()->gather_records(
      torch::tensor({1, 0}, torch::kInt64),
      [&](int64_t, const io::Features& features, const io::RecordLocation& where) {
        // An empty cell is a feature without values (missing, as TensorFlow writes one); "2"
        // an integer, "1.5" a number.
        seen.push_back(std::to_string(where.record) + ":" +
                       std::to_string(features.at("color").size()) +
                       io::feature_kind_name(features.at("size").kind));
      });
  EXPECT_THAT(seen, ElementsAre("1:0int64_list", "0:1float_list"));
  EXPECT_TRUE(torch::equal(targets.target, torch::tensor({1, 0}, torch::kInt64)));
  EXPECT_THAT([&] { csv_dataset(file, "target: label, input: [size], features: [size]"); },
              ::testing::ThrowsMessage<ConfigError>(HasSubstr("replaces features and window")));
}

TEST(CsvDataset, NamedInputsAreGroupsOfColumnsInsteadOfInput) {
  testing::TempDir dir;
  std::string file = dir.write("t.csv", "color,size,label\nred,1.5,0\n");
  auto rows = csv_dataset(file, "target: label, inputs: {wide: [color], deep: [size]}");
  ASSERT_NE(rows->as_tabular(), nullptr);
  tabular::InputGroups groups = rows->as_tabular()->input_groups();
  EXPECT_TRUE(groups.named);
  EXPECT_THAT(groups.columns(), ElementsAre("color", "size"));
  EXPECT_THAT([&] { csv_dataset(file, "target: label, input: [size], inputs: {a: [color]}"); },
              ::testing::ThrowsMessage<ConfigError>(
                  AllOf(HasSubstr("data.train.inputs"), HasSubstr("not both"))));
  // A file without its target column reads with target_default, when given.
  auto unlabelled = csv_dataset(file, "target: nope, input: [color], target_default: 1");
  Batch defaulted = unlabelled->as_tabular()->gather_records(
      torch::tensor({0}, torch::kInt64),
      [](int64_t, const io::Features&, const io::RecordLocation&) {});
  EXPECT_EQ(defaulted.target.item<int64_t>(), 1);
  EXPECT_THROW(csv_dataset(file, "target: nope, input: [color]"), Error);
  EXPECT_THAT([&] { csv_dataset(file, "target: label, input: [color], target_default: x"); },
              ::testing::ThrowsMessage<ConfigError>(
                  AllOf(HasSubstr("data.train.target_default"), HasSubstr("null or a number"))));
  EXPECT_THAT([&] { csv_dataset(file, "target: label, inputs: {a: color}"); },
              ::testing::ThrowsMessage<ConfigError>(
                  AllOf(HasSubstr("data.train.inputs.a"), HasSubstr("non-empty list"))));
}

}  // namespace csv_test
}  // namespace kiln::data
