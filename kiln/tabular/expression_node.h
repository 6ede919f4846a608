#pragma once
// The tree a parsed expression is (expression.h): made by expression_parser.cpp, walked by
// expression.cpp. Internal to those two.

#include <memory>
#include <string>
#include <vector>

#include "kiln/tabular/expression_value.h"

namespace kiln::tabular {

enum class Function { kLog, kLog1p, kExp, kSqrt, kAbs, kMin, kMax, kClip, kWhere, kIsMissing };

struct ExpressionNode {
  enum class Kind { kConstant, kFeature, kNegate, kNot, kBinary, kCall };
  Kind kind = Kind::kConstant;
  Value constant;       // kConstant
  std::string name;     // kFeature: the feature; kBinary: the operator ("+", "<=", "and", ...)
  Function function{};  // kCall
  std::vector<std::shared_ptr<const ExpressionNode>> operands;
  int depth = 0;  // of the deepest path below it
};

/// Parses `text` into its tree, adding each feature read to `features` (once); a ConfigError at
/// `path` on a mistake.
std::shared_ptr<const ExpressionNode> parse_expression(const std::string& text,
                                                       const std::string& path,
                                                       std::vector<std::string>& features);

}  // namespace kiln::tabular
