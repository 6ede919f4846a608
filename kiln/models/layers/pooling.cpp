#include "kiln/models/layers/pooling.h"

#include "kiln/models/layers/padding.h"

namespace kiln::models {

void PoolOptions::describe(Schema& s) {
  s.field("kernel", kernel, "Window size.").min(1);
  s.field("stride", stride, "Step between windows; 0 means the window size.").min(0);
  s.field("padding", padding, "Implicit padding on each side; at most kernel / 2.").min(0);
}

Shape pooled_shape(const Shape& input, const PoolOptions& o, const char* layer) {
  KILN_CHECK(input.size() == 2 || input.size() == 3,
             "{} expects inputs [channels, length] or [channels, height, width], got {}", layer,
             shape_text(input));
  KILN_CHECK(o.padding * 2 <= o.kernel, "{} padding {} exceeds half the kernel {}", layer,
             o.padding, o.kernel);
  Shape output = input;
  for (size_t d = 1; d < input.size(); ++d) {
    output[d] = window_output(input[d], o.kernel, o.effective_stride(), o.padding, 1);
    KILN_CHECK(output[d] > 0, "{} kernel {} does not fit inputs {}", layer, o.kernel,
               shape_text(input));
  }
  return output;
}

}  // namespace kiln::models
