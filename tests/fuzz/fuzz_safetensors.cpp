// safetensors weights files (kiln reads its own and PyTorch's). Every tensor of a parsed file must
// lie inside the file's bytes (read here whole, for ASan to check), and a parsed file must
// serialize to one that parses back to the same tensors: kiln saves the weights it loads.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "kiln/core/error.h"
#include "kiln/io/safetensors.h"

namespace {

bool same_tensors(const kiln::io::SafeTensorsFile& a, const kiln::io::SafeTensorsFile& b) {
  if (a.metadata != b.metadata || a.tensors.size() != b.tensors.size()) return false;
  for (const auto& tensor : a.tensors) {
    const kiln::io::SafeTensor* other = b.find(tensor.name);
    if (!other || other->dtype != tensor.dtype || other->shape != tensor.shape ||
        std::string(reinterpret_cast<const char*>(other->data), other->size) !=
            std::string(reinterpret_cast<const char*>(tensor.data), tensor.size))
      return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kiln::io::SafeTensorsFile file;
  try {
    file = kiln::io::parse_safetensors(std::string(reinterpret_cast<const char*>(data), size),
                                       "fuzz.safetensors");
  } catch (const kiln::Error&) {
    return 0;
  }
  std::vector<kiln::io::SafeTensorView> views;
  for (const auto& t : file.tensors) views.push_back({t.name, t.dtype, t.shape, t.data, t.size});
  // Not inside the try: a file kiln wrote that kiln cannot read back is a finding.
  auto again = kiln::io::parse_safetensors(kiln::io::serialize_safetensors(views, file.metadata),
                                           "fuzz.safetensors (written back)");
  if (!same_tensors(file, again)) {
    std::fprintf(stderr, "a parsed safetensors file does not survive serialize -> parse\n");
    std::abort();
  }
  return 0;
}
