#pragma once
// The expressions of derived features (`data.derived: {big_tipper: "tips > 0.2 * fare"}`,
// docs/tabular.md): arithmetic, comparisons, logic and a few functions over the features of one
// record, evaluated per record in training, evaluation, export and serving alike.
//
//   or:       and ("or" and)*                  not:      "not" not | compare
//   and:      not ("and" not)*                 compare:  sum (("<" "<=" ">" ">=" "==" "!=") sum)?
//   sum:      product (("+" | "-") product)*   product:  unary (("*" | "/" | "%") unary)*
//   unary:    "-" unary | power                power:    atom ("**" unary)?
//   atom:     NUMBER | STRING | NAME | `ANY NAME` | NAME "(" or ("," or)* ")" | "(" or ")"
//
// Operators compute as Python's do (`%` takes the divisor's sign, `**` binds tighter than a
// unary minus). Functions: log, log1p, exp, sqrt, abs, min, max, clip(x, low, high),
// where(condition, a, b) and is_missing(x). A feature a record lacks (or leaves empty) is a missing
// value, and so is whatever is computed from one, except by is_missing and the branch `where` does
// not take; a result that is not a finite number (log of 0, a division by 0) is missing too.
// Comparisons and logic give whole numbers 0 and 1; whole numbers stay whole through +, -, *, %,
// abs, min, max, clip and where, and become fractions through / and the other functions.
// Thread-safety: an Expression is immutable; evaluate() from any number of threads.

#include <memory>
#include <string>
#include <vector>

#include "kiln/io/example.h"
#include "kiln/tabular/expression_value.h"

namespace kiln::tabular {

struct ExpressionNode;  // the parsed tree (expression_node.h)

/// What each expression may hold, at most: longer text, or operations nested deeper (in
/// parentheses, or chained as a + b + c + ...), is refused when parsed.
constexpr size_t kMaxExpressionLength = 4096;
constexpr int kMaxExpressionDepth = 100;

class Expression {
 public:
  using Node = ExpressionNode;

  /// Parses `text`; a ConfigError at `path` naming the character (from 1) where it went wrong
  /// and what could stand there.
  Expression(const std::string& text, const std::string& path);

  /// The value for one record; a value of the wrong kind (text in arithmetic, a feature of
  /// several values) is a DataError naming `where`, the expression and the feature.
  Value evaluate(const io::Features& features, const io::RecordLocation& where) const;
  /// Every feature name it reads, in the order first read, each once.
  const std::vector<std::string>& features() const { return features_; }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
  std::vector<std::string> features_;  // before root_: parsing the root fills it
  std::shared_ptr<const Node> root_;
};

/// The functions expressions may call, for messages.
const std::vector<std::string>& expression_functions();

}  // namespace kiln::tabular
