#include "tests/golden/golden.h"

#include <cerrno>
#include <fstream>

#include "kiln/core/config.h"
#include "kiln/core/error.h"

namespace kiln::golden {

Json load_golden(const std::string& file_name) {
  const std::string path = std::string(KILN_GOLDEN_DIR) + "/" + file_name;
  std::ifstream in(path);
  if (!in) throw IoError("read golden file", path, errno);
  return Json::parse(in);
}

const Json& find_case(const Json& cases, const std::string& name) {
  for (const Json& c : cases)
    if (c.at("name") == name) return c;
  throw InternalError("no golden case named \"" + name + "\"; re-run make_golden.py?");
}

std::vector<std::string> case_names_in(const Json& cases) {
  std::vector<std::string> names;
  for (const Json& golden_case : cases) names.push_back(golden_case.at("name").get<std::string>());
  return names;
}

torch::Tensor tensor_from(const Json& encoded) {
  auto data = encoded.at("data").get<std::vector<float>>();
  auto shape = encoded.at("shape").get<std::vector<int64_t>>();
  return torch::tensor(data, torch::kFloat32).reshape(shape);
}

std::map<std::string, std::vector<int64_t>> shapes_of(
    const torch::OrderedDict<std::string, torch::Tensor>& tensors) {
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const auto& item : tensors) shapes[item.key()] = item.value().sizes().vec();
  return shapes;
}

::testing::AssertionResult all_close(const torch::Tensor& actual, const torch::Tensor& expected,
                                     double relative, double absolute) {
  if (actual.sizes() != expected.sizes()) {
    return ::testing::AssertionFailure()
           << "shape " << actual.sizes() << ", PyTorch's is " << expected.sizes();
  }
  torch::Tensor kiln_values = actual.detach().to(torch::kFloat64).flatten();
  torch::Tensor torch_values = expected.to(torch::kFloat64).flatten();
  torch::Tensor excess =
      (kiln_values - torch_values).abs() - (absolute + relative * torch_values.abs());
  // Written so that a NaN fails: it is not <= 0.
  if ((excess <= 0).all().item<bool>()) return ::testing::AssertionSuccess();
  int64_t worst = excess.argmax().item<int64_t>();
  return ::testing::AssertionFailure()
         << "element " << worst << " (flat) of " << expected.sizes() << ": kiln "
         << kiln_values[worst].item<double>() << ", PyTorch " << torch_values[worst].item<double>();
}

}  // namespace kiln::golden
