#include "kiln/serving/model_table.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/serving/serving_error.h"
#include "tests/support/fake_servable.h"

namespace kiln::serving {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Route route(std::optional<int64_t> version = std::nullopt,
            std::optional<std::string> label = std::nullopt, std::string model = "half") {
  Route r;
  r.model = std::move(model);
  r.version = version;
  r.label = std::move(label);
  return r;
}

void add_two_versions(ModelTable& table) {
  table.set("half",
            {{1, std::make_shared<testing::HalfPlusTwo>()},
             {3, std::make_shared<testing::HalfPlusTwo>()}},
            {{"stable", 1}});
}

void expect_not_found(const ModelTable& table, const Route& r, const std::string& message) {
  try {
    table.find(r);
    ADD_FAILURE() << "found";
  } catch (const ServingError& e) {
    EXPECT_EQ(e.http_status(), 404);
    EXPECT_EQ(std::string(e.what()), message);
  }
}

TEST(ModelTable, FindsTheLatestANumberedOrALabelledVersion) {
  ModelTable table;
  add_two_versions(table);
  EXPECT_EQ(table.find(route()).version, 3);
  EXPECT_EQ(table.find(route(1)).version, 1);
  EXPECT_EQ(table.find(route(std::nullopt, "stable")).version, 1);
  EXPECT_NE(table.find(route(1)).servable, table.find(route(3)).servable);
}

TEST(ModelTable, WhatIsNotServedIsNotFoundWithTensorFlowServingsMessages) {
  ModelTable table;
  add_two_versions(table);
  expect_not_found(table, route(std::nullopt, std::nullopt, "other"),
                   "Servable not found for request: Latest(other)");
  expect_not_found(table, route(2), "Servable not found for request: Specific(half, 2)");
}

// TF Serving's ServerCore: a label it does not know is the caller's bad argument (400 over REST).
TEST(ModelTable, AnUnknownLabelIsAnInvalidArgumentWithTensorFlowServingsMessage) {
  ModelTable table;
  add_two_versions(table);
  try {
    table.find(route(std::nullopt, "canary"));
    FAIL();
  } catch (const ServingError& e) {
    EXPECT_EQ(e.code(), StatusCode::kInvalidArgument);
    EXPECT_STREQ(e.what(), "Unrecognized servable version label: canary");
  }
  try {  // the label is looked up first, as TF Serving does
    table.find(route(std::nullopt, "stable", "other"));
    FAIL();
  } catch (const ServingError& e) {
    EXPECT_EQ(e.code(), StatusCode::kInvalidArgument);
    EXPECT_STREQ(e.what(), "Unrecognized servable version label: stable");
  }
}

TEST(ModelTable, StatusListsEveryVersionNewestFirstOrTheOneAsked) {
  ModelTable table;
  add_two_versions(table);
  EXPECT_THAT(table.status_versions(route()), ElementsAre(3, 1));
  // TF Serving's GetModelStatus does not look at a label, known or not.
  EXPECT_THAT(table.status_versions(route(std::nullopt, "stable")), ElementsAre(3, 1));
  EXPECT_THAT(table.status_versions(route(std::nullopt, "canary")), ElementsAre(3, 1));
  EXPECT_THAT(table.status_versions(route(3)), ElementsAre(3));
  try {
    table.status_versions(route(2));
    FAIL();
  } catch (const ServingError& e) {
    EXPECT_EQ(e.code(), StatusCode::kNotFound);
    EXPECT_STREQ(e.what(), "Could not find version 2 of model half");
  }
  try {
    table.status_versions(route(std::nullopt, std::nullopt, "other"));
    FAIL();
  } catch (const ServingError& e) {
    EXPECT_THAT(e.what(), HasSubstr("Could not find any versions of model other"));
  }
}

TEST(ModelTable, AFoundVersionOutlivesItsRemoval) {
  ModelTable table;
  add_two_versions(table);
  FoundVersion held = table.find(route());
  table.set("half", {});
  EXPECT_TRUE(table.models().empty());
  auto outputs =
      held.servable->predict("serving_default", {{"x", {DType::kFloat32, {1, 1}, {4}, {}}}});
  EXPECT_EQ(outputs.at("y").numbers.front(), 4.0);
}

}  // namespace
}  // namespace kiln::serving
