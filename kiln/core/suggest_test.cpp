#include "kiln/core/suggest.h"

#include <gtest/gtest.h>

namespace kiln {
namespace {

TEST(EditDistance, CountsInsertionsDeletionsAndSubstitutions) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("max", "max"), 0u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("abc", ""), 3u);
  EXPECT_EQ(edit_distance("maxx", "max"), 1u);  // deletion
  EXPECT_EQ(edit_distance("mx", "max"), 1u);    // insertion
  EXPECT_EQ(edit_distance("mux", "max"), 1u);   // substitution
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("flaw", "lawn"), 2u);
}

TEST(EditDistance, IsSymmetric) {
  EXPECT_EQ(edit_distance("sitting", "kitten"), edit_distance("kitten", "sitting"));
  EXPECT_EQ(edit_distance("adamw", "sgd"), edit_distance("sgd", "adamw"));
}

TEST(Nearest, FindsTheClosestPlausibleTypo) {
  std::vector<std::string> keys = {"max", "validate_every", "epochs"};
  EXPECT_EQ(nearest("maxx", keys), std::optional<std::string>("max"));
  EXPECT_EQ(nearest("epoch", keys), std::optional<std::string>("epochs"));
  EXPECT_EQ(nearest("validate_evrey", keys), std::optional<std::string>("validate_every"));
}

TEST(Nearest, ReturnsNothingForUnrelatedWords) {
  std::vector<std::string> keys = {"max", "validate_every", "epochs"};
  EXPECT_EQ(nearest("learning_rate", keys), std::nullopt);
  EXPECT_EQ(nearest("zzz", keys), std::nullopt);
  EXPECT_EQ(nearest("max", {}), std::nullopt);
}

TEST(SuggestionText, OffersTheNearestAndListsAllKnown) {
  EXPECT_EQ(suggestion_text("maxx", {"max", "min"}), "did you mean \"max\"? known: max, min");
  EXPECT_EQ(suggestion_text("banana", {"max", "min"}), "known: max, min");
}

}  // namespace
}  // namespace kiln
