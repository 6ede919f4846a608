#include "kiln/models/torchscript_file.h"

#include <filesystem>
#include <sstream>

#include "kiln/core/error.h"
#include "kiln/core/text_file.h"

namespace kiln::models {
namespace {

// As large as any weights file kiln reads (io::kMaxWholeFileBytes).
constexpr size_t kMaxModuleBytes = size_t{4} << 30;

}  // namespace

torch::jit::Module read_torchscript(const std::string& path, torch::Device device) {
  if (!std::filesystem::exists(path))
    throw DataError(path, -1, -1, "missing: a TorchScript module saved by torch.jit.save");
  std::istringstream bytes(read_whole_file(path, kMaxModuleBytes));
  try {
    return torch::jit::load(bytes, device);
  } catch (const std::exception& e) {  // c10::Error, and the zip reader's own
    std::string message = e.what();
    throw DataError(path, -1, -1,
                    "is not a TorchScript model that torch.jit.load reads: " +
                        message.substr(0, message.find('\n')));
  }
}

std::string script_error_text(const std::exception& error) {
  std::string message = error.what();
  size_t raised = message.rfind("Error: ");
  size_t from = raised == std::string::npos ? 0 : message.rfind('\n', raised);
  from = from == std::string::npos || raised == std::string::npos ? 0 : from + 1;
  size_t to = message.find('\n', from);
  return message.substr(from, to == std::string::npos ? std::string::npos : to - from);
}

std::string torchscript_bytes(const torch::jit::Module& module) {
  std::ostringstream out;
  module.save(out);
  return out.str();
}

}  // namespace kiln::models
