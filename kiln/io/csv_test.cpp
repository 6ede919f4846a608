#include "kiln/io/csv.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/core/error.h"

namespace kiln::io {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(Csv, ParsesHeaderRowsAndEmptyCells) {
  CsvTable t = parse_csv("a,b,c\n1,2.5,x\n3,,y\n", "t.csv");
  EXPECT_THAT(t.header, ElementsAre("a", "b", "c"));
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_THAT(t.rows[1], ElementsAre("3", "", "y"));
  EXPECT_THAT(t.row_offsets, ElementsAre(6, 14));
  EXPECT_EQ(t.column("c"), 2u);
}

TEST(Csv, HandlesQuotesCrlfBomBlankLinesAndNoFinalNewline) {
  CsvTable t = parse_csv(
      "\xef\xbb\xbfname;note\r\n\"Smith; J\";\"said \"\"hi\"\"\nthen left\"\r\n\r\n"
      "x;\"\"",
      "q.csv", ';');
  EXPECT_THAT(t.header, ElementsAre("name", "note"));
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_THAT(t.rows[0], ElementsAre("Smith; J", "said \"hi\"\nthen left"));
  EXPECT_THAT(t.rows[1], ElementsAre("x", ""));
}

TEST(Csv, ARaggedRowNamesTheFileRowAndOffset) {
  try {
    parse_csv("a,b\n1,2\n3\n", "r.csv");
    FAIL() << "accepted a short row";
  } catch (const DataError& e) {
    EXPECT_EQ(e.file(), "r.csv");
    EXPECT_EQ(e.record(), 1);
    EXPECT_EQ(e.offset(), 8);
    EXPECT_THAT(e.what(), HasSubstr("the row has 1 cells, the header 2"));
  }
}

TEST(Csv, SkippingRaggedRowsCountsThemAndKeepsTheFilesRowNumbers) {
  CsvTable t = parse_csv("a,b\n1,2\n3\n4,5,6\n7,8\n", "r.csv", ',', true);
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_THAT(t.rows[1], ElementsAre("7", "8"));
  EXPECT_THAT(t.row_numbers, ElementsAre(0, 3));
  EXPECT_THAT(t.row_offsets, ElementsAre(4, 16));
  EXPECT_EQ(t.skipped_rows, 2);
  EXPECT_THAT(t.first_skipped, HasSubstr("r.csv, record 1, byte offset 8"));
  EXPECT_THAT(t.first_skipped, HasSubstr("the row has 1 cells, the header 2"));
}

TEST(Csv, BrokenQuotesAndEmptyFilesAreDataErrors) {
  EXPECT_THROW(parse_csv("a\n\"never closed\n", "u.csv"), DataError);
  EXPECT_THROW(parse_csv("a,b\n\"x\"y,2\n", "t.csv"), DataError);
  EXPECT_THROW(parse_csv("", "e.csv"), DataError);
}

// Column names become feature names that kiln writes as JSON text: a header that is not UTF-8
// stopped training with an internal error (an outside campaign's find).
TEST(Csv, AHeaderThatIsNotUtf8TextIsADataErrorNamingTheByte) {
  using namespace std::string_literals;
  auto error_of = [](const std::string& text) -> std::string {
    try {
      parse_csv(text, "h.csv");
    } catch (const DataError& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_THAT(error_of("col\xffor,size\nred,1\n"),
              AllOf(HasSubstr("h.csv"), HasSubstr("byte offset 3"), HasSubstr("0xff"),
                    HasSubstr("not UTF-8")));
  EXPECT_THAT(error_of("\xff\xfe"
                       "c\0o\0l\0\n\0"s),
              HasSubstr("not UTF-8"));
  EXPECT_THAT(error_of("c\0o\0l\0\n\0"s), HasSubstr("NUL byte"));
  EXPECT_EQ(error_of("c\xc3\xa9l,x\n1,2\n"), "no error");  // "cél"
  EXPECT_EQ(error_of("a,b\n\xff,2\n"), "no error");  // a cell's bytes are the columns' business
}

// A campaign's find: a second `color` column was read in place of the first, in silence.
TEST(Csv, AColumnNamedTwiceInTheHeaderIsRefused) {
  try {
    parse_csv("color,size,color\nred,1,purple\n", "d.csv");
    FAIL() << "parsed";
  } catch (const DataError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("d.csv"), HasSubstr("the header names column \"color\" "
                                                              "twice (columns 1 and 3)")));
  }
  EXPECT_EQ(parse_csv(",a,\n1,2,3\n", "unnamed.csv").header.size(), 3u);
}

TEST(Csv, AnUnknownColumnListsTheColumns) {
  CsvTable t = parse_csv("sepal,petal\n", "iris.csv");
  try {
    t.column("species");
    FAIL() << "found a missing column";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("no column \"species\"; its columns: sepal, petal"));
  }
}

// Over a mebibyte without quotes, the rows are read in parts on every core: the table must be the
// one a single pass gives (the same text with one quoted cell, which is read in one pass).
TEST(Csv, ALargeFileReadInPartsGivesTheTableOfOnePass) {
  std::string body;
  for (int i = 0; i < 60000; ++i) {
    body += std::to_string(i) + "," + std::to_string(i * 0.5) + ",w" + std::to_string(i % 7) +
            (i % 3 ? "\n" : "\r\n");
    if (i % 9999 == 0) body += "\n";  // a blank line, not a row
  }
  ASSERT_GT(body.size(), size_t(1) << 20);
  CsvTable parts = parse_csv("a,b,c\n" + body + "1,2,3", "big.csv");
  CsvTable one = parse_csv("a,b,c\n" + body + "1,2,\"3\"", "big.csv");
  EXPECT_EQ(parts.rows, one.rows);
  EXPECT_EQ(parts.row_offsets, one.row_offsets);
  EXPECT_EQ(parts.row_numbers, one.row_numbers);
  ASSERT_EQ(parts.rows.size(), 60001u);
  EXPECT_EQ(parts.row_numbers.back(), 60000);
  // A ragged row deep in the file is named as a single pass names it.
  std::string ragged = body;
  size_t at = ragged.find("\n50000,") + 1;
  ragged.insert(ragged.find('\n', at), ",extra");
  try {
    parse_csv("a,b,c\n" + ragged, "big.csv");
    FAIL() << "took a ragged row";
  } catch (const DataError& e) {
    EXPECT_EQ(e.record(), 50000);
    EXPECT_EQ(e.offset(), int64_t(at + 6));
    EXPECT_THAT(e.what(), HasSubstr("the row has 4 cells, the header 3"));
  }
}

TEST(Csv, InfersTheNarrowestTypeIgnoringMissingCells) {
  CsvTable t = parse_csv("i,f,s,e,big\n1,1,a,,17031080100\n-2,2.5,3,,\n,1e3,b,,-1\n", "t.csv");
  EXPECT_EQ(infer_column_type(t, 0), CsvType::kInt64);
  EXPECT_EQ(infer_column_type(t, 1), CsvType::kFloat);
  EXPECT_EQ(infer_column_type(t, 2), CsvType::kText);
  EXPECT_EQ(infer_column_type(t, 3), CsvType::kText);
  EXPECT_EQ(infer_column_type(t, 4), CsvType::kInt64);
}

TEST(Csv, NumbersParseStrictly) {
  int64_t i = 0;
  double d = 0;
  EXPECT_TRUE(parse_int64("-42", i));
  EXPECT_EQ(i, -42);
  EXPECT_FALSE(parse_int64("4.2", i));
  EXPECT_FALSE(parse_int64(" 4", i));
  EXPECT_FALSE(parse_int64("99999999999999999999", i));
  EXPECT_TRUE(parse_double("2.5e-1", d));
  EXPECT_EQ(d, 0.25);
  EXPECT_FALSE(parse_double("1,5", d));
  EXPECT_FALSE(parse_double("", d));
  // C's hexadecimal forms are text in a CSV file (strtod took "0x10" for 16).
  EXPECT_FALSE(parse_double("0x10", d));
  EXPECT_FALSE(parse_double("+0x1p3", d));
  EXPECT_FALSE(parse_int64("0x10", i));
}

}  // namespace
}  // namespace kiln::io
