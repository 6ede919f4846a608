#include "kiln/serving/prediction_api.h"

#include <fmt/format.h>

#include <utility>

#include "kiln/serving/serving_error.h"

namespace kiln::serving {

const ExampleEncoder& examples_encoder(const FoundVersion& found, const std::string& model,
                                       ExamplesApi api) {
  if (const ExampleEncoder* encoder = found.servable->examples()) return *encoder;
  bool rest = api == ExamplesApi::kRest;
  throw ServingError(
      StatusCode::kInvalidArgument,
      fmt::format("model {} reads tensors, not examples of named features: {} answer models "
                  "trained on feature columns (data.columns); use {}",
                  model, rest ? ":classify and :regress" : "Classify and Regress",
                  rest ? ":predict" : "Predict"));
}

void submit(FoundVersion found, const std::string& signature, HostTensors inputs,
            net::Abandoned abandoned, Ran ran) {
  Servable& servable = *found.servable;
  servable.predict_async(
      signature, std::move(inputs),
      [ran = std::move(ran), hold = std::move(found.servable)](HostTensors outputs,
                                                               std::exception_ptr error) mutable {
        ran(std::move(outputs), error, std::move(hold));
      },
      std::move(abandoned));
}

}  // namespace kiln::serving
