#include "tests/support/tensorboard_view.h"

#include <algorithm>

#include "tests/support/event_file_reader.h"

namespace kiln::testing {
namespace {

void drop_from(std::vector<std::pair<int64_t, double>>& points, int64_t step) {
  points.erase(std::remove_if(points.begin(), points.end(),
                              [step](const auto& point) { return point.first >= step; }),
               points.end());
}

bool is_scalar(const DecodedValue& value) {
  return value.plugin == "scalars" || (value.simple_value && value.plugin.empty());
}

}  // namespace

ScalarSeries tensorboard_scalars(const std::string& directory) {
  ScalarSeries series;
  for (const std::string& file : event_files_in(directory)) {
    for (const DecodedEvent& event : read_event_file(file)) {
      if (event.session_status == 1) {  // START
        for (auto& [tag, points] : series) drop_from(points, event.step);
        continue;
      }
      for (const DecodedValue& value : event.values)
        if (is_scalar(value)) series[value.tag].emplace_back(event.step, scalar_of(value));
    }
  }
  return series;
}

}  // namespace kiln::testing
