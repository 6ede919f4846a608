#pragma once
// The `padding` option of convolutions and pools: `same` (output size = input size / stride),
// `valid` (none), or a number of zeros on each side.

#include <cstdint>
#include <string>

#include "kiln/core/schema.h"

namespace kiln::models {

struct Padding {
  enum class Mode { kSame, kValid, kExplicit };
  Mode mode = Mode::kValid;
  int64_t amount = 0;

  /// Zeros per side for a window of `kernel` (dilated) at stride 1; throws for `same` with an even
  /// window, which cannot pad symmetrically.
  int64_t resolve(int64_t effective_kernel) const;
};

/// Output length of a window op: floor((in + 2 pad - dilation (k - 1) - 1) / stride) + 1, or 0
/// when not even one window fits (as PyTorch computes it).
int64_t window_output(int64_t in, int64_t kernel, int64_t stride, int64_t pad, int64_t dilation);

}  // namespace kiln::models

namespace kiln {
template <>
struct OptionTraits<models::Padding> {
  static void read(const Json& value, models::Padding& out, const ReadContext& ctx);
  static Json write(const models::Padding& value);
  static std::string type_name(const models::Padding&) { return "same | valid | integer"; }
};
}  // namespace kiln
