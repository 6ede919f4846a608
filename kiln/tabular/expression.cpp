// Evaluating a derived feature's expression over one record (semantics in expression.h).

#include "kiln/tabular/expression.h"

#include <fmt/format.h>

#include <cmath>

#include "kiln/core/error.h"
#include "kiln/tabular/expression_node.h"

namespace kiln::tabular {

Value Value::of(double number, bool whole) {
  if (!std::isfinite(number)) return missing();
  Value value;
  value.kind = Kind::kNumber;
  value.number = number;
  value.whole = whole;
  return value;
}

Value Value::of_text(std::string text) {
  Value value;
  value.kind = Kind::kText;
  value.text = std::move(text);
  return value;
}

Expression::Expression(const std::string& text, const std::string& path)
    : text_(text), root_(parse_expression(text, path, features_)) {}

namespace {

using Node = Expression::Node;
using Kind = Value::Kind;

Value truth(bool holds) { return Value::of(holds ? 1 : 0, true); }

// a % b as Python computes it: the sign of b (-7 % 3 is 2), where C's fmod gives a's.
double python_modulo(double a, double b) {
  double r = std::fmod(a, b);
  return r != 0 && (r < 0) != (b < 0) ? r + b : r;
}

class Evaluation {
 public:
  Evaluation(const Expression& expression, const io::Features& features,
             const io::RecordLocation& where)
      : expression_(expression), features_(features), where_(where) {}

  Value of(const Node& node) const {
    switch (node.kind) {
      case Node::Kind::kConstant:
        return node.constant;
      case Node::Kind::kFeature:
        return feature(node.name);
      case Node::Kind::kNegate: {
        Value operand = number(of(*node.operands[0]), "-");
        return operand.kind == Kind::kMissing ? operand : Value::of(-operand.number, operand.whole);
      }
      case Node::Kind::kNot: {
        Value operand = number(of(*node.operands[0]), "not");
        return operand.kind == Kind::kMissing ? operand : truth(operand.number == 0);
      }
      case Node::Kind::kBinary:
        return binary(node);
      case Node::Kind::kCall:
        return call(node);
    }
    return Value::missing();
  }

 private:
  // A feature's one value: a number from a float or int64 list, text from a bytes list.
  Value feature(const std::string& name) const {
    auto found = features_.find(name);
    if (found == features_.end() || found->second.size() == 0) return Value::missing();
    const io::Feature& feature = found->second;
    if (feature.size() > 1)
      fail(fmt::format("feature {} holds {} values; an expression reads features of one value",
                       name, feature.size()));
    switch (feature.kind) {
      case io::Feature::Kind::kFloat:
        return Value::of(feature.floats[0], false);
      case io::Feature::Kind::kInt64:
        return Value::of(static_cast<double>(feature.ints[0]), true);
      case io::Feature::Kind::kBytes:
        return Value::of_text(feature.bytes[0]);
      case io::Feature::Kind::kNone:
        break;
    }
    return Value::missing();
  }

  // `value` where a number must stand (missing passes through).
  Value number(Value value, const std::string& used_by) const {
    if (value.kind == Kind::kText)
      fail(fmt::format("{} needs a number, and got the text \"{}\"", used_by, value.text));
    return value;
  }

  Value binary(const Node& node) const {
    const std::string& op = node.name;
    Value left = of(*node.operands[0]);
    Value right = of(*node.operands[1]);
    if (left.kind == Kind::kMissing || right.kind == Kind::kMissing) return Value::missing();
    if (op == "==" || op == "!=") return equality(op, left, right);
    left = number(left, op);
    right = number(right, op);
    double a = left.number, b = right.number;
    bool whole = left.whole && right.whole;
    if (op == "+") return Value::of(a + b, whole);
    if (op == "-") return Value::of(a - b, whole);
    if (op == "*") return Value::of(a * b, whole);
    if (op == "/") return Value::of(a / b, false);
    if (op == "%") return Value::of(python_modulo(a, b), whole);
    if (op == "**") return Value::of(std::pow(a, b), whole && b >= 0);
    if (op == "<") return truth(a < b);
    if (op == "<=") return truth(a <= b);
    if (op == ">") return truth(a > b);
    if (op == ">=") return truth(a >= b);
    if (op == "and") return truth(a != 0 && b != 0);
    return truth(a != 0 || b != 0);  // "or", the last operator there is
  }

  Value equality(const std::string& op, const Value& left, const Value& right) const {
    if (left.kind != right.kind)
      fail(fmt::format("{} compares a number with the text \"{}\"", op,
                       left.kind == Kind::kText ? left.text : right.text));
    bool equal = left.kind == Kind::kText ? left.text == right.text : left.number == right.number;
    return truth(op == "==" ? equal : !equal);
  }

  Value call(const Node& node) const {
    const auto& operands = node.operands;
    switch (node.function) {
      case Function::kIsMissing:
        return truth(of(*operands[0]).kind == Kind::kMissing);
      case Function::kWhere: {
        Value condition = number(of(*operands[0]), "where");
        if (condition.kind == Kind::kMissing) return condition;
        return of(*operands[condition.number != 0 ? 1 : 2]);
      }
      default:
        break;
    }
    std::vector<Value> values;
    for (const auto& operand : operands) {
      values.push_back(number(of(*operand), node.name));
      if (values.back().kind == Kind::kMissing) return Value::missing();
    }
    return math(node.function, values);
  }

  static Value math(Function function, const std::vector<Value>& values) {
    double x = values[0].number;
    switch (function) {
      case Function::kLog:
        return Value::of(std::log(x), false);
      case Function::kLog1p:
        return Value::of(std::log1p(x), false);
      case Function::kExp:
        return Value::of(std::exp(x), false);
      case Function::kSqrt:
        return Value::of(std::sqrt(x), false);
      case Function::kAbs:
        return Value::of(std::abs(x), values[0].whole);
      case Function::kClip: {
        bool whole = values[0].whole && values[1].whole && values[2].whole;
        return Value::of(std::min(std::max(x, values[1].number), values[2].number), whole);
      }
      default:
        break;
    }
    // min or max: the first of the smallest (largest), as written.
    const Value* chosen = &values[0];
    for (const Value& value : values)
      if (function == Function::kMin ? value.number < chosen->number
                                     : value.number > chosen->number)
        chosen = &value;
    return *chosen;
  }

  [[noreturn]] void fail(const std::string& problem) const {
    throw DataError(where_.file, where_.record, where_.offset,
                    fmt::format("expression \"{}\": {}", expression_.text(), problem));
  }

  const Expression& expression_;
  const io::Features& features_;
  const io::RecordLocation& where_;
};

}  // namespace

Value Expression::evaluate(const io::Features& features, const io::RecordLocation& where) const {
  return Evaluation(*this, features, where).of(*root_);
}

}  // namespace kiln::tabular
