#include "kiln/serving/rest/responses.h"

#include <gtest/gtest.h>

#include "kiln/core/text_file.h"

namespace kiln::serving {
namespace {

// half_plus_two's serving_default, as TensorFlow Serving describes it in the metadata file of
// tests/data: kiln's metadata of the same signature has the same JSON.
TEST(Responses, MetadataHasTensorFlowServingsShape) {
  Signature signature;
  signature.inputs["x"] = {DType::kFloat32, {-1, 1}};
  signature.outputs["y"] = {{DType::kFloat32, {-1, 1}}, "", OutputOp::kIdentity, ""};
  Json ours = model_metadata_response("saved_model_half_plus_two_2_versions", 123,
                                      {{"serving_default", signature}});
  Json theirs =
      Json::parse(read_text_file(std::string(KILN_TESTDATA) +
                                 "/tfserving_saved_model_half_plus_two_2_versions_metadata.json"));
  EXPECT_EQ(ours["model_spec"], theirs["model_spec"]);
  EXPECT_EQ(ours["metadata"]["signature_def"]["signature_def"]["serving_default"],
            theirs["metadata"]["signature_def"]["signature_def"]["serving_default"]);
}

TEST(Responses, StatusListsEachVersionAvailable) {
  Json status = model_status_response({1, 2});
  ASSERT_EQ(status["model_version_status"].size(), 2u);
  EXPECT_EQ(status["model_version_status"][1], Json::parse(R"({"version": "2", "state": "AVAILABLE",
                            "status": {"error_code": "OK", "error_message": ""}})"));
}

}  // namespace
}  // namespace kiln::serving
