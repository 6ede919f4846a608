// The ONNX builder's bytes, read back through the same messages: what each field holds, the batch
// as a named dimension, attributes of every kind, and an initializer whose bytes do not fit its
// shape refused. (The exports themselves are checked by the onnx package and OpenCV:
// tests/e2e/onnx_export_test.cpp.)

#include "kiln/onnx/onnx_model.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/core/error.h"
#include "kiln/onnx/proto/onnx.pb.h"

namespace kiln::onnx {
namespace {

ModelProto read_back(const ModelBuilder& builder) {
  ModelProto model;
  EXPECT_TRUE(model.ParseFromString(builder.serialize(13, "net", "1.2.3")));
  return model;
}

TEST(OnnxModel, WritesTheModelsVersionsProducerAndGraph) {
  ModelBuilder builder;
  builder.add_input({"input", ElementType::kFloat, {-1, 3}});
  builder.add_initializer("w", ElementType::kFloat, {2, 3}, std::string(24, '\0'));
  builder.add_node("Gemm", {"input", "w"}, {"y"}, {{"transB", int64_t{1}}}, "gemm");
  builder.add_output({"y", ElementType::kFloat, {-1, 2}});
  builder.add_metadata("labels", "[\"a\",\"b\"]");
  ModelProto model = read_back(builder);
  EXPECT_EQ(model.ir_version(), 8);
  ASSERT_EQ(model.opset_import_size(), 1);
  EXPECT_EQ(model.opset_import(0).domain(), "");
  EXPECT_EQ(model.opset_import(0).version(), 13);
  EXPECT_EQ(model.producer_name(), "kiln");
  EXPECT_EQ(model.producer_version(), "1.2.3");
  EXPECT_EQ(model.graph().name(), "net");
  ASSERT_EQ(model.graph().node_size(), 1);
  EXPECT_EQ(model.graph().node(0).op_type(), "Gemm");
  EXPECT_EQ(model.graph().node(0).input(1), "w");
  ASSERT_EQ(model.graph().initializer_size(), 1);
  EXPECT_EQ(model.graph().initializer(0).data_type(), TensorProto::FLOAT);
  EXPECT_EQ(model.graph().initializer(0).raw_data().size(), 24u);
  ASSERT_EQ(model.metadata_props_size(), 1);
  EXPECT_EQ(model.metadata_props(0).key(), "labels");
  EXPECT_EQ(builder.node_count(), 1);
}

TEST(OnnxModel, TheBatchIsANamedDimension) {
  ModelBuilder builder;
  builder.add_input({"images", ElementType::kUint8, {-1, 28, 28}});
  ModelProto model = read_back(builder);
  const TypeProto::Tensor& type = model.graph().input(0).type().tensor_type();
  EXPECT_EQ(type.elem_type(), TensorProto::UINT8);
  ASSERT_EQ(type.shape().dim_size(), 3);
  EXPECT_EQ(type.shape().dim(0).dim_param(), "batch");
  EXPECT_FALSE(type.shape().dim(0).has_dim_value());
  EXPECT_EQ(type.shape().dim(2).dim_value(), 28);
}

TEST(OnnxModel, WritesEveryKindOfAttribute) {
  ModelBuilder builder;
  builder.add_node("Op", {"x"}, {"y"},
                   {{"i", int64_t{3}},
                    {"f", 0.5f},
                    {"s", std::string("nearest")},
                    {"ints", std::vector<int64_t>{1, 2}},
                    {"floats", std::vector<float>{1.5f}}},
                   "op");
  ModelProto model = read_back(builder);
  const NodeProto& node = model.graph().node(0);
  ASSERT_EQ(node.attribute_size(), 5);
  EXPECT_EQ(node.attribute(0).type(), AttributeProto::INT);
  EXPECT_EQ(node.attribute(0).i(), 3);
  EXPECT_EQ(node.attribute(1).type(), AttributeProto::FLOAT);
  EXPECT_EQ(node.attribute(1).f(), 0.5f);
  EXPECT_EQ(node.attribute(2).type(), AttributeProto::STRING);
  EXPECT_EQ(node.attribute(2).s(), "nearest");
  EXPECT_EQ(node.attribute(3).type(), AttributeProto::INTS);
  EXPECT_THAT(node.attribute(3).ints(), ::testing::ElementsAre(1, 2));
  EXPECT_EQ(node.attribute(4).type(), AttributeProto::FLOATS);
  EXPECT_THAT(node.attribute(4).floats(), ::testing::ElementsAre(1.5f));
}

TEST(OnnxModel, AnInitializerWhoseBytesDoNotFitItsShapeIsRefused) {
  ModelBuilder builder;
  EXPECT_THROW(builder.add_initializer("w", ElementType::kFloat, {2, 3}, std::string(20, '\0')),
               Error);
  EXPECT_THROW(builder.add_initializer("w", ElementType::kInt64, {-1}, std::string()), Error);
  builder.add_initializer("scalar", ElementType::kInt64, {}, std::string(8, '\0'));
  EXPECT_EQ(read_back(builder).graph().initializer(0).dims_size(), 0);
}

TEST(OnnxModel, ElementSizes) {
  EXPECT_EQ(element_size(ElementType::kFloat), 4);
  EXPECT_EQ(element_size(ElementType::kInt64), 8);
  EXPECT_EQ(element_size(ElementType::kUint8), 1);
  EXPECT_EQ(element_size(ElementType::kFloat16), 2);
}

}  // namespace
}  // namespace kiln::onnx
