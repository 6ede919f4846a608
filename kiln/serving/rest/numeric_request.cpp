#include "kiln/serving/rest/numeric_request.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

namespace kiln::serving {
namespace {

// Deeper lists are left to the general reader, which words the error if there is one.
constexpr size_t kMaxDepth = 32;

// A tensor written as nested lists of numbers, with what the dtype checks need to know of them.
struct NumberList {
  std::vector<int64_t> shape;  // -1 while no list of that depth has closed yet
  size_t leaf_depth = 0;       // 0 until the first number
  std::vector<double> values;
  bool all_integers = true, any_integer = false;
  int64_t min_integer = 0, max_integer = 0;  // among the numbers written as integers
  double max_magnitude = 0;
};

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

class Reader {
 public:
  explicit Reader(std::string_view text) : text_(text) {}

  bool take(char c) {
    skip_space();
    if (pos_ == text_.size() || text_[pos_] != c) return false;
    ++pos_;
    return true;
  }
  bool next_is(char c) {
    skip_space();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  bool at_end() {
    skip_space();
    return pos_ == text_.size();
  }

  // A string of printable ASCII without escapes: the names and keys this reader takes.
  bool plain_string(std::string& out) {
    if (!take('"')) return false;
    size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != '"') {
      char c = text_[pos_++];
      if (c < 0x20 || c > 0x7e || c == '\\') return false;
    }
    if (pos_ == text_.size()) return false;
    out.assign(text_.substr(start, pos_ - start));
    ++pos_;
    return true;
  }

  // A list at `depth` (0: the outermost) of numbers or of lists, as deep and as long as the
  // lists of its depth read before it.
  bool number_list(NumberList& list, size_t depth = 0) {
    if (depth >= kMaxDepth || (list.leaf_depth && depth >= list.leaf_depth) || !take('['))
      return false;
    if (list.shape.size() <= depth) list.shape.resize(depth + 1, -1);
    int64_t length = 0;
    do {
      bool read = next_is('[') ? number_list(list, depth + 1) : number(list, depth + 1);
      if (!read) return false;
      ++length;
    } while (take(','));
    if (!take(']')) return false;
    if (list.shape[depth] == -1) list.shape[depth] = length;
    return list.shape[depth] == length;
  }

 private:
  void skip_space() {
    while (pos_ < text_.size() && is_space(text_[pos_])) ++pos_;
  }
  void skip_digits(size_t& i) const {
    while (i < text_.size() && is_digit(text_[i])) ++i;
  }
  bool digit_at(size_t i) const { return i < text_.size() && is_digit(text_[i]); }

  // One number at `depth`, in JSON's grammar exactly (std::from_chars alone takes more).
  bool number(NumberList& list, size_t depth) {
    if (list.leaf_depth == 0) list.leaf_depth = depth;
    if (depth != list.leaf_depth) return false;
    size_t i = pos_;
    if (i < text_.size() && text_[i] == '-') ++i;
    if (!digit_at(i)) return false;
    if (text_[i] == '0')
      ++i;
    else
      skip_digits(i);
    bool integer = true;
    if (i < text_.size() && text_[i] == '.') {
      integer = false;
      if (!digit_at(++i)) return false;
      skip_digits(i);
    }
    if (i < text_.size() && (text_[i] == 'e' || text_[i] == 'E')) {
      integer = false;
      ++i;
      if (i < text_.size() && (text_[i] == '+' || text_[i] == '-')) ++i;
      if (!digit_at(i)) return false;
      skip_digits(i);
    }
    const char* first = text_.data() + pos_;
    const char* last = text_.data() + i;
    double value = 0;
    if (integer) {
      // As an integer first, as the general reader takes it: "-0" is 0, not -0.0.
      int64_t whole = 0;
      auto [end, error] = std::from_chars(first, last, whole);
      if (error != std::errc() || end != last) return false;
      list.min_integer = list.any_integer ? std::min(list.min_integer, whole) : whole;
      list.max_integer = list.any_integer ? std::max(list.max_integer, whole) : whole;
      list.any_integer = true;
      value = double(whole);
    } else {
      auto [end, error] = std::from_chars(first, last, value);
      if (error != std::errc() || end != last || !std::isfinite(value)) return false;
      list.all_integers = false;
    }
    list.max_magnitude = std::max(list.max_magnitude, std::abs(value));
    list.values.push_back(value);
    pos_ = i;
    return true;
  }

  std::string_view text_;
  size_t pos_ = 0;
};

// Whether the general reader takes every number of `list` as `dtype` (json_tensor.cpp's
// float_value and add_leaf): integers a float holds exactly, floats in range, integers for
// integer types.
bool fits(const NumberList& list, DType dtype) {
  double largest_integer = std::max(std::abs(double(list.min_integer)), double(list.max_integer));
  switch (dtype) {
    case DType::kFloat32:
      return list.max_magnitude <= double(std::numeric_limits<float>::max()) &&
             largest_integer <= double(1 << 24);
    case DType::kFloat64:
      return largest_integer <= 9007199254740992.0;
    case DType::kInt32:
      return list.all_integers && list.min_integer >= std::numeric_limits<int32_t>::min() &&
             list.max_integer <= std::numeric_limits<int32_t>::max();
    case DType::kInt64:
      return list.all_integers;
    default:
      return false;
  }
}

bool takes_shape(const TensorSpec& spec, const std::vector<int64_t>& shape) {
  if (shape.size() != spec.shape.size()) return false;
  for (size_t i = 0; i < shape.size(); ++i)
    if (spec.shape[i] >= 0 && spec.shape[i] != shape[i]) return false;
  return true;
}

// `list` as the tensor of an input, or false when the general reader should say why not.
bool as_input(NumberList& list, const TensorSpec& spec, HostTensor& tensor) {
  if (!fits(list, spec.dtype)) return false;
  list.shape.resize(list.leaf_depth);
  if (!takes_shape(spec, list.shape)) return false;
  tensor.dtype = spec.dtype;
  tensor.shape = std::move(list.shape);
  tensor.numbers = std::move(list.values);
  return true;
}

// The body's parts, as read: at most one of `instances`, `inputs` and `named_inputs` is set.
struct NumericBody {
  std::string signature_name = "serving_default";
  bool named_signature = false;
  std::optional<NumberList> instances, inputs;
  std::map<std::string, NumberList> named_inputs;
};

bool read_named_inputs(Reader& reader, std::map<std::string, NumberList>& named) {
  if (!reader.take('{')) return false;
  do {
    std::string name;
    if (!reader.plain_string(name) || !reader.take(':') || named.count(name)) return false;
    if (!reader.number_list(named[name])) return false;
  } while (reader.take(','));
  return reader.take('}');
}

bool read_member(Reader& reader, NumericBody& body) {
  std::string key;
  if (!reader.plain_string(key) || !reader.take(':')) return false;
  bool has_inputs = body.inputs || !body.named_inputs.empty();
  if (key == "signature_name" && !body.named_signature) {
    body.named_signature = true;
    return reader.plain_string(body.signature_name);
  }
  if (key == "instances" && !body.instances && !has_inputs)
    return reader.number_list(body.instances.emplace());
  if (key == "inputs" && !has_inputs && !body.instances) {
    if (reader.next_is('{')) return read_named_inputs(reader, body.named_inputs);
    return reader.number_list(body.inputs.emplace());
  }
  return false;  // another key, one said twice, or both forms: the general reader's to judge
}

bool read_body(std::string_view text, NumericBody& body) {
  Reader reader(text);
  if (!reader.take('{')) return false;
  do {
    if (!read_member(reader, body)) return false;
  } while (reader.take(','));
  return reader.take('}') && reader.at_end() &&
         (body.instances || body.inputs || !body.named_inputs.empty());
}

}  // namespace

std::optional<PredictRequest> parse_numeric_request(std::string_view text,
                                                    const SignatureInputs& inputs_of) {
  NumericBody body;
  if (!read_body(text, body)) return std::nullopt;
  const std::map<std::string, TensorSpec>& inputs = inputs_of(body.signature_name);
  PredictRequest request;
  request.signature_name = body.signature_name;
  request.format = body.instances ? RequestFormat::kRow : RequestFormat::kColumnar;
  if (body.instances || body.inputs) {
    if (inputs.size() != 1) return std::nullopt;
    NumberList& list = body.instances ? *body.instances : *body.inputs;
    const auto& [name, spec] = *inputs.begin();
    if (!as_input(list, spec, request.inputs[name])) return std::nullopt;
    return request;
  }
  if (body.named_inputs.size() != inputs.size()) return std::nullopt;
  for (const auto& [name, spec] : inputs) {
    auto found = body.named_inputs.find(name);
    if (found == body.named_inputs.end() || !as_input(found->second, spec, request.inputs[name]))
      return std::nullopt;
  }
  return request;
}

}  // namespace kiln::serving
