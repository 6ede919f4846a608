// TensorProto read as TensorFlow's clients write it (tensor_content, the repeated fields, the last
// value repeated), and every malformed one refused, naming the input, before anything is allocated.

#include "kiln/serving/grpc/tensor_proto.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <map>

#include "kiln/serving/grpc/grpc_messages.h"
#include "kiln/serving/grpc/raw_predict.h"
#include "kiln/serving/serving_error.h"

namespace kiln::serving {
namespace tensor_proto_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

tensorflow::TensorProto proto_of(tensorflow::DataType dtype, std::vector<int64_t> shape) {
  tensorflow::TensorProto proto;
  proto.set_dtype(dtype);
  for (int64_t size : shape) proto.mutable_tensor_shape()->add_dim()->set_size(size);
  return proto;
}

const TensorSpec kRows(DType::kFloat32, {-1, 2});

void expect_refused(const tensorflow::TensorProto& proto, const TensorSpec& spec,
                    const std::string& message, int64_t max_rows = 1024) {
  try {
    tensor_from_proto(proto, "x", spec, max_rows);
    ADD_FAILURE() << "accepted: " << proto.DebugString();
  } catch (const ServingError& e) {
    EXPECT_EQ(e.code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(e.what(), HasSubstr("input 'x'"));
    EXPECT_THAT(e.what(), HasSubstr(message));
  }
}

TEST(TensorProto, ReadsLittleEndianContentAsMakeTensorProtoWritesIt) {
  tensorflow::TensorProto proto = proto_of(tensorflow::DT_FLOAT, {2, 2});
  float values[] = {1.5f, -2.f, 3.25f, 0.f};
  proto.set_tensor_content(std::string(reinterpret_cast<const char*>(values), sizeof(values)));
  HostTensor tensor = tensor_from_proto(proto, "x", kRows, 1024);
  EXPECT_THAT(tensor.shape, ElementsAre(2, 2));
  EXPECT_THAT(tensor.numbers, ElementsAre(1.5, -2, 3.25, 0));

  tensorflow::TensorProto flags = proto_of(tensorflow::DT_BOOL, {3});
  flags.set_tensor_content(std::string("\x01\x00\x07", 3));
  EXPECT_THAT(tensor_from_proto(flags, "x", TensorSpec(DType::kBool, {-1}), 8).numbers,
              ElementsAre(1, 0, 1));
}

TEST(TensorProto, RepeatedFieldsRepeatTheirLastValueOrFillZerosAsTensorFlowReadsThem) {
  tensorflow::TensorProto proto = proto_of(tensorflow::DT_FLOAT, {2, 2});
  proto.add_float_val(1);
  proto.add_float_val(2);
  EXPECT_THAT(tensor_from_proto(proto, "x", kRows, 1024).numbers, ElementsAre(1, 2, 2, 2));
  proto.clear_float_val();
  EXPECT_THAT(tensor_from_proto(proto, "x", kRows, 1024).numbers, ElementsAre(0, 0, 0, 0));
  tensorflow::TensorProto words = proto_of(tensorflow::DT_STRING, {2});
  words.add_string_val("a");
  EXPECT_THAT(tensor_from_proto(words, "x", TensorSpec(DType::kString, {-1}), 8).strings,
              ElementsAre("a", "a"));
}

TEST(TensorProto, EachDtypeRoundTripsThroughTheRepeatedFields) {
  for (DType dtype :
       {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64, DType::kBool}) {
    HostTensor tensor{dtype, {3}, {1, 0, 1}, {}};
    tensorflow::TensorProto proto;
    tensor_to_proto(tensor, proto);
    EXPECT_EQ(proto.dtype(), tf_data_type(dtype));
    HostTensor back = tensor_from_answer(proto, "y");
    EXPECT_EQ(back.dtype, dtype);
    EXPECT_THAT(back.numbers, ElementsAre(1, 0, 1)) << tf_dtype_name(dtype);
  }
  HostTensor words{DType::kString, {2}, {}, {"in", "out"}};
  tensorflow::TensorProto proto;
  tensor_to_proto(words, proto);
  EXPECT_THAT(tensor_from_answer(proto, "y").strings, ElementsAre("in", "out"));
}

TEST(TensorProto, MalformedTensorsAreRefusedNamingTheInput) {
  expect_refused(proto_of(tensorflow::DT_HALF, {1, 2}), kRows,
                 "DT_HALF is not a dtype kiln serves");
  expect_refused(proto_of(tensorflow::DT_INT64, {1, 2}), kRows, "expects DT_FLOAT but DT_INT64");
  expect_refused(proto_of(tensorflow::DT_FLOAT, {1, 3}), kRows,
                 "shape [1, 3] does not fit the signature's [-1, 2]");
  expect_refused(proto_of(tensorflow::DT_FLOAT, {2}), kRows, "does not fit");
  expect_refused(proto_of(tensorflow::DT_FLOAT, {9, 2}), kRows, "at most 4", 4);
  expect_refused(proto_of(tensorflow::DT_FLOAT, {-1, 2}), kRows, "dimension 0 has size -1");
  tensorflow::TensorProto unknown = proto_of(tensorflow::DT_FLOAT, {});
  unknown.mutable_tensor_shape()->set_unknown_rank(true);
  expect_refused(unknown, kRows, "unknown rank");
  tensorflow::TensorProto content = proto_of(tensorflow::DT_FLOAT, {1, 2});
  content.set_tensor_content("12345");
  expect_refused(content, kRows, "tensor_content has 5 bytes");
  tensorflow::TensorProto extra = proto_of(tensorflow::DT_FLOAT, {1, 2});
  for (int i = 0; i < 3; ++i) extra.add_float_val(i);
  expect_refused(extra, kRows, "3 values for a shape of 2 elements");
  tensorflow::TensorProto words = proto_of(tensorflow::DT_STRING, {1});
  words.set_tensor_content("ab");
  expect_refused(words, TensorSpec(DType::kString, {-1}), "string_val, not tensor_content");
}

TEST(TensorProto, AShapeClaimingBillionsOfElementsIsRefusedBeforeAllocating) {
  tensorflow::TensorProto huge = proto_of(tensorflow::DT_FLOAT, {1, 1 << 30, 1 << 30});
  huge.add_float_val(1);
  expect_refused(huge, TensorSpec(DType::kFloat32, {-1, -1, -1}), "kiln's limit");
  tensorflow::TensorProto deep = proto_of(tensorflow::DT_FLOAT, std::vector<int64_t>(40, 1));
  expect_refused(deep, kRows, "40 dimensions");
}

ServingError error_of(const std::function<void()>& read) {
  try {
    read();
  } catch (const ServingError& e) {
    return e;
  }
  return ServingError(StatusCode::kInternal, "accepted");
}

// One 512 KiB string for 1,024 images was copied 1,024 times (half a gigabyte) before the first
// image was looked at: the bytes the repetition would make are counted first.
TEST(TensorProto, AStringRepeatedPastTheBoundIsRefusedBeforeItIsCopied) {
  tensorflow::TensorProto images = proto_of(tensorflow::DT_STRING, {1024});
  images.add_string_val(std::string(512 << 10, 'x'));
  ServingError refused =
      error_of([&] { tensor_from_proto(images, "x", TensorSpec(DType::kString, {-1}), 1024); });
  EXPECT_EQ(refused.code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(refused.what(), HasSubstr("would be 536870912 bytes"));
  images.mutable_tensor_shape()->mutable_dim(0)->set_size(4);  // 2 MiB: read
  EXPECT_EQ(tensor_from_proto(images, "x", TensorSpec(DType::kString, {-1}), 1024).strings.size(),
            4u);
}

// A 110-byte Predict of raw features claimed 2^24 values in each feature (3.7 GB): a feature's
// shape is checked whole against what its training records held, and the values of all the
// request's tensors are counted from their shapes before any is read.
TEST(RawPredict, ShapesAreCheckedWholeAndTheirValuesCountedBeforeReading) {
  Signature signature;
  signature.inputs["row"] = TensorSpec(DType::kFloat32, {-1, 3});
  std::map<std::string, TensorSpec> raw = {{"fare", TensorSpec(DType::kFloat32, {-1})},
                                           {"tags", TensorSpec(DType::kString, {-1, -1})}};
  std::vector<std::string> features = {"fare", "tags", "grid"};
  auto predict = [&](std::vector<int64_t> fare_shape, std::vector<int64_t> grid_shape) {
    tfs::PredictRequest request;
    tensorflow::TensorProto& fare = (*request.mutable_inputs())["fare"];
    fare = proto_of(tensorflow::DT_FLOAT, fare_shape);
    fare.add_float_val(1.5f);
    tensorflow::TensorProto& grid = (*request.mutable_inputs())["grid"];
    grid = proto_of(tensorflow::DT_INT64, grid_shape);
    grid.add_int64_val(7);
    return raw_predict_examples(request, signature, features, raw, 1024);
  };
  auto examples = predict({2}, {2, 3});
  ASSERT_TRUE(examples.has_value());
  EXPECT_EQ(examples->size(), 2u);
  EXPECT_EQ((*examples)[1].at("grid").ints, std::vector<int64_t>({7, 7, 7}));
  EXPECT_EQ(predict({2, 1}, {2, 3})->size(), 2u);  // [N, 1] for one value per example

  ServingError wide = error_of([&] { predict({1024, 1 << 14}, {1024, 1}); });
  EXPECT_EQ(wide.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(wide.what(), HasSubstr("input 'fare': shape [1024, 16384] does not fit"));
  // "grid" is not known to the export: only the count of all values bounds it.
  ServingError many = error_of([&] { predict({1024}, {1024, 1 << 14}); });
  EXPECT_EQ(many.code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(many.what(), HasSubstr("one request may make the server hold 16777216 at most"));
}

// Classify's context is copied into each example: 1.1 MB of context for 1,024 examples cost a
// gigabyte and was answered OK.
TEST(ExamplesOf, AContextCopiedIntoEveryExamplePastTheBoundIsRefused) {
  tfs::Input input;
  auto& listed = *input.mutable_example_list_with_context();
  (*listed.mutable_context()->mutable_features()->mutable_feature())["notes"]
      .mutable_bytes_list()
      ->add_value(std::string(1 << 20, 'n'));
  for (int i = 0; i < 1024; ++i) listed.add_examples();
  ServingError refused = error_of([&] { examples_of(input, 1024); });
  EXPECT_EQ(refused.code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(refused.what(), HasSubstr("copied into each of 1024 examples"));
  while (listed.examples_size() > 8) listed.mutable_examples()->RemoveLast();
  EXPECT_EQ(examples_of(input, 1024).size(), 8u);
}

}  // namespace tensor_proto_test
}  // namespace kiln::serving
