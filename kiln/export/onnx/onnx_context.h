#pragma once
// What each ONNX operator converter (export/onnx/ops_*.cpp) works with: the traced LibTorch
// graph's node being converted, the ONNX names of the tensors it takes, its constant arguments,
// and a way to add ONNX nodes and initializers. Converters register by the aten operator they
// convert (one registration line each), as layers do by type.
// Thread-safety: one export at a time per Context.

#include <torch/csrc/jit/ir/ir.h>

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "kiln/onnx/onnx_model.h"

namespace kiln::exports::onnx_export {

/// The opset kiln writes: read by onnxruntime, OpenCV 4.5+, TensorRT 8 and OpenVINO.
inline constexpr int64_t kOpset = 13;

/// Constant integers of the traced graph that are the batch size (a multiple of it): found by
/// tracing at two batch sizes. Value -> the multiple of the batch at each element of its list
/// (0 where the element does not depend on the batch); a plain int has one element.
using BatchConstants = std::map<const torch::jit::Value*, std::vector<int64_t>>;
/// The dimensions of each traced tensor that are the batch: those whose sizes differ between the
/// traces at two batch sizes.
using BatchDimensions = std::map<const torch::jit::Value*, std::vector<bool>>;

/// How the graph is written.
struct WriteOptions {
  // Only operators that runtimes with few read, as OpenCV 4.6 (`kiln export --portable`):
  // recurrent layers step by step (unrolled_recurrent.h); integer and boolean tensors held as
  // floats (exact below 2^24), an output cast back to its type at the end; comparisons and logic
  // as arithmetic; embedding lookups as one-hot products.
  bool portable = false;
};

/// The ONNX element type of `type`; an Error naming `what` for one ONNX export does not take.
onnx::ElementType element_type(at::ScalarType type, const std::string& what);

class Context {
 public:
  Context(onnx::ModelBuilder& builder, BatchConstants batch_constants,
          BatchDimensions batch_dimensions, WriteOptions options = {});
  const WriteOptions& options() const { return options_; }

  /// The node being converted; messages name its layer.
  void begin(const torch::jit::Node& node);
  const torch::jit::Node& node() const { return *node_; }
  /// Throws an Error naming the layer of the node being converted and `why`.
  [[noreturn]] void refuse(const std::string& why) const;

  /// The ONNX name of the tensor `value` (a constant tensor becomes an initializer).
  std::string tensor(const torch::jit::Value* value);
  /// A tensor argument, or a number argument as a one-element tensor of `like`'s element type.
  std::string operand(const torch::jit::Value* value, const torch::jit::Value* like);
  /// The value of a constant tensor argument (a weight); refuses a computed one.
  at::Tensor weight(const torch::jit::Value* value) const;
  /// Binds the node's one output to its input `value`'s ONNX value (an operator that changes
  /// nothing at inference: dropout, contiguous, detach).
  void pass_through(const torch::jit::Value* value);
  /// A list of tensors (a chunk's parts) and the ONNX values of its items, in order.
  void bind_list(const torch::jit::Value* list, std::vector<std::string> items);
  std::vector<std::string> list(const torch::jit::Value* list);
  /// Makes `name` the ONNX value of `value`.
  void bind(const torch::jit::Value* value, const std::string& name);
  /// `value` is made on first use by `make` (which may refuse): tensors only some consumers can
  /// take, such as a recurrent layer's initial zeros.
  void defer(const torch::jit::Value* value, std::function<std::string()> make);
  /// The node that produced `value`.
  static const torch::jit::Node& producer(const torch::jit::Value* value);

  bool is_none(const torch::jit::Value* value) const;
  /// A constant argument; refuses a traced (non-constant) one.
  c10::IValue constant(const torch::jit::Value* value) const;
  int64_t integer(const torch::jit::Value* value) const;
  double number(const torch::jit::Value* value) const;
  bool boolean(const torch::jit::Value* value) const;
  std::vector<int64_t> integers(const torch::jit::Value* value) const;
  /// For each element of an int or int-list constant, the multiple of the batch size it is (0:
  /// it does not depend on the batch).
  std::vector<int64_t> batch_multiples(const torch::jit::Value* value) const;
  /// The shape of the tensor `value` as traced (the batch dimension as traced); refuses where
  /// the trace recorded none.
  std::vector<int64_t> shape(const torch::jit::Value* value) const;
  /// The shape of `value` as a Reshape to it is written: -1 at its batch dimension, the traced
  /// sizes elsewhere. Refuses where more than one dimension is the batch's.
  std::vector<int64_t> reshape_target(const torch::jit::Value* value) const;
  /// The element type ONNX computes it in: its traced dtype, or float for integers and booleans
  /// when portable.
  at::ScalarType dtype(const torch::jit::Value* value) const;
  /// Its traced dtype.
  at::ScalarType traced_dtype(const torch::jit::Value* value) const;

  /// Adds `op_type` over `inputs`; returns the names of its `outputs` new values.
  std::vector<std::string> add(const std::string& op_type, const std::vector<std::string>& inputs,
                               const std::vector<onnx::Attribute>& attributes = {},
                               int outputs = 1);
  /// add() of one output.
  std::string add1(const std::string& op_type, const std::vector<std::string>& inputs,
                   const std::vector<onnx::Attribute>& attributes = {});
  /// A constant tensor as an initializer; returns its name.
  std::string initializer(const at::Tensor& value);
  /// A 1-D int64 initializer.
  std::string integers_initializer(const std::vector<int64_t>& values);
  /// `x` reshaped to `to`, a shape that differs from x's only by dimensions of size 1 added or
  /// removed from dimension `first` on. Written as a Reshape that copies the dimensions before
  /// `first` (so a batch there stays dynamic): the form OpenCV 4.6 reads, which misreads
  /// Squeeze's and Unsqueeze's axes inputs. "" where more than one dimension from `first` on is
  /// not 1, since one of them might be the batch.
  std::string reshape_unit_dims(const std::string& x, const std::vector<int64_t>& to, size_t first);
  /// Binds the node's one output to add1()'s result.
  void emit(const std::string& op_type, const std::vector<std::string>& inputs,
            const std::vector<onnx::Attribute>& attributes = {});

 private:
  std::string fresh(const std::string& hint);
  std::string layer_of(const torch::jit::Node& node) const;

  onnx::ModelBuilder& builder_;
  BatchConstants batch_constants_;
  BatchDimensions batch_dimensions_;
  WriteOptions options_;
  const torch::jit::Node* node_ = nullptr;
  std::map<const torch::jit::Value*, std::string> names_;
  std::map<const torch::jit::Value*, std::function<std::string()>> deferred_;
  std::map<const torch::jit::Value*, std::vector<std::string>> lists_;
  std::set<std::string> used_;
  int64_t counter_ = 0;
};

/// Converts one aten node: adds its ONNX nodes and binds its outputs.
using OpConverter = std::function<void(const torch::jit::Node& node, Context& context)>;

/// aten operator ("aten::relu") -> its converter.
std::map<std::string, OpConverter>& op_converters();

/// Registers a converter at static initialisation: one line per operator.
struct RegisterOp {
  RegisterOp(const char* op, OpConverter converter) {
    op_converters().emplace(op, std::move(converter));
  }
};

}  // namespace kiln::exports::onnx_export
