#include "kiln/serving/rest/rest_route.h"

#include <gtest/gtest.h>

#include "kiln/serving/serving_error.h"

namespace kiln::serving {
namespace rest_route_test {

std::string error_of(const std::string& method, const std::string& path) {
  try {
    parse_route(method, path);
  } catch (const ServingError& e) {
    EXPECT_EQ(e.http_status(), 400);
    return e.what();
  }
  ADD_FAILURE() << "accepted: " << method << " " << path;
  return "";
}

TEST(RestRoute, StatusAndMetadataOfAModelItsVersionsAndLabels) {
  Route all = parse_route("GET", "/v1/models/fashion");
  EXPECT_EQ(all.kind, RouteKind::kStatus);
  EXPECT_EQ(all.model, "fashion");
  EXPECT_FALSE(all.version);
  EXPECT_FALSE(all.label);
  Route version = parse_route("GET", "/v1/models/fashion/versions/12/metadata");
  EXPECT_EQ(version.kind, RouteKind::kMetadata);
  EXPECT_EQ(version.version, 12);
  Route label = parse_route("GET", "/v1/models/fashion/labels/stable");
  EXPECT_EQ(label.kind, RouteKind::kStatus);
  EXPECT_EQ(label.label, "stable");
}

TEST(RestRoute, PredictClassifyAndRegressAreCaseInsensitiveAndKeepTheNamesCase) {
  Route predict = parse_route("POST", "/V1/Models/Fashion_CNN/Versions/3:PREDICT");
  EXPECT_EQ(predict.kind, RouteKind::kPredict);
  EXPECT_EQ(predict.model, "Fashion_CNN");
  EXPECT_EQ(predict.version, 3);
  EXPECT_EQ(parse_route("POST", "/v1/models/m:classify").kind, RouteKind::kClassify);
  EXPECT_EQ(parse_route("POST", "/v1/models/m/labels/canary:regress").label, "canary");
  EXPECT_EQ(parse_route("POST", "/v1/models/m:predict?x=1").kind, RouteKind::kPredict);
}

TEST(RestRoute, AnythingElseIsRefusedWithTensorFlowServingsMessages) {
  EXPECT_EQ(error_of("GET", "/v1/models"), "Missing model name in request.");
  EXPECT_EQ(error_of("GET", "/v1/models/"), "Malformed request: GET /v1/models/");
  EXPECT_EQ(error_of("POST", "/v1/models/m"), "Malformed request: POST /v1/models/m");
  EXPECT_EQ(error_of("POST", "/v1/models/m:explain"),
            "Malformed request: POST /v1/models/m:explain");
  EXPECT_EQ(error_of("GET", "/v1/models/m:predict"), "Malformed request: GET /v1/models/m:predict");
  EXPECT_EQ(error_of("PUT", "/v1/models/m"), "Malformed request: PUT /v1/models/m");
  EXPECT_EQ(error_of("GET", "/v1/models/m/versions/x"),
            "Malformed request: GET /v1/models/m/versions/x");
  EXPECT_EQ(error_of("GET", "/v1/models/m/versions/1/labels/a"),
            "Malformed request: GET /v1/models/m/versions/1/labels/a");
  EXPECT_EQ(error_of("GET", "/v1/models/m/metadata/more"),
            "Malformed request: GET /v1/models/m/metadata/more");
  EXPECT_EQ(error_of("GET", "/v2/models/m"), "Malformed request: GET /v2/models/m");
  EXPECT_EQ(error_of("GET", "/v1/models/m/versions/99999999999999999999"),
            "Failed to convert version: 99999999999999999999");
}

}  // namespace rest_route_test
}  // namespace kiln::serving
