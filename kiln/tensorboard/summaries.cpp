#include "kiln/tensorboard/summaries.h"

#include <cstring>

#include "kiln/core/error.h"
#include "kiln/tensorboard/proto/event.pb.h"

namespace kiln::tensorboard {
namespace {

proto::Event event_at(int64_t step, double wall_time) {
  proto::Event event;
  event.set_wall_time(wall_time);
  event.set_step(step);
  return event;
}

proto::Summary::Value& value_of(proto::Event& event, const std::string& tag,
                                const std::string& plugin) {
  proto::Summary::Value& value = *event.mutable_summary()->add_value();
  value.set_tag(tag);
  value.mutable_metadata()->mutable_plugin_data()->set_plugin_name(plugin);
  return value;
}

}  // namespace

proto::Event scalar_event(const std::string& tag, int64_t step, double wall_time, double value) {
  return float_tensor_event(tag, step, wall_time, "scalars", "", {}, {value});
}

proto::Event float_tensor_event(const std::string& tag, int64_t step, double wall_time,
                                const std::string& plugin, const std::string& content,
                                const std::vector<int64_t>& shape,
                                const std::vector<double>& values) {
  proto::Event event = event_at(step, wall_time);
  proto::Summary::Value& value = value_of(event, tag, plugin);
  if (!content.empty()) value.mutable_metadata()->mutable_plugin_data()->set_content(content);
  proto::TensorProto& tensor = *value.mutable_tensor();
  tensor.set_dtype(proto::DT_FLOAT);
  tensor.mutable_tensor_shape();  // rank 0: present and empty
  for (int64_t size : shape) tensor.mutable_tensor_shape()->add_dim()->set_size(size);
  std::string bytes(values.size() * sizeof(float), '\0');
  for (size_t i = 0; i < values.size(); ++i) {
    auto single = static_cast<float>(values[i]);
    // little-endian on every platform kiln runs on
    std::memcpy(&bytes[i * sizeof single], &single, sizeof single);
  }
  tensor.set_tensor_content(bytes);
  return event;
}

proto::Event text_event(const std::string& tag, int64_t step, double wall_time,
                        const std::string& markdown) {
  proto::Event event = event_at(step, wall_time);
  proto::TensorProto& tensor = *value_of(event, tag, "text").mutable_tensor();
  tensor.set_dtype(proto::DT_STRING);
  tensor.mutable_tensor_shape();
  tensor.add_string_val(markdown);
  return event;
}

proto::Event histogram_event(const std::string& tag, int64_t step, double wall_time,
                             const Histogram& histogram) {
  proto::Event event = event_at(step, wall_time);
  histogram.write_to(*value_of(event, tag, "histograms").mutable_histo());
  return event;
}

proto::Event image_event(const std::string& tag, int64_t step, double wall_time,
                         const io::Image& image) {
  KILN_ASSERT(image.channels == 1 || image.channels == 3 || image.channels == 4);
  proto::Event event = event_at(step, wall_time);
  proto::Summary::Image& out = *value_of(event, tag, "images").mutable_image();
  out.set_height(static_cast<int32_t>(image.height));
  out.set_width(static_cast<int32_t>(image.width));
  out.set_colorspace(static_cast<int32_t>(image.channels));  // 1 grey, 3 RGB, 4 RGBA
  out.set_encoded_image_string(io::encode_png(image));
  return event;
}

proto::Event session_start_event(int64_t step, double wall_time) {
  proto::Event event = event_at(step, wall_time);
  event.mutable_session_log()->set_status(proto::SessionLog::START);
  return event;
}

proto::Event plugin_event(const std::string& tag, double wall_time, const std::string& plugin,
                          const std::string& content) {
  proto::Event event = event_at(0, wall_time);
  proto::Summary::Value& value = value_of(event, tag, plugin);
  value.mutable_metadata()->mutable_plugin_data()->set_content(content);
  proto::TensorProto& tensor = *value.mutable_tensor();
  tensor.set_dtype(proto::DT_FLOAT);
  tensor.mutable_tensor_shape()->add_dim()->set_size(0);
  return event;
}

}  // namespace kiln::tensorboard
