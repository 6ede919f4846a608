#pragma once
// Golden values: tensors PyTorch computed (make_golden.py wrote them into the JSON files beside
// this header), and the helpers the golden tests share to build kiln components from the same
// config text and compare their tensors with PyTorch's.

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <map>
#include <string>
#include <vector>

#include "kiln/core/json.h"
#include "kiln/core/registry.h"
#include "tests/support/components.h"

namespace kiln::golden {

/// Float32 results of the same kernels may differ in the last bits (summation order), nothing more.
constexpr double kRelativeTolerance = 1e-5;
constexpr double kAbsoluteTolerance = 1e-6;

/// One of the JSON files make_golden.py writes, e.g. "optimizers.json".
Json load_golden(const std::string& file_name);

/// The entry of `cases` whose "name" is `name`; throws when there is none.
const Json& find_case(const Json& cases, const std::string& name);

/// The "name" of every entry of `cases`, in order: tests compare it with the cases they list, so
/// a case added to make_golden.py but not to a test fails instead of never running.
std::vector<std::string> case_names_in(const Json& cases);

/// Each tensor's shape, by name: what golden tests compare parameter and buffer lists by.
std::map<std::string, std::vector<int64_t>> shapes_of(
    const torch::OrderedDict<std::string, torch::Tensor>& tensors);

/// `{"shape": [...], "data": [...]}` as a float32 tensor.
torch::Tensor tensor_from(const Json& encoded);

/// Success when `actual` has `expected`'s shape and every element is within the tolerances;
/// otherwise the largest difference and where it is.
::testing::AssertionResult all_close(const torch::Tensor& actual, const torch::Tensor& expected,
                                     double relative = kRelativeTolerance,
                                     double absolute = kAbsoluteTolerance);

}  // namespace kiln::golden
