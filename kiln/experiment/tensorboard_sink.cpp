#include "kiln/experiment/tensorboard_sink.h"

namespace kiln::experiment {

void TensorBoardSink::append(int64_t step, double, const std::string& tag, double value,
                             double wall_time) {
  size_t slash = tag.find('/');
  std::string split = slash == std::string::npos ? "" : tag.substr(0, slash);
  if (split == "train" || split == "val" || split == "test")
    log_.scalar(split, tag.substr(slash + 1), step, value, wall_time);
  else
    log_.scalar("train", tag, step, value, wall_time);
}

}  // namespace kiln::experiment
