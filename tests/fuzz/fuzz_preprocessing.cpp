// preprocessing.json, as a resumed run, `kiln predict` and `kiln serve` read it from a run or an
// export that may be damaged or edited by hand: any bytes give feature columns or a kiln::Error.
// What is accepted writes an input row of the width it states, and writes itself back the same.

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "kiln/core/error.h"
#include "kiln/core/json_text.h"
#include "kiln/tabular/feature_columns.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    kiln::Json json = kiln::parse_json_text(std::string(reinterpret_cast<const char*>(data), size));
    auto columns = kiln::tabular::FeatureColumns::from_preprocessing(json);
    if (columns->width() != json.at("width").get<int64_t>()) std::abort();
    if (columns->width() <= (int64_t{1} << 20)) {
      std::vector<float> row(size_t(columns->width()), -1.0f);
      try {
        columns->write({}, {"fuzz", 0, 0}, row.data());  // a record of no features
      } catch (const kiln::Error&) {
      }
    }
    if (kiln::tabular::FeatureColumns::from_preprocessing(columns->preprocessing())
            ->preprocessing() != columns->preprocessing())
      std::abort();
  } catch (const kiln::JsonTextError&) {
  } catch (const kiln::Error&) {
  }
  return 0;
}
