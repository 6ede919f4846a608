#include "kiln/models/layers/padding.h"

#include "kiln/core/error.h"

namespace kiln::models {

int64_t Padding::resolve(int64_t effective_kernel) const {
  switch (mode) {
    case Mode::kValid:
      return 0;
    case Mode::kExplicit:
      return amount;
    case Mode::kSame:
      KILN_CHECK(effective_kernel % 2 == 1, "padding: same needs an odd kernel size, got {}",
                 effective_kernel);
      return (effective_kernel - 1) / 2;
  }
  return 0;
}

int64_t window_output(int64_t in, int64_t kernel, int64_t stride, int64_t pad, int64_t dilation) {
  int64_t span = in + 2 * pad - dilation * (kernel - 1) - 1;
  // C++ division truncates toward zero: -1 / 2 would be 0 and report one window that is not there.
  if (span < 0) return 0;
  return span / stride + 1;
}

}  // namespace kiln::models

namespace kiln {

void OptionTraits<models::Padding>::read(const Json& value, models::Padding& out,
                                         const ReadContext& ctx) {
  if (value.is_string() && value == "same") {
    out = {models::Padding::Mode::kSame, 0};
  } else if (value.is_string() && value == "valid") {
    out = {models::Padding::Mode::kValid, 0};
  } else if (value.is_number_integer() && value.get<int64_t>() >= 0) {
    out = {models::Padding::Mode::kExplicit, value.get<int64_t>()};
  } else {
    ctx.fail("expected \"same\", \"valid\" or an integer >= 0, got " + value.dump());
  }
}

Json OptionTraits<models::Padding>::write(const models::Padding& value) {
  switch (value.mode) {
    case models::Padding::Mode::kSame:
      return "same";
    case models::Padding::Mode::kValid:
      return "valid";
    case models::Padding::Mode::kExplicit:
      return value.amount;
  }
  return nullptr;
}

}  // namespace kiln
