// data.labels_per_class: which examples keep their labels, how often they come back, and the
// training data it refuses.

#include "kiln/data/partly_labelled.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "tests/support/components.h"

namespace kiln::data {
namespace partly_labelled_test {

using ::testing::HasSubstr;

std::shared_ptr<const Dataset> blobs(int64_t size = 400) {
  return make_dataset("{type: synthetic, task: blobs, size: " + std::to_string(size) +
                      ", classes: 4, features: 3, seed: 5}");
}

Batch everything(const Dataset& dataset) {
  return dataset.gather(torch::arange(dataset.size(), torch::kInt64));
}

TEST(PartlyLabelled, KeepsThatManyLabelsOfEachClassAndRepeatsThemToTheirShare) {
  auto base = blobs();
  auto partly = partly_labelled(base, 5, 0.25, 1, "data");
  Batch all = everything(*partly);
  torch::Tensor labelled = all.target != kUnlabelled;
  // 20 labelled, 380 unlabelled: repeated 0.25 / 0.75 * 380 / 20 = 6.3 -> 6 times.
  EXPECT_EQ(partly->size(), 380 + 6 * 20);
  EXPECT_EQ(labelled.sum().item<int64_t>(), 6 * 20);
  std::map<int64_t, int64_t> per_class;
  for (int64_t i = 0; i < partly->size(); ++i)
    if (labelled[i].item<bool>()) per_class[all.target[i].item<int64_t>()] += 1;
  for (int64_t label = 0; label < 4; ++label) EXPECT_EQ(per_class[label], 6 * 5) << label;
  // A kept label is the example's own; the inputs are the base's.
  Batch base_all = everything(*base);
  auto* view = dynamic_cast<const PartlyLabelledDataset*>(partly.get());
  ASSERT_NE(view, nullptr);
  EXPECT_EQ(view->unlabelled(), 380);
  EXPECT_TRUE(partly->info().unlabelled_marked);
  EXPECT_FALSE(base->info().unlabelled_marked);
  for (int64_t i = 380; i < 400; ++i) {
    int64_t from = partly->locate(i).where.record;
    EXPECT_TRUE(torch::equal(all.input[i], base_all.input[from]));
    EXPECT_EQ(all.target[i].item<int64_t>(), base_all.target[from].item<int64_t>());
  }
}

TEST(PartlyLabelled, TheSeedDrawsWhichAndAShareOfOneKeepsThemAlone) {
  auto base = blobs();
  Batch one = everything(*partly_labelled(base, 5, 0.25, 1, "data"));
  Batch same = everything(*partly_labelled(base, 5, 0.25, 1, "data"));
  Batch other = everything(*partly_labelled(base, 5, 0.25, 2, "data"));
  EXPECT_TRUE(torch::equal(one.input, same.input));
  EXPECT_FALSE(torch::equal(one.input.slice(0, 380), other.input.slice(0, 380)));
  auto alone = partly_labelled(base, 5, 1.0, 1, "data");
  EXPECT_EQ(alone->size(), 20);
  EXPECT_TRUE((everything(*alone).target != kUnlabelled).all().item<bool>());
  EXPECT_EQ(partly_labelled(base, 0, 0.25, 1, "data"), base) << "0 keeps every label";
}

TEST(PartlyLabelled, LabelledRowsLeaveTheOthersOutOnlyWhereTheDataMarksThem) {
  auto partly = partly_labelled(blobs(), 5, 0.25, 1, "data");
  Batch batch = partly->gather(torch::tensor({0, 390, 1, 395}, torch::kInt64));
  Batch labelled = labelled_rows(batch, partly->info());
  EXPECT_EQ(labelled.size(), 2);
  EXPECT_TRUE(torch::equal(labelled.input, batch.input.index_select(0, torch::tensor({1, 3}))));
  EXPECT_EQ(labelled_rows(batch, DatasetInfo{}).size(), 4) << "-1 is damage elsewhere";
}

TEST(PartlyLabelled, RefusesMoreLabelsThanAClassHasAndDataOfNoClasses) {
  try {
    partly_labelled(blobs(40), 20, 0.25, 1, "data");
    FAIL() << "20 labels of each of 4 classes from 40 examples";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "data.labels_per_class");
    EXPECT_THAT(e.what(), HasSubstr("training examples, fewer than 20"));
  }
  auto curve = make_dataset("{type: synthetic, task: curve, size: 50}");
  try {
    partly_labelled(curve, 2, 0.25, 1, "data");
    FAIL() << "a regression has no classes";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("no class targets"));
  }
}

}  // namespace partly_labelled_test
}  // namespace kiln::data
