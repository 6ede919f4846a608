// model.yaml's `signatures:` of an export's version folder, as `kiln serve` and `kiln predict`
// read them (serving/signature.cpp), given as JSON: any bytes give signatures or a kiln::Error.
// What is accepted writes back to the same signatures, and no output's dtype contradicts its op
// (a string where numbers are computed once crashed the server).

#include <cstdint>
#include <cstdlib>
#include <string>

#include "kiln/core/error.h"
#include "kiln/core/json_text.h"
#include "kiln/serving/signature.h"

using kiln::serving::DType;
using kiln::serving::OutputOp;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    kiln::Json json = kiln::parse_json_text(std::string(reinterpret_cast<const char*>(data), size));
    kiln::serving::Signatures signatures = kiln::serving::parse_signatures(json, "model.yaml");
    for (const auto& [name, signature] : signatures)
      for (const auto& [output, out] : signature.outputs)
        if ((out.spec.dtype == DType::kString) != (out.op == OutputOp::kArgmaxLabel))
          std::abort();  // text declared where numbers are computed, or the other way round
    kiln::Json written = kiln::serving::signatures_json(signatures);
    if (kiln::serving::signatures_json(kiln::serving::parse_signatures(written, "again")) !=
        written)
      std::abort();
  } catch (const kiln::JsonTextError&) {
  } catch (const kiln::Error&) {
  }
  return 0;
}
