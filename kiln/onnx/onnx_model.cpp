#include "kiln/onnx/onnx_model.h"

#include "kiln/core/error.h"
#include "kiln/onnx/proto/onnx.pb.h"

namespace kiln::onnx {

struct ModelBuilder::Messages {
  GraphProto graph;
  std::vector<std::pair<std::string, std::string>> metadata;
};

int64_t element_size(ElementType type) {
  switch (type) {
    case ElementType::kUint8:
    case ElementType::kInt8:
    case ElementType::kBool:
      return 1;
    case ElementType::kInt16:
    case ElementType::kFloat16:
      return 2;
    case ElementType::kFloat:
    case ElementType::kInt32:
      return 4;
    case ElementType::kInt64:
    case ElementType::kDouble:
      return 8;
  }
  throw Error("unknown ONNX element type");
}

namespace {

void fill_attribute(const Attribute& from, AttributeProto& to) {
  to.set_name(from.name);
  if (auto* i = std::get_if<int64_t>(&from.value)) {
    to.set_type(AttributeProto::INT);
    to.set_i(*i);
  } else if (auto* f = std::get_if<float>(&from.value)) {
    to.set_type(AttributeProto::FLOAT);
    to.set_f(*f);
  } else if (auto* s = std::get_if<std::string>(&from.value)) {
    to.set_type(AttributeProto::STRING);
    to.set_s(*s);
  } else if (auto* ints = std::get_if<std::vector<int64_t>>(&from.value)) {
    to.set_type(AttributeProto::INTS);
    for (int64_t v : *ints) to.add_ints(v);
  } else {
    to.set_type(AttributeProto::FLOATS);
    for (float v : std::get<std::vector<float>>(from.value)) to.add_floats(v);
  }
}

void fill_value_info(const ValueInfo& from, ValueInfoProto& to) {
  to.set_name(from.name);
  TypeProto::Tensor* tensor = to.mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(static_cast<int32_t>(from.type));
  TensorShapeProto* shape = tensor->mutable_shape();
  for (int64_t size : from.shape) {
    TensorShapeProto::Dimension* dim = shape->add_dim();
    if (size < 0)
      dim->set_dim_param("batch");
    else
      dim->set_dim_value(size);
  }
}

}  // namespace

ModelBuilder::ModelBuilder() : messages_(std::make_unique<Messages>()) {}
ModelBuilder::~ModelBuilder() = default;

void ModelBuilder::add_node(const std::string& op_type, const std::vector<std::string>& inputs,
                            const std::vector<std::string>& outputs,
                            const std::vector<Attribute>& attributes, const std::string& name) {
  NodeProto* node = messages_->graph.add_node();
  node->set_op_type(op_type);
  node->set_name(name);
  for (const auto& input : inputs) node->add_input(input);
  for (const auto& output : outputs) node->add_output(output);
  for (const auto& attribute : attributes) fill_attribute(attribute, *node->add_attribute());
}

void ModelBuilder::add_initializer(const std::string& name, ElementType type,
                                   const std::vector<int64_t>& dims, std::string bytes) {
  int64_t count = 1;
  for (int64_t d : dims) {
    if (d < 0) throw Error("ONNX initializer " + name + ": a dimension is negative");
    count *= d;
  }
  if (count * element_size(type) != static_cast<int64_t>(bytes.size()))
    throw Error("ONNX initializer " + name + ": its bytes do not fit its shape");
  TensorProto* tensor = messages_->graph.add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(static_cast<int32_t>(type));
  for (int64_t d : dims) tensor->add_dims(d);
  tensor->set_raw_data(std::move(bytes));
}

void ModelBuilder::add_input(const ValueInfo& input) {
  fill_value_info(input, *messages_->graph.add_input());
}

void ModelBuilder::add_output(const ValueInfo& output) {
  fill_value_info(output, *messages_->graph.add_output());
}

void ModelBuilder::add_metadata(const std::string& key, const std::string& value) {
  messages_->metadata.emplace_back(key, value);
}

std::string ModelBuilder::serialize(int64_t opset, const std::string& graph_name,
                                    const std::string& producer_version) const {
  ModelProto model;
  model.set_ir_version(8);
  OperatorSetIdProto* set = model.add_opset_import();
  set->set_domain("");
  set->set_version(opset);
  model.set_producer_name("kiln");
  model.set_producer_version(producer_version);
  *model.mutable_graph() = messages_->graph;
  model.mutable_graph()->set_name(graph_name);
  for (const auto& [key, value] : messages_->metadata) {
    StringStringEntryProto* entry = model.add_metadata_props();
    entry->set_key(key);
    entry->set_value(value);
  }
  std::string bytes;
  if (!model.SerializeToString(&bytes)) throw Error("the ONNX model is over protobuf's 2 GB limit");
  return bytes;
}

int64_t ModelBuilder::node_count() const { return messages_->graph.node_size(); }

}  // namespace kiln::onnx
