#pragma once
// The value a derived feature's expression (expression.h) computes for a record: a number (whole
// or not), a text, or missing. Torch-free. Thread-safety: a value.

#include <string>

namespace kiln::tabular {

/// One value an expression computes.
struct Value {
  enum class Kind { kMissing, kNumber, kText };
  Kind kind = Kind::kMissing;
  double number = 0;
  bool whole = false;  // a whole number, written as an int64 feature
  std::string text;

  static Value missing() { return {}; }
  static Value of(double number, bool whole);
  static Value of_text(std::string text);
};

}  // namespace kiln::tabular
