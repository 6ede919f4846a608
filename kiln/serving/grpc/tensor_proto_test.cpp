// TensorProto read as TensorFlow's clients write it (tensor_content, the repeated fields, the last
// value repeated), and every malformed one refused, naming the input, before anything is allocated.

#include "kiln/serving/grpc/tensor_proto.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>

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

}  // namespace tensor_proto_test
}  // namespace kiln::serving
