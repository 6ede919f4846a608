// The parser of derived features' expressions (grammar in expression.h): recursive descent,
// one function per level of precedence, with the nesting bounded so that no text can exhaust the
// stack.

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>

#include "kiln/core/error.h"
#include "kiln/tabular/expression.h"
#include "kiln/tabular/expression_node.h"

namespace kiln::tabular {
namespace {

using NodePtr = std::shared_ptr<const Expression::Node>;
using Kind = Expression::Node::Kind;

struct FunctionSpec {
  const char* name;
  Function function;
  size_t min_operands, max_operands;
};

constexpr FunctionSpec kFunctions[] = {
    {"log", Function::kLog, 1, 1},     {"log1p", Function::kLog1p, 1, 1},
    {"exp", Function::kExp, 1, 1},     {"sqrt", Function::kSqrt, 1, 1},
    {"abs", Function::kAbs, 1, 1},     {"min", Function::kMin, 2, 16},
    {"max", Function::kMax, 2, 16},    {"clip", Function::kClip, 3, 3},
    {"where", Function::kWhere, 3, 3}, {"is_missing", Function::kIsMissing, 1, 1},
};

constexpr const char* kComparisons[] = {"<=", ">=", "==", "!=", "<", ">"};
constexpr const char* kAtom = "a number, a feature's name, a 'text' or (";

bool name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
}

NodePtr constant(Value value) {
  auto made = std::make_shared<Expression::Node>();
  made->constant = std::move(value);
  return made;
}

class Parser {
 public:
  Parser(const std::string& text, const std::string& path, std::vector<std::string>& features)
      : text_(text), path_(path), features_(features) {}

  NodePtr parse() {
    if (text_.size() > kMaxExpressionLength)
      fail(fmt::format("longer than {} characters", kMaxExpressionLength), kMaxExpressionLength);
    NodePtr root = parse_or(0);
    skip_space();
    if (at_ < text_.size()) fail("expected an operator or the end" + hint(), at_);
    return root;
  }

 private:
  // A node over `operands`, no deeper than kMaxExpressionDepth: evaluation recurses as deep as
  // the tree is, and a long chain (a + b + c + ...) deepens it as parentheses do.
  std::shared_ptr<Expression::Node> node(Kind kind, std::string name,
                                         std::vector<NodePtr> operands) {
    auto made = std::make_shared<Expression::Node>();
    made->kind = kind;
    made->name = std::move(name);
    for (const NodePtr& operand : operands) made->depth = std::max(made->depth, operand->depth + 1);
    made->operands = std::move(operands);
    if (made->depth > kMaxExpressionDepth)
      fail(fmt::format("nested deeper than {} operations", kMaxExpressionDepth), at_);
    return made;
  }

  NodePtr parse_or(int depth) {
    descend(depth);
    NodePtr left = parse_and(depth);
    while (take_word("or")) left = node(Kind::kBinary, "or", {left, parse_and(depth)});
    return left;
  }

  NodePtr parse_and(int depth) {
    NodePtr left = parse_not(depth);
    while (take_word("and")) left = node(Kind::kBinary, "and", {left, parse_not(depth)});
    return left;
  }

  NodePtr parse_not(int depth) {
    if (!take_word("not")) return parse_compare(depth);
    descend(depth + 1);
    return node(Kind::kNot, "not", {parse_not(depth + 1)});
  }

  NodePtr parse_compare(int depth) {
    NodePtr left = parse_sum(depth);
    const char* op = take_any(kComparisons);
    if (!op) return left;
    NodePtr compared = node(Kind::kBinary, op, {left, parse_sum(depth)});
    size_t before = at_;
    if (take_any(kComparisons)) fail("comparisons do not chain: write (a < b) and (b < c)", before);
    return compared;
  }

  NodePtr parse_sum(int depth) {
    NodePtr left = parse_product(depth);
    while (true) {
      const char* op = take("+") ? "+" : take("-") ? "-" : nullptr;
      if (!op) return left;
      left = node(Kind::kBinary, op, {left, parse_product(depth)});
    }
  }

  NodePtr parse_product(int depth) {
    NodePtr left = parse_unary(depth);
    while (true) {
      const char* op = take("*") ? "*" : take("/") ? "/" : take("%") ? "%" : nullptr;
      if (!op) return left;
      left = node(Kind::kBinary, op, {left, parse_unary(depth)});
    }
  }

  NodePtr parse_unary(int depth) {
    if (!take("-")) return parse_power(depth);
    descend(depth + 1);
    return node(Kind::kNegate, "-", {parse_unary(depth + 1)});
  }

  NodePtr parse_power(int depth) {
    NodePtr base = parse_atom(depth);
    if (!take("**")) return base;
    descend(depth + 1);
    return node(Kind::kBinary, "**", {base, parse_unary(depth + 1)});
  }

  NodePtr parse_atom(int depth) {
    skip_space();
    if (at_ >= text_.size()) fail(std::string("expected ") + kAtom + " but the text ends", at_);
    char c = text_[at_];
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') return parse_number();
    if (c == '\'' || c == '"') return constant(Value::of_text(parse_text(c)));
    if (c == '`') return feature(parse_quoted_name());
    if (name_start(c)) return parse_name(depth);
    if (take("(")) {
      NodePtr inner = parse_or(depth + 1);
      expect(")", "a closing )");
      return inner;
    }
    fail(std::string("expected ") + kAtom + hint(), at_);
  }

  NodePtr parse_number() {
    size_t start = at_;
    bool whole = true;
    while (at_ < text_.size()) {
      char c = text_[at_];
      bool sign_of_exponent =
          (c == '+' || c == '-') && (text_[at_ - 1] == 'e' || text_[at_ - 1] == 'E');
      if (c == '.' || c == 'e' || c == 'E' || sign_of_exponent)
        whole = false;
      else if (!std::isdigit(static_cast<unsigned char>(c)))
        break;
      ++at_;
    }
    double number = 0;
    auto [end, error] = std::from_chars(text_.data() + start, text_.data() + at_, number);
    if (error != std::errc() || end != text_.data() + at_ || !std::isfinite(number))
      fail("not a number", start);
    return constant(Value::of(number, whole && std::abs(number) <= 9007199254740992.0));
  }

  std::string parse_text(char quote) {
    size_t start = at_++;
    std::string text;
    while (at_ < text_.size() && text_[at_] != quote) {
      if (text_[at_] == '\\' && at_ + 1 < text_.size()) ++at_;  // \' \" \\ stand for themselves
      text += text_[at_++];
    }
    if (at_ >= text_.size()) fail(fmt::format("this text has no closing {}", quote), start);
    ++at_;
    return text;
  }

  std::string parse_quoted_name() {
    size_t start = at_++;
    size_t close = text_.find('`', at_);
    if (close == std::string::npos) fail("this `name` has no closing `", start);
    if (close == at_) fail("an empty `name`", start);
    std::string name = text_.substr(at_, close - at_);
    at_ = close + 1;
    return name;
  }

  NodePtr parse_name(int depth) {
    size_t start = at_;
    while (at_ < text_.size() && name_char(text_[at_])) ++at_;
    std::string name = text_.substr(start, at_ - start);
    if (name == "and" || name == "or" || name == "not")
      fail(fmt::format("`{}` needs something before it; a feature called so is written `{}` "
                       "in backquotes",
                       name, name),
           start);
    if (!take("(")) return feature(name);
    return parse_call(name, start, depth);
  }

  NodePtr parse_call(const std::string& name, size_t start, int depth) {
    const FunctionSpec* spec = nullptr;
    for (const auto& candidate : kFunctions)
      if (name == candidate.name) spec = &candidate;
    if (!spec)
      fail(fmt::format("no function {}; there are {}", name,
                       fmt::join(expression_functions(), ", ")),
           start);
    std::vector<NodePtr> operands;
    if (!take(")")) {
      do operands.push_back(parse_or(depth + 1));
      while (take(","));
      expect(")", "a , or a closing )");
    }
    if (operands.size() < spec->min_operands || operands.size() > spec->max_operands)
      fail(fmt::format("{} takes {}, not {}", name, operand_count(*spec), operands.size()), start);
    auto made = node(Kind::kCall, name, std::move(operands));
    made->function = spec->function;
    return made;
  }

  static std::string operand_count(const FunctionSpec& spec) {
    if (spec.min_operands == spec.max_operands)
      return fmt::format("{} value{}", spec.min_operands, spec.min_operands == 1 ? "" : "s");
    return fmt::format("{} to {} values", spec.min_operands, spec.max_operands);
  }

  NodePtr feature(const std::string& name) {
    if (std::find(features_.begin(), features_.end(), name) == features_.end())
      features_.push_back(name);
    return node(Kind::kFeature, name, {});
  }

  void skip_space() {
    while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_]))) ++at_;
  }

  // The symbol next (after spaces), taken. Callers try longer symbols first ("<=" before "<"),
  // and "**" never reaches parse_product's "*": parse_power takes it right after its atom.
  bool take(const char* symbol) {
    skip_space();
    size_t length = std::strlen(symbol);
    if (text_.compare(at_, length, symbol) != 0) return false;
    at_ += length;
    return true;
  }

  template <size_t N>
  const char* take_any(const char* const (&symbols)[N]) {
    for (const char* symbol : symbols)
      if (take(symbol)) return symbol;
    return nullptr;
  }

  bool take_word(const char* word) {
    skip_space();
    size_t length = std::strlen(word);
    if (text_.compare(at_, length, word) != 0) return false;
    if (at_ + length < text_.size() && name_char(text_[at_ + length])) return false;
    at_ += length;
    return true;
  }

  void expect(const char* symbol, const char* what) {
    if (!take(symbol)) fail(std::string("expected ") + what + hint(), at_);
  }

  void descend(int depth) const {
    if (depth > kMaxExpressionDepth)
      fail(fmt::format("nested deeper than {} operations", kMaxExpressionDepth), at_);
  }

  // What a writer of Python or C may have meant at the current character.
  std::string hint() const {
    if (at_ >= text_.size()) return "";
    std::string rest = text_.substr(at_, 2);
    if (rest == "&&" || rest[0] == '&') return " (write `and`)";
    if (rest == "||" || rest[0] == '|') return " (write `or`)";
    if (rest[0] == '!') return " (write `not`)";
    if (rest[0] == '=') return " (compare with ==)";
    return "";
  }

  [[noreturn]] void fail(const std::string& problem, size_t at) const {
    throw ConfigError(path_, "",
                      fmt::format("expression \"{}\", at character {}: {}", text_,
                                  std::min(at, text_.size()) + 1, problem));
  }

  const std::string& text_;
  const std::string& path_;
  std::vector<std::string>& features_;
  size_t at_ = 0;
};

}  // namespace

std::shared_ptr<const Expression::Node> parse_expression(const std::string& text,
                                                         const std::string& path,
                                                         std::vector<std::string>& features) {
  return Parser(text, path, features).parse();
}

const std::vector<std::string>& expression_functions() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> all;
    for (const auto& spec : kFunctions) all.emplace_back(spec.name);
    return all;
  }();
  return names;
}

}  // namespace kiln::tabular
