#pragma once
// Events holding one summary value each, in the forms TensorBoard's plugins read
// (docs/formats.md §3.3): scalars and text as TensorFlow 2 and Keras write them (a
// tensor with the plugin named in its metadata), histograms and images in the forms TensorBoard
// still reads and converts (HistogramProto, a PNG in Summary.Image), and SessionLog START, which
// makes TensorBoard drop what an interrupted process logged from that step on.
// Thread-safety: functions of their arguments.

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/io/image_codec.h"
#include "kiln/tensorboard/histogram.h"

namespace kiln::tensorboard {

namespace proto {
class Event;
}

proto::Event scalar_event(const std::string& tag, int64_t step, double wall_time, double value);
/// A float32 tensor of `shape` holding `values` (row-major) for the plugin `plugin`, whose
/// metadata content is `content`: how scalars and PR curves are stored.
proto::Event float_tensor_event(const std::string& tag, int64_t step, double wall_time,
                                const std::string& plugin, const std::string& content,
                                const std::vector<int64_t>& shape,
                                const std::vector<double>& values);
/// `markdown` as TensorBoard's text plugin renders it.
proto::Event text_event(const std::string& tag, int64_t step, double wall_time,
                        const std::string& markdown);
proto::Event histogram_event(const std::string& tag, int64_t step, double wall_time,
                             const Histogram& histogram);
/// An image of 1, 3 or 4 channels, stored as PNG.
proto::Event image_event(const std::string& tag, int64_t step, double wall_time,
                         const io::Image& image);
proto::Event session_start_event(int64_t step, double wall_time);

/// An event whose summary value carries a plugin's serialized data and an empty float tensor,
/// as TensorBoard's hparams writer makes it.
proto::Event plugin_event(const std::string& tag, double wall_time, const std::string& plugin,
                          const std::string& content);

}  // namespace kiln::tensorboard
