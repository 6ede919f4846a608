// TensorFlow Serving's REST API over a table of fake servables, without sockets: status,
// metadata and predict in both forms, and every bad request answered with its 4xx.

#include "kiln/serving/rest/rest_handler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <condition_variable>
#include <thread>

#include "kiln/core/json.h"
#include "tests/support/fake_servable.h"

namespace kiln::serving {
namespace {

using ::testing::HasSubstr;

class RestHandlerTest : public ::testing::Test {
 protected:
  RestHandlerTest() {
    table_.set("half", {{1, std::make_shared<testing::HalfPlusTwo>()},
                        {2, std::make_shared<testing::HalfPlusTwo>()}});
    table_.set("scorer", {{1, std::make_shared<testing::FeatureScorer>()}});
  }
  HttpReply post(const std::string& path, const std::string& body) {
    return handler_.handle("POST", path, body);
  }
  void expect_error(const HttpReply& reply, int status, const std::string& message) {
    EXPECT_EQ(reply.status, status) << reply.body;
    Json body = Json::parse(reply.body);
    ASSERT_TRUE(body.contains("error")) << reply.body;
    EXPECT_THAT(body["error"].get<std::string>(), HasSubstr(message));
  }
  ModelTable table_;
  RestHandler handler_{table_, RestOptions{4}};
};

TEST_F(RestHandlerTest, StatusAndMetadata) {
  HttpReply status = handler_.handle("GET", "/v1/models/half", "");
  EXPECT_EQ(status.status, 200);
  EXPECT_EQ(Json::parse(status.body)["model_version_status"].size(), 2u);
  HttpReply metadata = handler_.handle("GET", "/v1/models/half/versions/1/metadata", "");
  EXPECT_EQ(metadata.status, 200);
  Json json = Json::parse(metadata.body);
  EXPECT_EQ(json["model_spec"]["version"], "1");
  EXPECT_EQ(
      json["metadata"]["signature_def"]["signature_def"]["serving_default"]["inputs"]["x"]["dtype"],
      "DT_FLOAT");

  // A model of raw features lists them, in every signature, and not the row its columns write.
  Json scorer = Json::parse(handler_.handle("GET", "/v1/models/scorer/metadata", "").body);
  for (const char* signature : {"serving_default", "price"}) {
    const Json& inputs = scorer["metadata"]["signature_def"]["signature_def"][signature]["inputs"];
    ASSERT_EQ(inputs.size(), 2u) << inputs.dump();
    EXPECT_EQ(inputs["color"]["dtype"], "DT_STRING");
    EXPECT_EQ(inputs["size"]["dtype"], "DT_FLOAT");
    EXPECT_EQ(inputs["size"]["tensor_shape"]["dim"][0]["size"], "-1");
  }
}

// A NUL in a name the client sent cut the error message there (what() ends at it).
// With the models' budget for requests' inputs spent, a prediction is refused before its body is
// read (a small body may be filled out to megabytes); status and metadata are still answered.
TEST_F(RestHandlerTest, APredictionIsRefusedUnreadWhileTheModelsBudgetIsSpent) {
  HeldBytes held(16);
  ASSERT_TRUE(held.take(16));
  RestHandler busy(table_, RestOptions{4, &held});
  for (const char* verb : {"predict", "classify", "regress"})
    expect_error(busy.handle("POST", std::string("/v1/models/half:") + verb, "not even JSON"), 503,
                 "hold 16 bytes, and this one's 1 would pass its budget (--max-queued-bytes 16)");
  EXPECT_EQ(busy.handle("GET", "/v1/models/half", "").status, 200);
  held.give_back(16);
  EXPECT_EQ(busy.handle("POST", "/v1/models/half:predict", R"({"instances": [[1.0]]})").status,
            200);
}

TEST_F(RestHandlerTest, AnErrorNamingANulHoldsTheWholeName) {
  HttpReply reply = post("/v1/models/half:predict",
                         R"({"signature_name": "ab\u0000cd<x>", "instances": [[1.0]]})");
  EXPECT_EQ(reply.status, 400) << reply.body;
  EXPECT_THAT(Json::parse(reply.body)["error"].get<std::string>(),
              HasSubstr(std::string("ab\0cd<x>", 7)));
}

TEST_F(RestHandlerTest, PredictsInRowAndColumnarForm) {
  HttpReply rows = post("/v1/models/half:predict", R"({"instances": [[1.0], [2.0], [5.0]]})");
  EXPECT_EQ(rows.status, 200);
  EXPECT_EQ(Json::parse(rows.body), Json::parse(R"({"predictions": [[2.5], [3.0], [4.5]]})"));
  HttpReply columns =
      post("/v1/models/half/versions/2:predict",
           R"({"signature_name": "serving_default", "inputs": {"x": [[1.0], [2.0]]}})");
  EXPECT_EQ(columns.status, 200);
  EXPECT_EQ(Json::parse(columns.body), Json::parse(R"({"outputs": [[2.5], [3.0]]})"));
}

TEST_F(RestHandlerTest, ClassifiesAndRegressesExamplesWithTheirContext) {
  HttpReply classified = post("/v1/models/scorer:classify", R"({
      "context": {"color": "red"},
      "examples": [{"size": 2.5}, {"size": 7.5, "label": 1}]})");
  ASSERT_EQ(classified.status, 200) << classified.body;
  EXPECT_EQ(Json::parse(classified.body), Json::parse(R"({"results": [
      [["small", 0.75], ["large", 0.25]], [["small", 0.25], ["large", 0.75]]]})"));
  HttpReply regressed = post("/v1/models/scorer:regress", R"({"signature_name": "price",
      "context": {"color": "red"}, "examples": [{"size": 2.5}, {"size": 1}]})");
  ASSERT_EQ(regressed.status, 200) << regressed.body;
  EXPECT_EQ(Json::parse(regressed.body), Json::parse(R"({"results": [6.0, 3.0]})"));
}

TEST_F(RestHandlerTest, PredictsRawFeaturesInRowAndColumnarFormAndTheEncodedRowsStillWork) {
  HttpReply rows = post("/v1/models/scorer:predict",
                        R"({"instances": [{"size": 5, "color": "red"}, {"size": 1}]})");
  ASSERT_EQ(rows.status, 200) << rows.body;
  EXPECT_EQ(Json::parse(rows.body), Json::parse(R"({"predictions": [[0.5, 0.5], [0.9, 0.1]]})"));
  HttpReply columns =
      post("/v1/models/scorer:predict",
           R"({"signature_name": "price", "inputs": {"size": [5, 1], "color": ["red", "blue"]}})");
  ASSERT_EQ(columns.status, 200) << columns.body;
  EXPECT_EQ(Json::parse(columns.body), Json::parse(R"({"outputs": [[11.0], [2.0]]})"));
  HttpReply encoded = post("/v1/models/scorer:predict", R"({"instances": [[5.0, 1.0]]})");
  ASSERT_EQ(encoded.status, 200) << encoded.body;
  EXPECT_EQ(Json::parse(encoded.body), Json::parse(R"({"predictions": [[0.5, 0.5]]})"));
}

TEST_F(RestHandlerTest, BadExamplesAreAnswered400NamingTheExampleAndFeature) {
  expect_error(
      post("/v1/models/scorer:classify", R"({"examples": [{"size": 1}, {"color": "red"}]})"), 400,
      "example 1: no feature \"size\"");
  expect_error(post("/v1/models/scorer:classify", R"({"examples": {"size": 1}})"), 400,
               "'examples' must be a list");
  expect_error(post("/v1/models/scorer:classify", R"({"instances": [{"size": 1}]})"), 400,
               "no 'examples'");
  expect_error(post("/v1/models/scorer:classify", R"({"examples": [{"size": [[1]]}]})"), 400,
               "example 0 feature \"size\": [1] is not a feature value");
  expect_error(post("/v1/models/scorer:regress", R"({"examples": [{"size": 1}]})"), 400,
               "give \"signature_name\" one of \"price\"");
  expect_error(post("/v1/models/scorer:classify",
                    R"({"signature_name": "price", "examples": [{"size": 1}]})"),
               400, "signature \"price\" has none");
  expect_error(post("/v1/models/scorer:classify",
                    R"({"signature_name": "nope", "examples": [{"size": 1}]})"),
               400, "Serving signature key \"nope\" not found.");
  expect_error(
      post("/v1/models/scorer:predict", R"({"instances": [{"size": 1, "colour": "red"}]})"), 400,
      "instance 0: the model reads no feature \"colour\"; it reads color, size");
  expect_error(post("/v1/models/scorer:classify",
                    R"({"examples": [{"size": 1}, {"size": 1}, {"size": 1}, {"size": 1},
                                     {"size": 1}]})"),
               400, "at most 4 in one request");
}

TEST_F(RestHandlerTest, EachBadRequestGetsItsStatusAndSaysWhy) {
  expect_error(post("/v1/models/none:predict", R"({"instances": [[1.0]]})"), 404,
               "Servable not found for request: Latest(none)");
  expect_error(post("/v1/models/half/versions/7:predict", R"({"instances": [[1.0]]})"), 404,
               "Specific(half, 7)");
  expect_error(post("/v1/models/half:predict", "{\"instances\": [[1.0]"), 400,
               "the request body is not JSON");
  expect_error(post("/v1/models/half:predict", R"({"instances": [[1.0, 2.0]]})"), 400,
               "has shape [1, 2]");
  expect_error(post("/v1/models/half:predict", R"({"instances": [["a"]]})"), 400,
               "is not of its type");
  expect_error(
      post("/v1/models/half:predict", R"({"signature_name": "embed", "instances": [[1.0]]})"), 400,
      "Serving signature key \"embed\" not found.");
  expect_error(post("/v1/models/half:predict", R"({"instances": [[1], [2], [3], [4], [5]]})"), 400,
               "at most 4 in one request");
  expect_error(post("/v1/models/half:classify", R"({"examples": [{"x": 1.0}]})"), 400,
               "reads tensors, not examples of named features");
  expect_error(handler_.handle("GET", "/v1/models", ""), 400, "Missing model name");
  expect_error(handler_.handle("DELETE", "/v1/models/half", ""), 400, "Malformed request");
  expect_error(handler_.handle("GET", "/v1/models/none", ""), 404,
               "Could not find any versions of model none");
}

// half_plus_two that holds each call until released.
class Held : public testing::HalfPlusTwo {
 public:
  std::map<std::string, HostTensor> predict(
      const std::string& signature, const std::map<std::string, HostTensor>& inputs) override {
    std::unique_lock<std::mutex> lock(mutex_);
    released_.wait(lock, [this] { return released; });
    return HalfPlusTwo::predict(signature, inputs);
  }
  void release() {
    std::lock_guard<std::mutex> lock(mutex_);
    released = true;
    released_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable released_;
  bool released = false;
};

TEST(RestHandlerDrain, NewRequestsGet503WhileThoseInFlightAreAnswered) {
  auto held = std::make_shared<Held>();
  ModelTable table;
  table.set("half", {{1, held}});
  RestHandler handler(table, {});
  HttpReply in_flight;
  std::thread request([&] {
    in_flight = handler.handle("POST", "/v1/models/half:predict", R"({"instances": [[2.0]]})");
  });
  while (handler.in_flight() < 1) std::this_thread::yield();
  int64_t left = -1;
  std::thread draining([&] { left = handler.drain(std::chrono::seconds(60)); });
  // Until the drain begins a status request is answered; from then on, 503.
  while (handler.handle("GET", "/v1/models/half", "").status != 503) std::this_thread::yield();
  held->release();
  request.join();
  draining.join();
  EXPECT_EQ(in_flight.status, 200);
  EXPECT_EQ(Json::parse(in_flight.body)["predictions"][0][0], 3.0);
  EXPECT_EQ(left, 0);
  EXPECT_EQ(handler.in_flight(), 0);
}

}  // namespace
}  // namespace kiln::serving
