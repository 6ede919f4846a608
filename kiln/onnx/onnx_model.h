#pragma once
// An ONNX model as kiln writes it (`kiln export --format onnx`): a graph of ONNX operators over
// named values, weights as initializers, inputs and outputs with their element types and shapes
// (a dimension of -1 is the batch, written as the named dimension "batch"). Torch-free: the
// converter from a traced LibTorch graph (export/onnx/) fills it; this file alone knows the
// protobuf messages (kiln/onnx/proto/onnx.proto).
// Thread-safety: one builder per thread.

#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace kiln::onnx {

/// ONNX's element types (TensorProto.DataType), those kiln writes.
enum class ElementType : int32_t {
  kFloat = 1,
  kUint8 = 2,
  kInt8 = 3,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kBool = 9,
  kFloat16 = 10,
  kDouble = 11,
};

/// The size in bytes of one element of `type`.
int64_t element_size(ElementType type);

/// An operator's attribute: an int, a float, a string, ints or floats.
struct Attribute {
  std::string name;
  std::variant<int64_t, float, std::string, std::vector<int64_t>, std::vector<float>> value;
};

struct ValueInfo {
  std::string name;
  ElementType type = ElementType::kFloat;
  std::vector<int64_t> shape;  // -1: the batch dimension
};

class ModelBuilder {
 public:
  ModelBuilder();
  ~ModelBuilder();
  ModelBuilder(const ModelBuilder&) = delete;
  ModelBuilder& operator=(const ModelBuilder&) = delete;

  /// Adds a node of `op_type` (default domain) named `name`.
  void add_node(const std::string& op_type, const std::vector<std::string>& inputs,
                const std::vector<std::string>& outputs, const std::vector<Attribute>& attributes,
                const std::string& name);
  /// Adds an initializer: a constant tensor of `dims` whose little-endian elements are `bytes`.
  void add_initializer(const std::string& name, ElementType type, const std::vector<int64_t>& dims,
                       std::string bytes);
  void add_input(const ValueInfo& input);
  void add_output(const ValueInfo& output);
  /// Adds a key-value pair to the model's metadata_props.
  void add_metadata(const std::string& key, const std::string& value);

  /// The serialized ModelProto: IR version 8, the default domain at `opset`, kiln as producer.
  std::string serialize(int64_t opset, const std::string& graph_name,
                        const std::string& producer_version) const;

  int64_t node_count() const;

 private:
  struct Messages;
  std::unique_ptr<Messages> messages_;
};

}  // namespace kiln::onnx
