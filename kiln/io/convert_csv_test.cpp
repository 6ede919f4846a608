#include "kiln/io/convert_csv.h"

#include <gtest/gtest.h>

#include "kiln/io/example.h"
#include "kiln/io/tfrecord.h"
#include "tests/support/temp_dir.h"

namespace kiln::io {
namespace {

TEST(ConvertCsv, WritesOneTypedExamplePerRowAsCsvExampleGenDoes) {
  testing::TempDir dir;
  CsvTable table = parse_csv("species,length,island\n0,39.1,Torgersen\n2,,Biscoe\n", "p.csv");
  ShardedTfRecordWriter out(dir.file("p"), 1, Compression::kNone);
  convert_csv(table, out);
  out.close();
  TfRecordReader reader(out.paths()[0]);
  std::string record;
  std::vector<Example> examples;
  while (reader.next(record)) examples.push_back(parse_example(record));
  ASSERT_EQ(examples.size(), 2u);
  EXPECT_EQ(examples[0].features["species"], int64_feature({0}));
  EXPECT_EQ(examples[0].features["length"], float_feature({39.1f}));
  EXPECT_EQ(examples[0].features["island"], bytes_feature({"Torgersen"}));
  EXPECT_EQ(examples[1].features["length"], Feature{});  // the empty cell
}

}  // namespace
}  // namespace kiln::io
